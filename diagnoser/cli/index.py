"""`ladder index build|status` and `ladder query`.

User mistakes (a missing source, no index yet, a corrupt index, a build already running) end with
one line saying what to do, not a traceback, and exit status 3 (an empty question, a filter that
does not exist: 2); with --json, that line is a JSON object (`{"error", "kind", "exit_code"}`,
the kind being the indexer's error class: `IndexMissing`, `IndexCorrupt` ...) on standard output.
"""
from __future__ import annotations

import contextlib
import json
import sys
import time

import click

from ladder.diagnoser.cli import logs
from ladder.diagnoser.cli.command import LadderCommand, LadderGroup
from ladder.diagnoser.cli.errors import USAGE, CannotRun
from ladder.diagnoser.cli.streams import echo
from ladder.indexer.errors import IndexerError
from ladder.indexer.store import COMPILER_LAYOUT

NO_COMPILER_SOURCE = ("no compiler C++ indexed: add a Triton checkout with "
                      "`ladder index build --source triton=PATH/TO/triton` (or triton-ascend)")
_INDEX_DIR = click.option("--index-dir", envvar="LADDER_INDEX_DIR", type=click.Path(file_okay=False),
                          help="Index location (default: $LADDER_INDEX_DIR or ~/.cache/ladder/index).")


@contextlib.contextmanager
def _user_errors():
    try:
        yield
    except IndexerError as error:
        raise CannotRun(str(error), kind=type(error).__name__) from None
    except ValueError as error:  # the question or its filters
        raise CannotRun(str(error), kind=type(error).__name__, exit_code=USAGE) from None


class _Progress:
    """Counts, share done and time left on standard error: a bar on a terminal, else a line every
    EVERY seconds (a build run from a script or CI still says how far it is)."""

    EVERY = 10.0

    def __init__(self, label: str, total: int):
        self.label, self.total, self.done = label, total, 0
        self.started = self.shown = time.monotonic()

    def update(self, n: int) -> None:
        self.done += n
        now = time.monotonic()
        if now - self.shown >= self.EVERY or self.done == self.total:
            self.shown = now
            click.echo(f"{self.label} {self.done}/{self.total} ({100 * self.done // self.total}%), "
                       f"{self.eta(now)}", err=True)

    def eta(self, now: float) -> str:
        elapsed = now - self.started
        if self.done >= self.total:
            return f"done in {elapsed:.0f}s"
        left = elapsed / max(self.done, 1) * (self.total - self.done)
        return f"about {left:.0f}s left"


@contextlib.contextmanager
def _progress_bar(label: str, total: int):
    if total == 0 or not logs.progress_shown():
        from ladder.indexer.build import no_progress

        with no_progress(label, total) as silent:
            yield silent
        return
    if not sys.stderr.isatty():
        yield _Progress(label, total)
        return
    with click.progressbar(length=total, label=f"{label:<10}", file=sys.stderr, show_pos=True,
                           show_eta=True, show_percent=True) as bar:
        yield bar


@click.group(cls=LadderGroup)
def index() -> None:
    """Build and inspect the local index of compiler source, pass descriptions and the catalog."""


@index.command()
@click.option("--source", "sources", multiple=True, metavar="[NAME=]PATH",
              help="A compiler source tree, an installed triton package or a folder of notes; repeat for "
                   "several. Default: the trees already indexed, else kb/ and the installed triton.")
@click.option("--rebuild", is_flag=True, help="Build from scratch (re-chunk and re-embed everything), keeping "
              "the trees already indexed unless --source names others; the way back from a damaged index.")
@click.option("--embed", "embed_spec", metavar="SPEC",
              help="Embedding model: minilm (default, bundled, offline), hf:PATH, openai:MODEL, "
                   "python:MODULE:ATTR. Default: the index's own, else $LADDER_EMBED.")
