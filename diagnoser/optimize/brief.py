"""What a proposer is shown in a round: the problem, the best kernel so far, the evidence, the history.

``Brief`` is the one input every proposer takes (rules, a model, an external agent). How much of
the ladder it carries is the run's ``--evidence`` setting, so that what the diagnosis adds can be
measured: ``none`` (the kernel and the problem only), ``timing`` (plus the per-case times and
roofline positions), ``full`` (plus the findings with their source lines, IR excerpts, profile
metrics and cited compiler chunks, and for a forward of several kernels each kernel's time, share and
position against its own floor).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

EVIDENCE_LEVELS = ("none", "timing", "full")
EXCERPT_LINES = 12
SHOWN_EXCERPTS = 10  # IR excerpts in the Markdown brief (each fact is listed; the first ones with their IR)


@dataclass
class Brief:
    round: int
    problem_path: str
    problem_source: str
    best_path: str
    best_source: str
    evidence_level: str = "full"
    timing: list[dict[str, Any]] = field(default_factory=list)  # per case: time, eager, roofline %
    findings: list[dict[str, Any]] = field(default_factory=list)
    facts: list[dict[str, Any]] = field(default_factory=list)
    citations: list[dict[str, Any]] = field(default_factory=list)
    gap: str = ""
    split: dict[str, Any] | None = None  # the worst forward of several kernels, kernel by kernel
    history: list[dict[str, Any]] = field(default_factory=list)  # earlier rounds: what was tried, why it failed

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Brief":
        return cls(**{key: value for key, value in data.items() if key in cls.__dataclass_fields__})

    def to_markdown(self) -> str:
        """The brief as a coding agent or a model reads it."""
        lines = [f"# Round {self.round}: make this Triton kernel faster", "",
                 "Rewrite the solution below (class ModelNew, same constructor, same outputs) so it is faster "
                 "on every case. It must stay correct on fresh random inputs of every case, launch Triton kernels "
                 "for its compute (no torch compute ops in forward), and keep the problem's interface.", "",
                 f"## Problem ({self.problem_path})", "", "```python", self.problem_source.rstrip(), "```", "",
                 f"## Best solution so far ({self.best_path})", "", "```python", self.best_source.rstrip(), "```", ""]
        if self.timing:
            lines += ["## Timing of the best so far", "", "| case | time ms | eager ms | % of roofline |",
                      "| --- | --- | --- | --- |"]
            lines += [f"| {c.get('label')} | {_n(c.get('time_ms'))} | {_n(c.get('eager_ms'))} | "
                      f"{_n(c.get('roofline_pct'), '{:.1f}')} |" for c in self.timing]
            lines.append("")
        if self.gap:
            lines += [f"Gap to the roofline: {self.gap}", ""]
        if self.split and self.split.get("kernels"):
            lines += _split_lines(self.split)
        if self.findings:
            lines += ["## Findings (the ladder's evidence)", ""]
            for finding in self.findings:
                where = f" line {finding['line']}" if finding.get("line") else ""
                lines.append(f"- **{finding.get('pattern') or 'uncatalogued'}** (rung {finding.get('rung')}){where}: "
                             f"{finding.get('title')}")
                for item in finding.get("evidence", [])[:4]:
                    text = _evidence_line(item)
                    if text:
                        lines.append(f"  - {text}")
                if finding.get("fix"):
                    lines.append(f"  - fix: {str(finding['fix']).splitlines()[0]}")
            lines.append("")
        if self.facts:
            lines += ["## IR facts (what Triton produced, by source line)", ""]
            shown = 0
            for fact in self.facts:
                where = f"line {fact['line']}" if fact.get("line") else "kernel"
                lines.append(f"- {fact.get('kernel')} {where} ({fact.get('stage')}): {fact.get('kind')} = "
                             f"{_compact(fact.get('value'))}")
                if fact.get("excerpt") and shown < SHOWN_EXCERPTS:
                    shown += 1
                    lines += ["", "  ```", *[f"  {text}" for text in str(fact["excerpt"]).splitlines()], "  ```"]
            lines.append("")
        if self.citations:
            lines += ["## Compiler code behind the findings", ""]
            for citation in self.citations:
                lines.append(f"- `{citation['path']}:{citation['start']}-{citation['end']}` ({citation.get('pass')}): "
                             f"{citation.get('statement', '')}")
            lines.append("")
        if self.history:
            lines += ["## Earlier rounds", ""]
            for entry in self.history:
                for tried in entry.get("proposals", []):
                    lines.append(f"- round {entry['round']}: {tried.get('summary')} -> {tried.get('outcome')}")
            lines.append("")
        return "\n".join(lines)


def brief_for(round_number: int, problem_path: str, best_path: str, evidence_level: str,
              diagnosis: dict[str, Any] | None, best_cases: list[dict[str, Any]],
              history: list[dict[str, Any]]) -> Brief:
    """The brief of a round, cut to the evidence level."""
    from pathlib import Path

    brief = Brief(round=round_number, problem_path=problem_path, problem_source=Path(problem_path).read_text(),
                  best_path=best_path, best_source=Path(best_path).read_text(), evidence_level=evidence_level,
                  history=history)
    if evidence_level in ("timing", "full"):
        brief.timing = [{key: case.get(key) for key in ("case", "label", "time_ms", "eager_ms", "roofline_pct")}
                        for case in best_cases]
    if evidence_level == "full" and diagnosis:
        brief.findings = diagnosis.get("findings", [])
        brief.facts = [_excerpted(fact) for fact in diagnosis.get("facts", [])][:40]
        brief.citations = diagnosis.get("citations", [])
        brief.gap = (diagnosis.get("gap") or {}).get("why", "")
        brief.split = (diagnosis.get("profile") or {}).get("split")
    return brief


def _split_lines(split: dict[str, Any]) -> list[str]:
    """Where the forward of the worst multi-kernel case spends its time, kernel by kernel."""
    lines = [f"## Where the time goes (case {split['case']}: {split.get('label')})", "",
             "| kernel | launched at line | launches | time ms | share | % of its floor | class |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for kernel in split["kernels"]:
        efficiency = kernel.get("efficiency")
        lines.append(f"| {kernel['kernel']} | {kernel.get('line') or '-'} | {kernel.get('launches')} | "
                     f"{_n(kernel['seconds'] * 1e3 if kernel.get('seconds') else None)} | "
                     f"{_n(kernel['share'] * 100 if kernel.get('share') else None, '{:.0f}%')} | "
                     f"{_n(efficiency * 100 if efficiency is not None else None, '{:.0f}')} | "
                     f"{kernel.get('class') or '-'} |")
    lines.append(f"| outside Triton kernels | - | - | {_n(split['outside_s'] * 1e3)} | "
                 f"{split['outside_share'] * 100:.0f}% | - | - |")
    lines += ["", f"Forward {_n(split['forward_s'] * 1e3)} ms; {split.get('note')}.", ""]
    return lines


def _excerpted(fact: dict[str, Any]) -> dict[str, Any]:
    fact = dict(fact)
    if isinstance(fact.get("excerpt"), str):
        fact["excerpt"] = "\n".join(fact["excerpt"].splitlines()[:EXCERPT_LINES])
    return fact


def _evidence_line(item: dict[str, Any]) -> str:
    kind = item.get("type")
    if kind == "source":
        return f"source line {item.get('line')}: `{str(item.get('text', '')).strip()}`"
    if kind == "fact":
        fact = item.get("fact") if isinstance(item.get("fact"), dict) else item
        return f"IR ({fact.get('stage')}): {fact.get('kind')} = {fact.get('value')}"
    if kind == "metric":
        return f"metric {item.get('name')} = {item.get('value')} {item.get('unit', '')}".rstrip()
    if kind == "chunk":
        return f"compiler `{item.get('path')}:{item.get('start')}-{item.get('end')}`"
    return ""


def _compact(value: Any, limit: int = 200) -> str:
    import json

    text = json.dumps(value, default=str, separators=(",", ":"))
    return text if len(text) <= limit else text[:limit] + "..."


def _n(value: Any, template: str = "{:.4g}") -> str:
    return "-" if value is None else template.format(value)
