"""The `ladder` command line: every command is a module of this package.

Commands are imported only when invoked, so that `ladder bench` on a GPU machine needs nothing
beyond torch, triton and click, and `ladder --help` stays fast (no index or embedding model
import). What all of them share is here too: where output goes (`streams`), how a command ends
(`errors`: the exit-status convention, errors as one line or JSON), `-v`/`-q` (`logs`), and the
command classes that apply them (`command`).
"""
from __future__ import annotations

import importlib

import click

from ladder.diagnoser.cli import logs
from ladder.diagnoser.cli.command import VERBOSITY, RootGroup

# name -> "module:attribute" of a click command or group.
SUBCOMMANDS = {
    "bench": "ladder.diagnoser.cli.bench:bench",
    "suite": "ladder.diagnoser.cli.suite:suite",
    "index": "ladder.diagnoser.cli.index:index",
    "query": "ladder.diagnoser.cli.index:query",
    "ir": "ladder.diagnoser.cli.ir:ir",
    "explain": "ladder.diagnoser.cli.kb:explain",
    "kb": "ladder.diagnoser.cli.kb:kb",
    "diagnose": "ladder.diagnoser.cli.diagnose:diagnose",
    "optimize": "ladder.diagnoser.cli.optimize:optimize",
    "mcp": "ladder.diagnoser.mcp.cli:mcp",
    "setup": "ladder.diagnoser.cli.setup:setup",
}


class LazyGroup(RootGroup):
    """A click group whose subcommands are imported on first use (the pattern from click's docs)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(SUBCOMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        target = SUBCOMMANDS.get(name)
        if target is None:
            return None
        module_name, attribute = target.split(":")
        return getattr(importlib.import_module(module_name), attribute)


@click.group(cls=LazyGroup)
@click.version_option(package_name="ladder")
@click.option("-v", "--verbose", count=True, help="Also show debug messages (and, for an error in ladder, its traceback).")
@click.option("-q", "--quiet", is_flag=True, help="Show only warnings and errors on standard error (no progress).")
@click.pass_context
def main(ctx: click.Context, verbose: int, quiet: bool) -> None:
    """Make Triton kernels fast by diagnosing before rewriting.

    Every command prints its result on standard output (with --json, one JSON document, errors
    included) and its progress on standard error. Exit status: 0 done, 1 negative verdict,
    2 usage error, 3 could not run (no Triton launch, a rung failed, backend unavailable),
    4 an error in ladder, 130 interrupted.
    """
    verbosity = logs.QUIET if quiet else min(verbose, logs.VERBOSE)
    ctx.meta[VERBOSITY] = verbosity
    logs.configure(verbosity)
