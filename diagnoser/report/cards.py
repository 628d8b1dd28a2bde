"""Findings as cards: one per pattern, each line it fires on a site with its evidence chain.

Rungs report one finding per (pattern, kernel, line), so a load pattern on four lines arrives as
four findings that say the same thing. A reader wants the pattern once (what it is, why it is
slow, how to fix it, which cases it holds for) and then, per line, the chain that shows it:
source line -> IR excerpt -> metric -> compiler citation. `cards()` groups the findings that way.

Evidence a finding does not carry is found where the diagnosis already holds it, never inferred:
the IR facts rung 3 recorded at that line of the kinds the pattern's catalog entry reads, the
profile rows of the cases the finding names, the rung-4 citations asked about that line or
pattern. A pattern-less rung-4 finding whose facts are all of the kinds a card's pattern reads,
one of them on a card's line, is that card's compiler step, so it joins the card instead of
standing as a card of its own (a line it adds, say a store the detector left out, becomes one
more site of the card, shown with its IR fact and citations).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ladder.diagnoser.evidence import fact_of
from ladder.diagnoser.report.explain import Explanation, explanation

MAX_FACTS_PER_SITE = 4


@dataclass(eq=False)
class Site:
    """One place a card's pattern fires: a source line (or the whole kernel when line is None)."""

    file: str | None
    line: int | None
    kernels: list[str] = field(default_factory=list)
    titles: list[str] = field(default_factory=list)
    fixes: list[str] = field(default_factory=list)
    source: list[dict] = field(default_factory=list)
    facts: list[dict] = field(default_factory=list)
    metrics: list[dict] = field(default_factory=list)
    chunks: list[dict] = field(default_factory=list)
    other: list[dict] = field(default_factory=list)
    cases: list[str] | None = None          # case labels ("M=4096, N=1024"); None: not tied to cases
    confidence: float = 0.0


@dataclass(eq=False)
class Card:
    pattern: str | None
    title: str
    explanation: Explanation | None
    sites: list[Site] = field(default_factory=list)
    rungs: list[int] = field(default_factory=list)
    findings: list[int] = field(default_factory=list)  # indexes into the report's findings
    confidence: float = 0.0

    @property
    def cases(self) -> list[str] | None:
        named = [c for site in self.sites for c in (site.cases or [])]
        return list(dict.fromkeys(named)) if named else None

    @property
    def fixes(self) -> list[str]:
        return list(dict.fromkeys(f for site in self.sites for f in site.fixes))


def cards(report: dict) -> list[Card]:
    """The report's findings as cards, most confident first (ties keep the report's order)."""
    grouped: dict[object, Card] = {}
    loose: list[tuple[int, dict]] = []
    for index, finding in enumerate(report.get("findings") or []):
        if not finding.get("pattern"):
            loose.append((index, finding))
            continue
        card = grouped.get(finding["pattern"])
        if card is None:
            entry = explanation(finding["pattern"])
            card = grouped[finding["pattern"]] = Card(finding["pattern"], entry.title if entry else finding["title"], entry)
        _add(card, index, finding)
    for index, finding in loose:
        home = next((c for c in grouped.values() if _belongs(finding, c)), None)
        if home is None:
            home = grouped[("uncatalogued", index)] = Card(None, finding["title"], None)
        _add(home, index, finding)
    found = list(grouped.values())
    for card in found:
        _complete(card, report)
    return sorted(found, key=lambda c: (-c.confidence, c.findings[0]))


def _add(card: Card, index: int, finding: dict) -> None:
    """File `finding` under `card`: its source and facts on the sites of their own lines, its
    metrics and compiler chunks on every site it touched, its title and fix on its own line's."""
    card.findings.append(index)
    card.rungs = sorted(set(card.rungs) | {finding.get("rung", 0)})
    card.confidence = max(card.confidence, float(finding.get("confidence") or 0.0))

    def site_at(place: tuple) -> Site:
        site = next((s for s in card.sites if s.line == place[1] and same_file(s.file, place[0])), None)
        if site is None:
            site = Site(*place)
            card.sites.append(site)
        return site
    own = (finding.get("file"), finding.get("line"))
    touched: list[Site] = []
    for item in finding.get("evidence") or []:
        if item.get("type") in ("source", "fact"):
            site = site_at(_place(item, finding))
            _file(site, item)
            _once(touched, site)
    absorbed = card.pattern is not None and not finding.get("pattern")
    home = touched[0] if touched else None
    if not absorbed and (own[1] is not None or not touched):
        home = site_at(own)
        if home not in touched:
            touched.insert(0, home)
    for item in finding.get("evidence") or []:
        if item.get("type") not in ("source", "fact"):
            for site in touched:
                _file(site, item)
    if not absorbed:
        _once(home.kernels, finding.get("kernel"))
        _once(home.titles, finding.get("title"))
        _once(home.fixes, finding.get("fix"))
        for site in touched:
            site.confidence = max(site.confidence, float(finding.get("confidence") or 0.0))
    card.sites.sort(key=lambda s: (s.line is None, s.file or "", s.line or 0))


def _place(item: dict, finding: dict) -> tuple:
    """The (file, line) a source or fact item shows: its own, else its finding's."""
    shown = fact_of(item) if item.get("type") == "fact" else item
    if shown.get("line") is None:
        return finding.get("file"), finding.get("line")
    return shown.get("file") or finding.get("file"), shown.get("line")


def _file(site: Site, item: dict) -> None:
    kind = item.get("type")
    if kind == "source":
        if item not in site.source:
            site.source.append(item)
        if item.get("cases"):
            site.cases = list(dict.fromkeys((site.cases or []) + list(item["cases"])))
    elif kind == "fact":
        fact = fact_of(item)
        if fact not in site.facts:
            site.facts.append(fact)
    elif kind == "metric":
        if item not in site.metrics:
            site.metrics.append(item)
    elif kind == "chunk":
        if item not in site.chunks:
            site.chunks.append(item)
    elif item not in site.other:
        site.other.append(item)


def _belongs(finding: dict, card: Card) -> bool:
    """A pattern-less finding is part of `card` when each of its facts is of a kind the card's
    pattern reads and at least one sits on one of the card's lines."""
    kinds = card.explanation.fact_kinds if card.explanation else ()
    facts = [fact_of(e) for e in finding.get("evidence") or [] if e.get("type") == "fact"]
    sites = [s for s in card.sites if s.line is not None]
    return bool(facts and kinds) and all(f.get("kind") in kinds for f in facts) and any(
        s.line == f.get("line") and same_file(s.file, f.get("file") or finding.get("file")) for s in sites for f in facts)


def _complete(card: Card, report: dict) -> None:
    """Facts a site lacks, from rung 3's table: those on its line of the kinds its pattern reads."""
    kinds = card.explanation.fact_kinds if card.explanation else ()
    if not kinds:
        return
    for site in card.sites:
        if site.facts or site.line is None:
            continue
        site.facts = [f for f in report.get("facts") or [] if f.get("kind") in kinds and f.get("line") == site.line
                      and same_file(f.get("file"), site.file)][:MAX_FACTS_PER_SITE]


def same_file(a: str | None, b: str | None) -> bool:
    """Paths name the same file: equal, or one is relative and they end alike."""
    if not a or not b:
        return a == b
    if a == b:
        return True
    if a.startswith("/") and b.startswith("/"):
        return False
    short, long = sorted((a, b), key=len)
    return long.endswith("/" + short.lstrip("./"))


def _once(values: list, value) -> None:
    if value and value not in values:
        values.append(value)
