"""How the rungs agree about a finding: later evidence confirms it or vetoes it.

A rung-1 finding is a prediction from the source; rung 2 measures and rung 3 reads what the
compiler produced. When a later rung's evidence shows the same thing, the finding is *confirmed*:
it keeps every piece of evidence from every rung (source line, IR excerpt, metric), the highest
confidence plus `CORROBORATION`, and is attributed to the highest rung that contributed. When the
facts contradict the prediction (a spill predicted, ptxas reporting 0 bytes spilled) the finding is
*vetoed*: it leaves the findings, and the state keeps it under `vetoed` with the rung, the reason
and the facts that contradict it, so a report can say what was ruled out and why.

Two places fold findings and both use these functions, so a merged finding never loses evidence:
triage, merging what its rules and the rung-2/3 evidence say about one line, and the policy
(`ladder.diagnoser.ladder`), folding each rung's findings and vetoes into the climb's state (`fold`).
Which fact confirms and which vetoes each catalog pattern is the catalog's data (`detect`
entries of level `ir`, and `veto`); the veto rules themselves are `ladder.diagnoser.triage.vetoes`.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

CORROBORATION = 0.05    # what evidence from another rung adds to a finding's confidence
MAX_CONFIDENCE = 0.99


def evidence_key(item: dict[str, Any]) -> str:
    """One evidence item's identity: equal items (the same line, fact or metric) are kept once."""
    return repr(sorted(item.items(), key=lambda pair: pair[0]))


def join_evidence(into: list[dict[str, Any]], other: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """`into` with every item of `other` it lacks appended (in order): evidence is never dropped."""
    seen = {evidence_key(item) for item in into}
    for item in other:
        key = evidence_key(item)
        if key not in seen:
            into.append(item)
            seen.add(key)
    return into


def joined_confidence(first: float, second: float, corroborated: bool) -> float:
    """The confidence of two findings of one thing: the higher, raised when another rung agrees."""
    return round(min(MAX_CONFIDENCE, max(first, second) + (CORROBORATION if corroborated else 0.0)), 2)


def absorb(into: dict[str, Any], other: dict[str, Any]) -> dict[str, Any]:
    """Fold `other` (a finding as a dict) into `into`: all evidence, the highest confidence, the
    highest rung. `other` corroborates when it brings evidence from another rung; not when it is a
    later version of `into` (it holds all of `into`'s evidence already, and its confidence counts
    the corroboration it got when that evidence was merged into it)."""
    mine = {evidence_key(item) for item in into.get("evidence", [])}
    theirs = {evidence_key(item) for item in other.get("evidence", [])}
    corroborated = bool(theirs - mine) and other.get("rung", 1) != into.get("rung", 1) and not mine <= theirs
    join_evidence(into.setdefault("evidence", []), other.get("evidence", []))
    into["confidence"] = joined_confidence(into.get("confidence", 0.0), other.get("confidence", 0.0), corroborated)
    into["rung"] = max(into.get("rung", 1), other.get("rung", 1))
    if not into.get("fix") and other.get("fix"):
        into["fix"] = other["fix"]
    return into


def same_finding(first: dict[str, Any], second: dict[str, Any]) -> bool:
    """Findings about one thing: one pattern (or, without one, one title), kernel, file and line."""
    if first.get("pattern") != second.get("pattern") or first.get("kernel") != second.get("kernel"):
        return False
    if not first.get("pattern") and first.get("title") != second.get("title"):
        return False
    return first.get("file") == second.get("file") and first.get("line") == second.get("line")


def vetoed_record(finding: dict[str, Any], rung: int, reason: str, evidence: list[dict[str, Any]]) -> dict[str, Any]:
    """A vetoed finding as the state keeps it: the finding, and what ruled it out."""
    return {**finding, "veto": {"rung": rung, "reason": reason, "evidence": list(evidence)}}


def fold(state: dict[str, Any], output: dict[str, Any]) -> None:
    """Settle a rung's output against the state's findings, after the policy has added the new ones.

    Vetoes first: a finding the rung vetoes that the state holds as a prediction only (rung 1,
    nothing measured or compiled behind it) moves to `state["vetoed"]`. Then confirmations: a
    finding the state already holds absorbs the rung's version of it, which carries the earlier
    evidence and what this rung added (the IR excerpt, the metric)."""
    findings = state.setdefault("findings", [])
    vetoed = state.setdefault("vetoed", [])
    for record in output.get("vetoed", []):
        for finding in [f for f in findings if same_finding(f, record) and f.get("rung", 1) < record["veto"]["rung"]
                        and f.get("rung", 1) == 1]:
            findings.remove(finding)
            if not any(same_finding(v, record) for v in vetoed):
                vetoed.append(vetoed_record(finding, record["veto"]["rung"], record["veto"]["reason"],
                                            record["veto"].get("evidence", [])))
    for finding in output.get("findings", []):
        current = next((f for f in findings if f is not finding and same_finding(f, finding)), None)
        if current is not None:
            absorb(current, finding)
