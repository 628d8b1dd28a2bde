"""What the catalog says about a finding's pattern, as a report shows it next to the evidence.

A report is rendered from a diagnosis's JSON, which names each finding's pattern by its stable id;
the explanation (why the pattern is slow, how to fix it, which IR facts and compiler code bear on
it) is read from the catalog that ships with ladder, so an old report gains the catalog's current
wording and a report never stores prose twice. An id the catalog does not have (a draft removed,
a newer report) gets no explanation, not an error.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Explanation:
    """One catalog entry reduced to what a reader needs: all text, no detector internals."""

    pattern: str
    title: str
    why: str                      # the entry's symptom: what is slow and how it shows
    fix: str                      # the fix in one sentence
    how: str = ""                 # the fix step by step
    before: str = ""
    after: str = ""
    fact_kinds: tuple[str, ...] = field(default_factory=tuple)  # rung-3 facts its detectors read
    compiler: tuple[dict, ...] = field(default_factory=tuple)   # {path, lines, symbol, why}


@functools.cache
def explanation(pattern: str | None) -> Explanation | None:
    """The catalog's explanation of `pattern`, or None when it has no (valid) entry."""
    if not pattern:
        return None
    from ladder.diagnoser.triage.catalog import PATTERNS_DIR, CatalogError, load_entry

    path = PATTERNS_DIR / f"{pattern}.yaml"
    if not path.is_file():
        return None
    try:
        entry = load_entry(path)
    except CatalogError:
        return None
    fix = entry.fix
    return Explanation(
        pattern=entry.id, title=entry.title, why=" ".join(entry.symptom.split()),
        fix=" ".join(str(fix.get("summary", "")).split()), how=str(fix.get("how", "")).strip(),
        before=str(fix.get("before", "")).rstrip(), after=str(fix.get("after", "")).rstrip(),
        fact_kinds=tuple(dict.fromkeys(d["fact"] for d in entry.detect if d.get("fact"))),
        compiler=tuple(ref for ref in entry.compiler if isinstance(ref, dict) and ref.get("path")))
