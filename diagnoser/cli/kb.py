"""Commands of the triage rung: `ladder explain ID` and `ladder kb list|check|learn`.

Exit status (``ladder.diagnoser.cli.errors``): an unknown pattern id is a usage error (2); a catalog that
does not load, 3, except for `kb check`, whose negative verdict (entries or references invalid) is
1; so is a journal round `kb learn` cannot learn from.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from ladder.diagnoser.cli import logs
from ladder.diagnoser.cli.command import LadderCommand, LadderGroup
from ladder.diagnoser.cli.errors import NEGATIVE, USAGE, CannotRun, Refused
from ladder.diagnoser.cli.streams import echo
from ladder.diagnoser.triage.catalog import CatalogError, Pattern, load_catalog, render


def _catalog() -> dict[str, Pattern]:
    try:
        return load_catalog()
    except CatalogError as error:
        raise CannotRun(str(error), kind="CatalogError") from None


@click.command(cls=LadderCommand)
@click.argument("pattern_id")
@click.option("--k", default=5, show_default=True, help="Compiler chunks to retrieve from the index.")
@click.option("--index-dir", default=None, help="Where the knowledge index lives (default: the indexer's).")
@click.option("--suite-summary", type=click.Path(path_type=Path), default=None,
              help="Saved suite triage (default bench/results/triage-suite.json).")
@click.option("--no-suite", is_flag=True, help="Do not look for the pattern in the suite.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def explain(pattern_id: str, k: int, index_dir: str | None, suite_summary: Path | None, no_suite: bool,
            as_json: bool) -> None:
    """Why pattern PATTERN_ID is slow: the catalog entry, the compiler code behind it, and where it
    fired in the suite."""
    from ladder.diagnoser.triage import explain as ex

    try:
        pattern = ex.find_pattern(pattern_id)
    except CatalogError as error:
        raise CannotRun(str(error), kind="UnknownPattern", exit_code=USAGE) from None
    chunks, why_not = ex.retrieve(pattern, k=k, index_dir=index_dir)
    hits, hits_source = [], "not looked up"
    if not no_suite:
        def bar(items):
            return click.progressbar(items, label="triage over kernels/", file=click.get_text_stream("stderr"))

        hits, hits_source = ex.suite_hits(pattern.id, suite_summary or ex.SUITE_SUMMARY,
                                          progress=bar if logs.progress_shown() and not as_json else None)
    if as_json:
        echo(json.dumps({
            "pattern": {"id": pattern.id, "title": pattern.title, "backend": pattern.backend,
                        "symptom": pattern.symptom, "detect": pattern.detect, "fix": pattern.fix,
                        "compiler": pattern.compiler, "confidence": pattern.confidence, "status": pattern.status},
            "citations": [{k_: c.get(k_) for k_ in ("path", "start", "end", "pass", "score", "text")} for c in chunks],
            "index": why_not, "suite": {"source": hits_source, "hits": hits},
        }, indent=1))
        return
    echo(render(pattern))
    echo("\nCompiler references (catalog):")
    echo("\n".join(ex.static_references(pattern)))
    echo("\nRetrieved from the index:")
    if why_not:
        echo(f"  {why_not}")
    elif not chunks:
        echo("  nothing retrieved")
    for chunk in chunks:
        echo(ex.chunk_citation(chunk))
        snippet = [line for line in (chunk.get("text") or "").splitlines() if line.strip()][:4]
        for line in snippet:
            echo(f"      {line[:110]}")
    if not no_suite:
        echo(f"\nIn the suite ({hits_source}):")
        if not hits:
            echo("  did not fire")
        for hit in hits:
            echo(f"  {hit['kernel']}: {hit['function']} line {hit['line']} "
                       f"(confidence {hit['confidence']}): {hit['title']}")


@click.group(cls=LadderGroup)
def kb() -> None:
    """The pattern catalog: list it, validate it, learn draft entries from optimization journals."""


@kb.command("list")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def list_patterns(as_json: bool) -> None:
    """Every catalog id with its backend, title and whether a mechanical fix exists."""
    catalog = _catalog()
    if as_json:
        echo(json.dumps([{"id": p.id, "backend": p.backend, "title": p.title, "status": p.status,
                                "mechanical": p.mechanical, "detectors": p.detectors} for p in catalog.values()],
                              indent=1))
        return
    for p in catalog.values():
        mark = "fix" if p.mechanical else "   "
        echo(f"{p.id:28s} {p.backend:7s} {mark}  {p.title}" + ("  [draft]" if p.status == "draft" else ""))


@kb.command("check")
@click.option("--source", "tree", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
              help="A Triton / Triton-Ascend source tree to check the compiler references against.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def check(tree: Path | None, as_json: bool) -> None:
    """Validate every entry (schema, detectors, fixes) and, with --source, its compiler references."""
    from ladder.diagnoser.triage.catalog import check_compiler_refs

    try:
        catalog, problems = load_catalog(), []
    except CatalogError as error:  # the first entry that does not validate: the verdict, not a failure
        catalog, problems = {}, [str(error)]
    if tree and catalog:
        problems = check_compiler_refs(catalog, tree)
    if as_json:
        echo(json.dumps({"valid": not problems, "entries": len(catalog), "problems": problems,
                         "source": str(tree) if tree else None}, indent=1))
    else:
        for problem in problems:
            echo(problem)
        if catalog:
            echo(f"{len(catalog)} entries valid" + (f", {len(problems)} reference problem(s)" if tree else ""))
    if problems:
        sys.exit(NEGATIVE)


@kb.command("learn")
@click.argument("journal", type=click.Path(path_type=Path))
@click.option("--round", "round_", type=int, default=None, help="The round to learn from (default: the best accepted one).")
@click.option("--id", "pattern_id", default=None, help="Id for the draft entry (default: derived from the fix).")
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="Where to write the draft (default kb/patterns/drafts/<id>.yaml; for a folder of runs, the "
                   "folder the drafts go into); '-' for stdout.")
@click.option("--json", "as_json", is_flag=True, help="Print what was learned as JSON (the drafts included).")
def learn(journal: Path, round_: int | None, pattern_id: str | None, out: Path | None, as_json: bool) -> None:
    """Turn a verified, accepted fix from an optimization JOURNAL into a draft catalog entry.

    Given a folder of runs (``ladder suite --optimize --out``), every accepted round of every journal
    in it: a draft for each fix no catalog entry covers yet (written into ``--out`` as a folder, or
    printed with ``-``), and a line for each that one does.
    """
    from ladder.diagnoser.triage.learn import (
        DRAFTS_DIR,
        LearnError,
        draft_from_journal,
        learn_from_runs,
        to_yaml,
        write_draft,
    )

    if journal.is_dir():
        entries = learn_from_runs(journal)
        for entry in entries:
            if "draft" in entry and (out is None or str(out) != "-"):
                folder = out if out is not None else DRAFTS_DIR
                entry["written_to"] = str(write_draft(entry["draft"], Path(folder) / f"{entry['draft']['id']}.yaml"))
        if as_json:
            echo(json.dumps(entries, indent=1, default=str))
            return
        for entry in entries:
            where = f"{entry['journal']} round {entry['round']}"
            if "covered_by" in entry:
                echo(f"{where}: covered by {', '.join(entry['covered_by'])} ({entry['summary']})")
            elif "written_to" in entry:
                echo(f"{where}: draft {entry['draft']['id']} written to {entry['written_to']}")
            elif "draft" in entry:
                echo(f"{where}: draft {entry['draft']['id']}\n---\n{to_yaml(entry['draft'])}---")
            else:
                echo(f"{where}: nothing to learn ({entry['not_learned']})")
        return
    try:
        draft = draft_from_journal(journal, round_, pattern_id)
    except LearnError as error:
        raise Refused(str(error), kind="NothingToLearn") from None
    if out is not None and str(out) == "-":
        echo(json.dumps(draft, indent=1, default=str) if as_json else to_yaml(draft), nl=as_json)
        return
    where = write_draft(draft, out)
    if as_json:
        echo(json.dumps({"draft": draft, "written_to": str(where)}, indent=1, default=str))
        return
    echo(f"draft entry {draft['id']} written to {where} (status: draft; review, add a detector, then "
         "move it to kb/patterns/)")
