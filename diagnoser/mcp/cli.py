"""``ladder mcp [--run RUN]``: serve the MCP tools on standard input and output."""
from __future__ import annotations

from pathlib import Path

import click


@click.command("mcp")
@click.option("--run", type=click.Path(file_okay=False, path_type=Path),
              help="The optimization run (RUN of `ladder optimize --proposer agent --out RUN`) that the brief, "
                   "submit and status tools and the run resources serve when a call names none.")
def mcp(run: Path | None) -> None:
    """Serve ladder's tools to an MCP client over stdio (the client starts this command)."""
    from ladder.diagnoser.mcp.server import build

    build(run.resolve() if run else None).run("stdio")
