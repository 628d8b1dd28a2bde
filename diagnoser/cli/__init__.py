"""The `ladder` command line.

Subcommands live next to the code they drive and are imported only when invoked, so that
`ladder bench` on a GPU machine needs nothing beyond torch, triton and click, and `ladder --help`
stays fast (no index or embedding model import).
"""
from __future__ import annotations

import importlib

import click

# name -> "module:attribute" of a click command or group.
SUBCOMMANDS = {
    "bench": "runner.cli:bench",
    "suite": "diagnoser.cli.suite:suite",
    "index": "indexer.cli:index",
    "query": "indexer.cli:query",
    "ir": "diagnoser.ir.cli:ir",
    "explain": "diagnoser.triage.cli:explain",
    "kb": "diagnoser.triage.cli:kb",
    "diagnose": "diagnoser.cli.diagnose:diagnose",
    "optimize": "diagnoser.optimize.cli:optimize",
    "mcp": "diagnoser.mcp.cli:mcp",
    "setup": "diagnoser.cli.setup:setup",
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
