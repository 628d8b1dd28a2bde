"""What every `ladder` command is: its work quarantined, its ending the convention's.

`LadderCommand` is a leaf command: while its callback runs, standard output belongs to ladder's
result alone (`streams.quarantine`; the command writes its result with `streams.echo`). Parsing
and `--help` happen before, on the real standard output. `LadderGroup` makes its subcommands
`LadderCommand`s, and `RootGroup` (the `ladder` group) ends every command in one place
(`errors.handled`): its status, its one-line message, and under `--json` that message as JSON.
"""
from __future__ import annotations

import click

from ladder.diagnoser.cli import errors, logs, streams

VERBOSITY = "ladder.verbosity"  # set by the root group in the context's meta (shared by every subcommand)
JSON = "ladder.json"


class LadderCommand(click.Command):
    def invoke(self, ctx: click.Context):
        if VERBOSITY not in ctx.meta:  # invoked on its own, not through `ladder`
            logs.configure(logs.NORMAL)
        with streams.quarantine():
            return super().invoke(ctx)


class LadderGroup(click.Group):
    command_class = LadderCommand
    group_class = type  # a group made in a LadderGroup is one too


class RootGroup(LadderGroup):
    """The `ladder` group: `-v`/`-q` for every command and the one door every command ends through."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        ctx.meta[JSON] = wants_json(args)
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context):
        with errors.handled(ctx.meta.get(JSON, False)):
            return super().invoke(ctx)


def wants_json(args: list[str]) -> bool:
    """Whether the command line asks for JSON (`--json` before any `--`), known before it is parsed,
    so that even a usage error comes back as JSON."""
    options = args[:args.index("--")] if "--" in args else args
    return "--json" in options
