"""Helpers shared by the detectors: evidence records and merging findings across cases."""
from __future__ import annotations

from typing import Any, Iterable, Optional

from ladder.diagnoser.evidence import Fact, Finding

from ..context import TriageContext


def source_evidence(ctx: TriageContext, line: Optional[int], detail: str = "",
                    end_line: Optional[int] = None) -> dict[str, Any]:
    """A source line as evidence; `end_line` when the statement spans several lines (IR locations
    may point at any of them)."""
    evidence = {"type": "source", "file": ctx.file, "line": line, "text": ctx.source.line_text(line)}
    if end_line is not None and line is not None and end_line > line:
        evidence["end_line"] = end_line
    if detail:
        evidence["detail"] = detail
    return evidence


def fact_evidence(fact: Fact) -> dict[str, Any]:
    return {"type": "fact", **fact.to_dict()}


def metric_evidence(name: str, value: Any, unit: str = "") -> dict[str, Any]:
    return {"type": "metric", "name": name, "value": value, "unit": unit}


def case_label(case: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in case.items()) or "default"


class Findings:
    """Collects findings keyed by (pattern, kernel, line); repeated hits (other cases, other
    launches) add the case to the evidence and keep the highest confidence instead of
    duplicating the finding."""

    def __init__(self, rung: int = 1) -> None:
        self.rung = rung
        self._by_key: dict[tuple, Finding] = {}
        self._variants: dict[tuple, dict[tuple, set[int]]] = {}
        self._counts: dict[tuple, int] = {}

    def add(self, ctx: TriageContext, pattern: str, kernel: Optional[str], line: Optional[int], title: str,
            confidence: float, evidence: Iterable[dict[str, Any]], case: Optional[dict[str, Any]] = None,
            analysis: Any = None) -> Finding:
        key = (pattern, kernel, line)
        if analysis is not None:
            group = (analysis.case_index, analysis.launch.group)
            self._variants.setdefault(key, {}).setdefault(group, set()).add(analysis.launch.variant)
            self._counts[group] = analysis.launch.variants
            if case is None:
                case = analysis.case
        finding = self._by_key.get(key)
        evidence = list(evidence)
        if finding is None:
            finding = Finding(pattern=pattern, rung=self.rung, title=title, file=ctx.file, line=line, kernel=kernel,
                              confidence=round(confidence, 2), evidence=[])
            self._by_key[key] = finding
        else:
            finding.confidence = round(max(finding.confidence, confidence), 2)
        label = case_label(case) if case is not None else None
        for item in evidence:
            # One source item per line: further cases that show the same thing are listed on it.
            same = next((e for e in finding.evidence if e.get("type") == item.get("type") == "source"
                         and e.get("line") == item.get("line")), None)
            if same is None:
                same = item
                finding.evidence.append(item)
            if label is not None and label not in same.setdefault("cases", []):
                same["cases"].append(label)
        return finding

    def list(self) -> list[Finding]:
        """The findings; one seen only under some configs of an autotuned launch is dropped (the
        tuner can pick a config without it)."""
        kept = []
        for key, finding in self._by_key.items():
            groups = self._variants.get(key)
            if groups is None or any(len(v) >= self._counts.get(g, 1) for g, v in groups.items()):
                kept.append(finding)
        return kept


def is_power_of_two(value: Any) -> bool:
    return isinstance(value, int) and value > 0 and value & (value - 1) == 0
