"""Rung 1, pattern triage: match a kernel against the catalog of known slow patterns.

    findings = triage("kernels/level1/19_relu/solution.py")              # problem.py beside it is used
    findings = triage(path, problem, facts=ir_facts, metrics=counters)   # with rungs 3 and 2 as evidence

The pipeline is plain: read the source -> trace each case's launches on meta tensors -> walk
every distinct launch of every kernel -> run the detectors (`DETECTORS`, an ordered mapping of
named rules) -> drop source predictions the IR contradicts -> merge what several rules and rungs
say about the same line -> keep what clears `min_confidence`. A source-level finding that rung-3
facts contradict (ptxas spills nothing, the compiled access is 128-bit) is vetoed by the rule its
catalog entry names (`ladder.diagnoser.triage.vetoes`) and returned among `vetoed` with the reason; one
they confirm keeps the IR evidence and gains confidence (`ladder.diagnoser.agreement`). Mechanical fixes
for findings live in `FIXES` (id -> rewrite).
"""
from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from ladder.diagnoser.agreement import absorb
from ladder.diagnoser.evidence import Fact, Finding
from ladder.diagnoser.subject import written_for_npu

from .context import TriageContext, analyse_traces, static_reports
from .detectors import DETECTORS, detectors_for
from .source import SourceError, load_source, parse_module
from .vetoes import veto_by_ir

DEFAULT_MIN_CONFIDENCE = 0.5
TARGETS = {"nvidia": "nvidia", "cuda": "nvidia", "sm90": "nvidia", "sm_90": "nvidia", "hopper": "nvidia",
           "ascend": "ascend", "npu": "ascend"}


@dataclass
class TriageResult:
    findings: list[Finding]
    target: str
    kernels: list[str]
    cases: int
    notes: list[str] = field(default_factory=list)
    vetoed: list[dict[str, Any]] = field(default_factory=list)  # findings rung-3 facts contradict, with why

    def to_dict(self) -> dict[str, Any]:
        return {"target": self.target, "kernels": self.kernels, "cases": self.cases, "notes": self.notes,
                "findings": [f.to_dict() for f in self.findings], "vetoed": self.vetoed}


def triage(solution: str | Path, problem: str | Path | None = None, facts: Optional[list[Fact]] = None,
           metrics: Optional[dict[str, Any]] = None, target: Optional[str] = None,
           min_confidence: float = DEFAULT_MIN_CONFIDENCE, script: bool = False) -> list[Finding]:
    """Findings for a solution file (or its source text), best first."""
    return run_triage(solution, problem, facts, metrics, target, min_confidence, script=script).findings


def run_triage(solution: str | Path, problem: str | Path | None = None, facts: Optional[list[Fact]] = None,
               metrics: Optional[dict[str, Any]] = None, target: Optional[str] = None,
               min_confidence: float = DEFAULT_MIN_CONFIDENCE,
               detectors: Optional[list[str]] = None, script: bool = False) -> TriageResult:
    """`triage` with what it looked at: target, kernels, number of cases traced, and notes saying
    what could not be done (no problem, a forward that would not run on meta tensors...).
    `script`: the file is a program that launches its kernels itself (no problem); it is run on
    meta tensors and its launches are walked with their real arguments. Off by default, since it
    executes the file."""
    path, text = load_source(solution)
    ctx = build_context(path, text, problem, facts, metrics, target, script)
    chosen = detectors_for(ctx.target)
    if detectors is not None:
        unknown = [name for name in detectors if name not in DETECTORS]
        if unknown:
            raise ValueError(f"unknown detector(s): {', '.join(unknown)}")
        chosen = {name: d for name, d in chosen.items() if name in detectors}
    findings: list[Finding] = []
    for name, detector in chosen.items():
        if detector.level == "ir" and not ctx.facts:
            continue
        if detector.level == "profile" and not ctx.metrics:
            continue
        try:
            findings.extend(detector.run(ctx))
        except Exception as error:  # one broken rule must not hide what the others found
            ctx.notes.append(f"detector {name} failed: {type(error).__name__}: {error}")
    catalog = _catalog()
    findings, vetoed = veto_by_ir(ctx, findings, {id_: entry.veto["rule"] for id_, entry in catalog.items()
                                                  if entry.veto})
    ctx.notes.extend(f"{v['pattern']} at line {v['line']} ({v['kernel']}) vetoed: {v['veto']['reason']}" for v in vetoed)
    merged = merge(findings)
    attach_fixes(merged, catalog)
    kept = [f for f in merged if f.confidence >= min_confidence]
    kept.sort(key=lambda f: (-f.confidence, f.line or 0, f.pattern or ""))
    cases = sum(1 for t in ctx.traces if t.launches)
    return TriageResult(kept, ctx.target, ctx.kernel_names(), cases, ctx.notes, vetoed)