@click.option("--json", "as_json", is_flag=True, help="Print the build report as JSON.")
@_INDEX_DIR
def build(sources: tuple[str, ...], rebuild: bool, embed_spec: str | None, as_json: bool,
          index_dir: str | None) -> None:
    """Index source trees incrementally (by content hash); the old index stays usable until done."""
    from ladder.indexer.build import build as run_build
    from ladder.indexer.sources import default_sources

    with _user_errors():
        if sources:
            # The catalog is always part of the index.
            default_kb = default_sources()[0]
            if not any(s.startswith("kb=") for s in sources):
                sources = (default_kb,) + sources
        report = run_build(list(sources) or None, index_dir=index_dir, rebuild=rebuild,
                           embed_spec=embed_spec, progress=_progress_bar)
    if as_json:
        echo(json.dumps(report.to_json(), indent=1))
        return
    for note in report.notes:
        echo(note)
    if report.up_to_date:
        echo(f"index at {report.index_dir} is up to date ({report.chunks} chunks, {report.seconds:.1f}s)")
        return
    echo(f"built {report.build} in {report.seconds:.1f}s: {report.files} files, {report.chunks} chunks; "
               f"{report.changed_files} files (re)indexed, {report.removed_files} removed, "
               f"{report.embedded_chunks} chunks embedded, {report.reused_vectors} vectors reused")
    for name, tree in report.trees.items():
        echo(_tree_line(name, tree))
    if not any(tree.get("layout") == COMPILER_LAYOUT for tree in report.trees.values()):
        echo(NO_COMPILER_SOURCE)


def _tree_line(name: str, tree: dict) -> str:
    skipped = ", ".join(f"{n} {why}" for why, n in sorted(tree.get("skipped", {}).items()))
    commit = f"  commit {tree['commit'][:12]} of {tree['date']}" if tree.get("commit") else ""
    return (f"  {name:<16} {tree['version']:<22} {tree['files']:>5} files {tree['chunks']:>6} chunks  "
            f"{tree['root']}{commit}" + (f"  (skipped: {skipped})" if skipped else ""))


@index.command()
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
@_INDEX_DIR
def status(as_json: bool, index_dir: str | None) -> None:
    """What is indexed, from which trees and versions, when, and how many chunks."""
    from ladder.indexer.status import status as read_status

    with _user_errors():
        info = read_status(index_dir)
    if as_json:
        echo(json.dumps(info, indent=1))
        return
    echo(f"index    {info['index_dir']}")
    echo(f"build    {info['build']} ({info['created']})")
    echo(f"model    {info['embed']}")
    echo(f"chunks   {info['chunks']} from {info['files']} files; {info['passes']} pass definitions")
    for name, tree in info["trees"].items():
        echo(_tree_line(name, tree))
        if tree.get("now"):
            echo(f"    now {tree['now']} on disk: run `ladder index build` to update")
    if not info["compiler_source"]:
        echo(NO_COMPILER_SOURCE)


@click.command(cls=LadderCommand)
@click.argument("question")
@click.option("--k", default=5, show_default=True, type=click.IntRange(min=1), help="How many chunks.")
@click.option("--json", "as_json", is_flag=True, help="Print results as a JSON list, best first.")
@click.option("--backend", type=click.Choice(["nvidia", "ascend", "amd", "gpu", "common"]),
              help="Only this backend's code (plus what it compiles through: code shared by all backends, "
                   "and TritonGPU for nvidia and amd).")
@click.option("--tree", help="Only this indexed tree (see `ladder index status`).")
@click.option("--language", type=click.Choice(["cpp", "c", "python", "tablegen", "markdown", "yaml"]))
@click.option("--min-score", type=float, default=None,
              help="Leave out results scoring below this (default: the reranker's relevance threshold; 0 keeps all).")
@_INDEX_DIR
def query(question: str, k: int, as_json: bool, backend: str | None, tree: str | None,
          language: str | None, min_score: float | None, index_dir: str | None) -> None:
    """The compiler source, pass descriptions and catalog entries that answer QUESTION."""
    from ladder.indexer.rerank import MIN_RELEVANCE
    from ladder.indexer.retrieve import search

    where = {key: value for key, value in (("backend", backend), ("tree", tree), ("language", language)) if value}
    with _user_errors():
        hits = search(question, k=k, where=where or None, index_dir=index_dir,
                      min_score=MIN_RELEVANCE if min_score is None else min_score)
    if as_json:
        echo(json.dumps(hits, indent=1))
        return
    if not hits:
        echo("nothing in the index is relevant enough (see --min-score)")
    for rank, hit in enumerate(hits, 1):
        echo(click.style(f"{rank}. {hit['path']}:{hit['start']}-{hit['end']}", bold=True), nl=False)
        echo(f"  pass={hit['pass'] or '-'}  score={hit['score']:.4f}  [{hit['tree']}] {hit['symbol']}")
        for line in hit["text"].split("\n")[:8]:
            echo(f"     {line[:120]}")
        echo()
