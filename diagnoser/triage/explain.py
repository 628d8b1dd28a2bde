"""`ladder explain ID`: why a pattern is slow, from three sources.

1. the catalog entry (symptom, detection, fix with before/after);
2. the compiler code that explains it: the entry's own references, and the chunks the knowledge
   index retrieves for it (cited `path:start-end`), when an index has been built;
3. where it fired in the suite: a saved triage summary (`bench/results/triage-suite.json`), or
   triage run over `kernels/` on the spot.
"""
from __future__ import annotations

import contextlib
import difflib
import json
from pathlib import Path
from typing import Any, Callable, Optional

from .catalog import CatalogError, Pattern, load_catalog

ROOT = Path(__file__).resolve().parents[2]
SUITE_SUMMARY = ROOT / "bench" / "results" / "triage-suite.json"
SUITE_DIR = ROOT / "kernels"


class UnknownPattern(CatalogError):
    pass


def find_pattern(pattern_id: str) -> Pattern:
    catalog = load_catalog()
    if pattern_id in catalog:
        return catalog[pattern_id]
    close = difflib.get_close_matches(pattern_id, list(catalog), n=3, cutoff=0.4)
    hint = f"; did you mean {', '.join(close)}?" if close else "; `ladder kb list` shows the ids"
    raise UnknownPattern(f"unknown pattern id {pattern_id!r}{hint}")


def retrieval_query(pattern: Pattern) -> str:
    """What to ask the index: the title, the first sentence of the symptom, the passes and symbols."""
    symptom = pattern.symptom.split(". ")[0]
    names = [r.get("pass") or r.get("symbol") or "" for r in pattern.compiler]
    return " ".join([pattern.title, symptom, *[n for n in names if n]])[:600]


def retrieve(pattern: Pattern, k: int = 5, index_dir: Optional[str] = None) -> tuple[list[dict], Optional[str]]:
    """(chunks, None), or ([], one-line reason) when there is no usable index."""
    try:
        from ladder import indexer
        from ladder.indexer.errors import IndexerError
    except ImportError as error:
        return [], f"no knowledge index available ({error}); showing the catalog's own references"
    where = None
    if pattern.backend == "ascend":
        where = {"backend": "ascend"}
    try:
        hits = indexer.search(retrieval_query(pattern), k=2 * k, where=where, index_dir=index_dir)
        # Catalog entries are indexed too; the entry itself is already shown, the code is what is asked for.
        return [h for h in hits if not str(h.get("path", "")).startswith("patterns/")][:k], None
    except IndexerError as error:
        return [], f"no knowledge index: {str(error).splitlines()[0]}"
    except Exception as error:  # a broken index must not hide the entry
        return [], f"index query failed ({type(error).__name__}: {error}); showing the catalog's own references"


def suite_hits(pattern_id: str, summary: Path = SUITE_SUMMARY, scan: bool = True,
               progress: Optional[Callable] = None) -> tuple[list[dict], str]:
    """Where the pattern fired in the suite: [{kernel, line, confidence, title}], and from what.
    `progress` wraps the list of suite solutions in a context manager (a progress bar)."""
    data = None
    source = ""
    if summary.is_file():
        try:
            data = json.loads(summary.read_text())
            source = f"saved summary {summary.relative_to(ROOT) if summary.is_relative_to(ROOT) else summary}"
        except json.JSONDecodeError:
            data = None
    if data is None:
        if not scan:
            return [], "no saved suite summary (run bench/triage/suite_triage.py)"
        data = scan_suite(progress)
        source = "triage run over kernels/ just now"
    hits = []
    for name, entry in sorted((data.get("kernels") or {}).items()):
        for finding in entry.get("findings", []):
            if finding.get("pattern") == pattern_id:
                hits.append({"kernel": name, "function": finding.get("kernel"), "line": finding.get("line"),
                             "confidence": finding.get("confidence"), "title": finding.get("title")})
    return hits, source


def scan_suite(progress: Optional[Callable] = None) -> dict[str, Any]:
    from . import run_triage

    solutions = sorted(SUITE_DIR.glob("level*/*/solution.py"))
    kernels = {}
    with (progress or contextlib.nullcontext)(solutions) as items:
        for solution in items:
            name = f"{solution.parent.parent.name}/{solution.parent.name}"
            try:
                kernels[name] = run_triage(str(solution)).to_dict()
            except Exception as error:  # one broken suite kernel must not hide the others
                kernels[name] = {"findings": [], "notes": [f"triage failed: {type(error).__name__}: {error}"]}
    return {"kernels": kernels}


def static_references(pattern: Pattern) -> list[str]:
    lines = []
    for ref in pattern.compiler:
        where = ref.get("path", "")
        if ref.get("lines"):
            where += f":{ref['lines'][0]}-{ref['lines'][1]}"
        label = " ".join(x for x in (f"[{ref['pass']}]" if ref.get("pass") else "", ref.get("symbol", "")) if x)
        lines.append(f"  {where}  {label}".rstrip() + (f"\n      {ref['why'].strip()}" if ref.get("why") else ""))
    return lines


def chunk_citation(chunk: dict) -> str:
    where = f"{chunk.get('path')}:{chunk.get('start')}-{chunk.get('end')}"
    pass_name = f" [{chunk['pass']}]" if chunk.get("pass") else ""
    score = chunk.get("score")
    return f"  {where}{pass_name}" + (f"  score {score:.3f}" if isinstance(score, (int, float)) else "")
