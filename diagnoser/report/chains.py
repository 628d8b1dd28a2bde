"""A card as the reader sees it: the explanation, the cases it holds for, and per line the
evidence chain source -> IR -> metric -> compiler, each step linked to where the report shows
it in full (the fact's row, the case's row, the citation).

`Links` holds the anchors of one report; `view(card, links)` formats one card for both the
Markdown and the HTML template, which only lay it out.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from ladder.diagnoser import gap
from ladder.diagnoser.report import text
from ladder.diagnoser.report.cards import Card, Site, same_file

SOURCE_LIMIT = 160
DETAIL_LIMIT = 200
VALUE_LIMIT = 120
EXCERPT_LINES = 4
COMPILER_LABEL, COMPILER_PREFIX = "compiler source", "compiler source behind: "
NOT_MEASURED = "no-profile"  # the anchor of the profile section's note on why nothing was measured


def fact_key(fact: dict) -> str:
    return json.dumps({k: fact.get(k) for k in ("kernel", "kind", "file", "line", "stage", "value")},
                      sort_keys=True, default=str)


@dataclass
class Links:
    """Anchors of one report: facts (`fact-N`), cases (`case-N`, also by their size label) and
    citations (their id, also by `path:start-end`), plus the measured cases themselves."""

    facts: dict[str, str] = field(default_factory=dict)
    cases: dict[str, dict] = field(default_factory=dict)      # size label -> case row
    citations: list[dict] = field(default_factory=list)
    measured: bool = False
    compiled_for: dict[str, list[int]] = field(default_factory=dict)  # kernel specialization -> its cases

    @classmethod
    def of(cls, report: dict) -> Links:
        profile = report.get("profile") or {}
        return cls(facts={fact_key(f): f"fact-{i}" for i, f in enumerate(report.get("facts") or [], 1)},
                   cases={text.params(c.get("params")) or "default": c for c in profile.get("cases", [])},
                   citations=list(report.get("citations") or []), measured=bool(profile.get("cases")),
                   compiled_for=_compiled_for(report.get("facts") or []))

    def cases_of(self, kernel: str | None) -> str:
        """`cases 2, 3`: the cases a kernel specialization was launched for (from rung 3's launch facts)."""
        cases = self.compiled_for.get(str(kernel), [])
        return f"case{'s' if len(cases) > 1 else ''} {', '.join(map(str, cases))}" if cases else ""

    def citation(self, label: str) -> dict | None:
        return next((c for c in self.citations if text.citation_label(c) == label), None)


def _compiled_for(facts: list[dict]) -> dict[str, list[int]]:
    launched: dict[str, set[int]] = {}
    for fact in facts:
        case = (fact.get("value") or {}).get("case") if fact.get("kind") == "launch" else None
        if isinstance(case, int):
            launched.setdefault(str(fact.get("kernel")), set()).add(case)
    return {kernel: sorted(cases) for kernel, cases in launched.items()}


def view(card: Card, number: int, links: Links) -> dict:
    entry = card.explanation
    kernels = list(dict.fromkeys(text.kernel_parts(k)[0] for s in card.sites for k in s.kernels))
    lines = [str(s.line) for s in card.sites if s.line is not None]
    fixes = card.fixes or ([entry.fix] if entry else [])
    sites = _said_once([_site(site, card, links) for site in card.sites])
    return {
        "id": f"finding-{number}", "number": number, "label": card.pattern or _uncatalogued(card),
        "title": _title(card), "catalogued": entry is not None, "rungs": ", ".join(map(str, card.rungs)),
        "confidence": f"{card.confidence:.2f}", "kernels": kernels, "lines": lines,
        "why": entry.why if entry else None, "fixes": fixes,
        "catalog_fix": entry.fix if entry and entry.fix not in fixes else None,
        "how": entry.how if entry else "", "before": entry.before if entry else "", "after": entry.after if entry else "",
        "holds_for": _holds_for(card, links),
        "catalog_compiler": _catalog_compiler(card), "retrieved": any(s["compiler"] for s in sites),
        "sites": sites,
    }


def _said_once(sites: list[dict]) -> list[dict]:
    """A detail repeated word for word on a later line points back to where it was said; titles
    are kept on the sites only where they differ (the card's heading says the common one)."""
    said: dict[str, str] = {}
    for site in sites:
        for source in site["source"]:
            if source["detail"] in said:
                source["detail"] = source["detail_short"] = f"as on {said[source['detail']]}"
            elif source["detail"]:
                said[source["detail"]] = site["where"]
    if len({tuple(site["titles"]) for site in sites}) == 1:
        for site in sites:
            site["titles"] = []
    return sites


def _uncatalogued(card: Card) -> str:
    return COMPILER_LABEL if card.rungs == [4] else "uncatalogued"


def _title(card: Card) -> str:
    """The card's title; on a rung-4 card without a pattern, without the rung's 'compiler source
    behind: ' prefix, which the card's label already says."""
    if card.pattern is None and card.rungs == [4] and card.title.startswith(COMPILER_PREFIX):
        rest = card.title[len(COMPILER_PREFIX):]
        return rest[:1].upper() + rest[1:]
    return card.title


def _holds_for(card: Card, links: Links) -> dict:
    """The cases the card's detectors named, each with what rung 2 measured for it."""
    named = card.cases
    if named is None:
        note = "not narrowed to particular cases by its detector"
        return {"cases": [], "note": note + (f"; {_worst(links)}" if links.measured else "")}
    cases = [_case(label, links) for label in _in_case_order(named, links)]
    total = len(links.cases)
    note = f"{len(named)} of {total} cases" if links.measured and total else ""
    return {"cases": cases, "note": note}


def _in_case_order(labels: list[str], links: Links) -> list[str]:
    order = {label: i for i, label in enumerate(links.cases)}
    return sorted(labels, key=lambda label: order.get(label, len(order)))


def _case(label: str, links: Links) -> dict:
    row = links.cases.get(label)
    if row is None:
        return {"name": label, "sizes": "", "anchor": None, "measured": ""}
    return {"name": f"case {row['case']}", "sizes": label, "anchor": f"case-{row['case']}", "measured": _measured(row)}


def _measured(row: dict) -> str:
    bits = [row.get("class")] if row.get("class") else []
    if row.get("efficiency") is not None:
        bits.append(f"{text.percent(row['efficiency'])} of its floor")
    if row.get("time_s"):
        bits.append(text.seconds(row["time_s"]))
    return ", ".join(bits)


def _worst_row(links: Links) -> dict | None:
    return gap.worst_case(list(links.cases.values()))


def _worst(links: Links) -> str:
    worst = _worst_row(links)
    if worst is None:
        return "no case placed on the roofline"
    return f"worst: case {worst['case']} at {text.percent(worst['efficiency'])} of its floor ({worst.get('class', '-')})"


def _site(site: Site, card: Card, links: Links) -> dict:
    base, _ = text.kernel_parts(site.kernels[0]) if site.kernels else ("", "")
    return {"where": _short_location(site.file, site.line), "path": text.location(site.file, site.line),
            "line": site.line, "kernel": base, "titles": list(site.titles) if card.explanation else [],
            "source": [_source(item) for item in site.source],
            "ir": [_fact(fact, links) for fact in site.facts],
            "metrics": _metrics(site, links),
            "compiler": _compiler(site, card, links),
            "other": [text.evidence(item) for item in site.other]}


def _short_location(file: str | None, line: int | None) -> str:
    """`solution.py:18`: the file's name is enough beside the report's heading (the full path is the tooltip)."""
    if not file:
        return f"line {line}" if line else "the whole kernel"
    name = file.replace("\\", "/").rsplit("/", 1)[-1]
    return f"{name}:{line}" if line else name


def _source(item: dict) -> dict:
    code = text.one_line(item.get("text", ""), 10_000)
    detail = " ".join(str(item.get("detail") or "").split())
    return {"code": text.shorten(code, SOURCE_LIMIT), "code_full": code, "detail": detail,
            "detail_short": text.shorten(detail, DETAIL_LIMIT)}


def excerpt(ir: str | None) -> dict:
    """An IR excerpt as its first lines (the rest counted) and in full (for the tooltip)."""
    lines = [line.strip() for line in str(ir or "").splitlines() if line.strip()]
    return {"excerpt": lines[:EXCERPT_LINES], "excerpt_more": max(0, len(lines) - EXCERPT_LINES),
            "excerpt_full": "\n".join(lines)}


def _fact(fact: dict, links: Links) -> dict:
    base, variant = text.kernel_parts(fact.get("kernel"))
    value = text.fact_value(fact.get("value"))
    return {"anchor": links.facts.get(fact_key(fact)), "kind": fact.get("kind", ""), "stage": fact.get("stage") or "?",
            "kernel": base, "variant": variant, "value": text.shorten(value, VALUE_LIMIT), "value_full": value,
            "cases": links.cases_of(fact.get("kernel")), **excerpt(fact.get("excerpt"))}


def _metrics(site: Site, links: Links) -> list[dict]:
    shown = [{"text": text.evidence(m).removeprefix("metric "), "anchor": _metric_anchor(m, links)} for m in site.metrics]
    if not links.measured:
        return shown + [{"text": "not measured (the profile section says why)", "anchor": NOT_MEASURED}]
    worst = _worst_row(links)
    if site.cases is None or (len(links.cases) > 2 and set(links.cases) <= set(site.cases)):
        every = "not narrowed to cases" if site.cases is None else f"all {len(links.cases)} cases"
        return shown + [{"text": f"{every}; {_worst(links)}", "anchor": f"case-{worst['case']}" if worst else None}]
    for label in _in_case_order(site.cases, links):
        case = _case(label, links)
        shown.append({"text": f"{case['name']}: {case['measured']}" if case["measured"] else case["name"],
                      "anchor": case["anchor"]})
    return shown


def _metric_anchor(item: dict, links: Links) -> str | None:
    case = item.get("case")
    if isinstance(case, int):
        return f"case-{case}"
    row = links.cases.get(case) if case is not None else None
    return f"case-{row['case']}" if row else None


def _compiler(site: Site, card: Card, links: Links) -> list[dict]:
    """Citations for this line: the chunks its findings carry, then the rung-4 answers asked
    about this line (or about this pattern, shown on its first line)."""
    cited: dict[str, dict] = {}
    for chunk in site.chunks:
        label = text.citation_label(chunk)
        found = links.citation(label)
        cited[label] = _cited(found or chunk, found)
    kinds = card.explanation.fact_kinds if card.explanation else ()
    first_line = next((s.line for s in card.sites if s.line is not None), None)
    for citation in links.citations:
        about = citation.get("about") or {}
        on_line = about.get("line") == site.line and same_file(about.get("file"), site.file)
        if about.get("kind") == "finding" and card.pattern and about.get("pattern") == card.pattern:
            lines = {s.line for s in card.sites}
            on_line = on_line or (about.get("line") not in lines and site.line == first_line)
        elif about.get("kind") == "fact":
            on_line = on_line and (about.get("fact_kind") in kinds or not card.pattern)
        else:
            on_line = False
        if on_line:
            cited.setdefault(text.citation_label(citation), _cited(citation, citation))
    return list(cited.values())


def _catalog_compiler(card: Card) -> list[dict]:
    """The compiler code the pattern's catalog entry names: known for the pattern, not retrieved
    for this kernel."""
    refs = card.explanation.compiler if card.explanation else ()
    return [{"label": f"{ref['path']}:{ref['lines'][0]}-{ref['lines'][1]}" if ref.get("lines") else ref["path"],
             "symbol": ref.get("symbol") or "", "why": ref.get("why") or ""} for ref in refs]


def _cited(chunk: dict, citation: dict | None) -> dict:
    note = f"{chunk.get('pass') or 'no pass'}, score {chunk.get('score', 0):.2f}"
    return {"label": text.citation_label(chunk), "anchor": citation.get("id") if citation else None, "note": note}
