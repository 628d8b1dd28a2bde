"""Commands of the triage rung: `ladder explain ID` and `ladder kb list|learn`."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import click

from diagnoser.triage.catalog import CatalogError, load_catalog, render


@click.command()
@click.argument("pattern_id")
@click.option("--k", default=5, show_default=True, help="Compiler chunks to retrieve from the index.")
@click.option("--index-dir", default=None, help="Where the knowledge index lives (default: the indexer's).")
@click.option("--suite-summary", type=click.Path(path_type=Path), default=None,
              help="Saved suite triage (default bench/results/triage-suite.json).")
@click.option("--no-suite", is_flag=True, help="Do not look for the pattern in the suite.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def explain(pattern_id: str, k: int, index_dir: Optional[str], suite_summary: Optional[Path], no_suite: bool,
            as_json: bool) -> None:
    """Why pattern PATTERN_ID is slow: the catalog entry, the compiler code behind it, and where it
    fired in the suite."""
    from diagnoser.triage import explain as ex

    try:
        pattern = ex.find_pattern(pattern_id)
    except CatalogError as error:
        raise click.ClickException(str(error)) from None
    chunks, why_not = ex.retrieve(pattern, k=k, index_dir=index_dir)
    hits, hits_source = [], "not looked up"
    if not no_suite:
        def bar(items):
            return click.progressbar(items, label="triage over kernels/", file=click.get_text_stream("stderr"))

        hits, hits_source = ex.suite_hits(pattern.id, suite_summary or ex.SUITE_SUMMARY,
                                          progress=None if as_json else bar)
    if as_json:
        click.echo(json.dumps({
            "pattern": {"id": pattern.id, "title": pattern.title, "backend": pattern.backend,
                        "symptom": pattern.symptom, "detect": pattern.detect, "fix": pattern.fix,
                        "compiler": pattern.compiler, "confidence": pattern.confidence, "status": pattern.status},
            "citations": [{k_: c.get(k_) for k_ in ("path", "start", "end", "pass", "score", "text")} for c in chunks],
            "index": why_not, "suite": {"source": hits_source, "hits": hits},
        }, indent=1))
        return
    click.echo(render(pattern))
    click.echo("\nCompiler references (catalog):")
    click.echo("\n".join(ex.static_references(pattern)))
    click.echo("\nRetrieved from the index:")
    if why_not:
        click.echo(f"  {why_not}")
    elif not chunks:
        click.echo("  nothing retrieved")
    for chunk in chunks:
        click.echo(ex.chunk_citation(chunk))
        snippet = [line for line in (chunk.get("text") or "").splitlines() if line.strip()][:4]
        for line in snippet:
            click.echo(f"      {line[:110]}")
    if not no_suite:
        click.echo(f"\nIn the suite ({hits_source}):")
        if not hits:
            click.echo("  did not fire")
        for hit in hits:
            click.echo(f"  {hit['kernel']}: {hit['function']} line {hit['line']} "
                       f"(confidence {hit['confidence']}): {hit['title']}")


@click.group()
def kb() -> None:
    """The pattern catalog: list it, validate it, learn draft entries from optimization journals."""


@kb.command("list")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def list_patterns(as_json: bool) -> None:
    """Every catalog id with its backend, title and whether a mechanical fix exists."""
    try:
        catalog = load_catalog()
    except CatalogError as error:
        raise click.ClickException(str(error)) from None
    if as_json:
        click.echo(json.dumps([{"id": p.id, "backend": p.backend, "title": p.title, "status": p.status,
                                "mechanical": p.mechanical, "detectors": p.detectors} for p in catalog.values()],
                              indent=1))
        return
    for p in catalog.values():
        mark = "fix" if p.mechanical else "   "
        click.echo(f"{p.id:28s} {p.backend:7s} {mark}  {p.title}" + ("  [draft]" if p.status == "draft" else ""))


@kb.command("check")
@click.option("--source", "tree", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
              help="A Triton / Triton-Ascend source tree to check the compiler references against.")
def check(tree: Optional[Path]) -> None:
    """Validate every entry (schema, detectors, fixes) and, with --source, its compiler references."""
    from diagnoser.triage.catalog import check_compiler_refs

    try:
        catalog = load_catalog()
    except CatalogError as error:
        raise click.ClickException(str(error)) from None
    problems = check_compiler_refs(catalog, tree) if tree else []
    for problem in problems:
        click.echo(problem)
    click.echo(f"{len(catalog)} entries valid" + (f", {len(problems)} reference problem(s)" if tree else ""))
    if problems:
        raise SystemExit(1)


@kb.command("learn")
@click.argument("journal", type=click.Path(path_type=Path))
@click.option("--round", "round_", type=int, default=None, help="The round to learn from (default: the best accepted one).")
@click.option("--id", "pattern_id", default=None, help="Id for the draft entry (default: derived from the fix).")
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="Where to write the draft (default kb/patterns/drafts/<id>.yaml; '-' for stdout).")
def learn(journal: Path, round_: Optional[int], pattern_id: Optional[str], out: Optional[Path]) -> None:
    """Turn a verified, accepted fix from an optimization JOURNAL into a draft catalog entry.

    Given a folder of runs (``ladder suite --optimize --out``), every accepted round of every journal
    in it: a draft for each fix no catalog entry covers yet, and a line for each that one does.
    """
    from diagnoser.triage.learn import LearnError, draft_from_journal, learn_from_runs, write_draft

    if journal.is_dir():
        for entry in learn_from_runs(journal):
            where = f"{entry['journal']} round {entry['round']}"
            if "covered_by" in entry:
                click.echo(f"{where}: covered by {', '.join(entry['covered_by'])} ({entry['summary']})")
            elif "draft" in entry:
                click.echo(f"{where}: draft {entry['draft']['id']} written to {write_draft(entry['draft'], None)}")
            else:
                click.echo(f"{where}: nothing to learn ({entry['not_learned']})")
        return
    try:
        draft = draft_from_journal(journal, round_, pattern_id)
        where = write_draft(draft, out)
    except LearnError as error:
        raise click.ClickException(str(error)) from None
    if where is None:
        return
    click.echo(f"draft entry {draft['id']} written to {where} (status: draft; review, add a detector, then "
               "move it to kb/patterns/)")