def build_context(path: Optional[str], text: str, problem: str | Path | None, facts: Optional[list[Fact]],
                  metrics: Optional[dict[str, Any]], target: Optional[str], script: bool = False) -> TriageContext:
    source = parse_module(text, path)
    problem_path = _problem_for(path, problem, beside=not script)
    resolved = resolve_target(target, text, problem_path)
    ctx = TriageContext(source=source, target=resolved, solution_path=path,
                        problem_path=str(problem_path) if problem_path else None,
                        facts=[f if isinstance(f, Fact) else Fact.from_dict(f) for f in (facts or [])],
                        metrics=dict(metrics or {}), device=device_table(resolved, target))
    if not source.kernels:
        ctx.notes.append("no @triton.jit kernel in the solution")
    if problem_path is not None and source.kernels:
        from .trace import trace_cases

        if path is None:
            with tempfile.TemporaryDirectory() as folder:
                temp = Path(folder) / "solution.py"
                temp.write_text(text)
                ctx.traces = trace_cases(str(temp), str(problem_path), resolved)
        else:
            ctx.traces = trace_cases(path, str(problem_path), resolved)
        for trace in ctx.traces:
            if trace.error:
                ctx.notes.append(f"case {trace.index}: forward not traced ({trace.error}); source-only checks")
            elif trace.note:
                ctx.notes.append(f"case {trace.index}: {trace.note}")
        ctx.analyses = analyse_traces(source, ctx.traces)
    elif source.kernels and script and path is not None:
        from .trace import trace_script

        ctx.traces = trace_script(path, resolved)
        for trace in ctx.traces:
            if trace.error or not trace.launches:
                ctx.notes.append(f"script not traced ({trace.error or 'no Triton launch'}); only shape-independent checks ran")
            elif trace.note:
                ctx.notes.append(trace.note)
        ctx.analyses = analyse_traces(source, [t for t in ctx.traces if t.launches])
    elif source.kernels:
        ctx.notes.append("no problem file: case shapes unknown, only shape-independent checks ran")
    ctx.static = static_reports(source)
    return ctx


def _problem_for(path: Optional[str], problem: str | Path | None, beside: bool = True) -> Optional[Path]:
    """The problem file given, else (`beside`) the problem.py next to the solution; a script has none."""
    if problem is not None:
        problem = Path(problem)
        if not problem.is_file():
            raise SourceError(f"no such problem file: {problem}")
        return problem
    if path is not None and beside:
        sibling = Path(path).resolve().parent / "problem.py"
        if sibling.is_file() and sibling != Path(path).resolve():
            return sibling
    return None


def resolve_target(target: Optional[str], text: str, problem: Optional[Path]) -> str:
    """`nvidia` or `ascend`: as asked, else from the code (torch_npu / npu devices mean Ascend)."""
    if target is not None:
        key = str(target).lower().split(":")[0]
        if key not in TARGETS:
            raise SourceError(f"unknown target {target!r}: use nvidia (sm90) or ascend")
        return TARGETS[key]
    texts = [text] + ([problem.read_text()] if problem is not None else [])
    return "ascend" if written_for_npu(*texts) else "nvidia"


def device_table(family: str, target: Optional[str]) -> dict[str, Any]:
    """The hardware table of the part a target names (`ascend:Ascend910B4`), else of the family's
    default part (`nvidia` -> H200, `ascend` -> Ascend 910B3)."""
    from ladder.runner import hardware

    chosen = hardware.for_target(target) if target and ":" in target else {}
    return chosen or hardware.for_target(family)


def merge(findings: list[Finding]) -> list[Finding]:
    """One finding per (pattern, kernel, line). Evidence from another rung or rule about the same
    line (or a line of the same multi-line statement) corroborates (+0.05) and the finding is
    attributed to the highest rung that contributed; a finding without a line (kernel-wide facts,
    profile metrics) joins the finding of the same pattern and kernel, if there is one."""
    merged: dict[tuple, Finding] = {}
    floating: list[Finding] = []
    for finding in sorted(findings, key=lambda f: f.rung):
        if finding.line is None:
            floating.append(finding)
            continue
        key = (finding.pattern, finding.kernel, finding.line)
        current = merged.get(key) or next((f for f in merged.values() if _spans(f, finding)), None)
        if current is None:
            merged[key] = Finding.from_dict(finding.to_dict())
            continue
        _absorb(current, finding)
    for finding in floating:
        target = next((f for f in merged.values() if f.pattern == finding.pattern
                       and (finding.kernel is None or f.kernel == finding.kernel)), None)
        if target is not None:
            _absorb(target, finding)
        else:
            merged[(finding.pattern, finding.kernel, None)] = Finding.from_dict(finding.to_dict())
    return list(merged.values())


def _spans(finding: Finding, other: Finding) -> bool:
    """Does `finding`'s multi-line statement contain `other`'s line (same pattern and kernel)?"""
    if finding.pattern != other.pattern or finding.kernel != other.kernel:
        return False
    return any(e.get("type") == "source" and e.get("line") is not None and e.get("end_line")
               and e["line"] <= other.line <= e["end_line"] for e in finding.evidence)


def _absorb(into: Finding, other: Finding) -> None:
    # A Finding's fields are its __dict__: agreement.absorb folds them in place.
    absorb(vars(into), vars(other))


def _catalog() -> dict:
    """The catalog's entries (empty when it does not load: `ladder kb check` says why)."""
    from .catalog import CatalogError, load_catalog

    try:
        return load_catalog()
    except CatalogError:
        return {}


def attach_fixes(findings: list[Finding], catalog: Optional[dict] = None) -> None:
    """Fill `fix` with the catalog's one-line summary of how to fix the pattern."""
    catalog = _catalog() if catalog is None else catalog
    for finding in findings:
        entry = catalog.get(finding.pattern or "")
        if entry is not None and not finding.fix:
            finding.fix = entry.fix["summary"].strip()


__all__ = ["triage", "run_triage", "TriageResult", "DETECTORS", "SourceError"]
