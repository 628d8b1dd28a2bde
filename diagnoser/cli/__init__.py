"""The `ladder` command line: every command is a module of this package.

Commands are imported only when invoked, so that
`ladder bench` on a GPU machine needs nothing beyond torch, triton and click, and `ladder --help`
stays fast (no index or embedding model import).
"""
from __future__ import annotations

import importlib

import click

# name -> "module:attribute" of a click command or group.
SUBCOMMANDS = {
    "bench": "diagnoser.cli.bench:bench",
    "suite": "diagnoser.cli.suite:suite",
    "index": "diagnoser.cli.index:index",
    "query": "diagnoser.cli.index:query",
    "ir": "diagnoser.cli.ir:ir",
    "explain": "diagnoser.cli.kb:explain",
    "kb": "diagnoser.cli.kb:kb",
    "diagnose": "diagnoser.cli.diagnose:diagnose",
    "optimize": "diagnoser.cli.optimize:optimize",
    "mcp": "diagnoser.mcp.cli:mcp",
}


class LazyGroup(click.Group):
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
def main() -> None:
    """Make Triton kernels fast by diagnosing before rewriting."""
