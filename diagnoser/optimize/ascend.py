"""``ladder optimize --target ascend``: the loop for Ascend NPUs, with an NPU or without one.

Without an NPU every round is **compile-only** (``compile_only_gate``): the candidates run under
Triton's interpreter on the problem's small test cases (correctness, nothing timed), are compiled
for Ascend by Triton-Ascend (ttir -> ttadapter, in its own environment) and their IR is diagnosed
with the Ascend catalog (rungs 1 and 3). Each verdict says whether the candidate compiles, whether
it is correct, which npu.* patterns its IR no longer shows and which it still shows, and that it
is not accepted because nothing was timed: the best stays the initial version, so the run ends
when the proposer has nothing new (or after ``--patience`` rounds), and its journal is the list
of candidates worth timing on an NPU.

With ``--backend npu`` the loop is the usual one: the judge times candidates with torch_npu
events (``ladder.runner.backends.npu``), the gate accepts what is correct and faster, and each round's
diagnosis reads rung 2 from the gate's timing of the best against the Ascend part's ceilings
(``diagnose_best``). That path is written to torch_npu's and msprof's documented APIs and is
untested on hardware.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from ladder.diagnoser.optimize.gate import (BEST, INITIAL, CandidateVerdict, GateResult, GateSettings, case_rows,
                                     without_secrets)

if TYPE_CHECKING:
    from ladder.diagnoser.optimize.loop import Run

COMPILE_ONLY = "Triton-Ascend compile-only (no NPU: correctness under the interpreter, nothing timed)"
NOT_TIMED = "not accepted: nothing can be timed without an NPU (run with --backend npu to time it)"


def is_ascend(target: str) -> bool:
    return target.split(":", 1)[0] in ("ascend", "npu")


def gate_for(target: str, backend: str | None) -> Callable[..., GateResult] | None:
    """The compile-only gate for an Ascend target without the npu backend; None: the usual gate."""
    return compile_only_gate if is_ascend(target) and backend != "npu" else None


def diagnose_for(target: str) -> Callable[..., dict[str, Any]] | None:
    """The Ascend diagnosis of the best for an Ascend target; None: the usual one."""
    return diagnose_best if is_ascend(target) else None


def compile_only_gate(problem: Path, best: Path, initial: Path, candidates: dict[str, Path], settings: GateSettings,
                      torch_compile: bool = False, bench: Callable[..., dict] | None = None,
                      progress: Callable[[dict], None] | None = None, target: str = "ascend") -> GateResult:
    """The round's candidates, checked without timing: correct under the interpreter, compiled for
    Ascend, their IR against the best's (``torch_compile`` is ignored: there is nothing to time)."""
    from ladder.runner.bench import bench as runner_bench

    solutions: dict[str, Path] = {BEST: best}
    if initial.read_bytes() != best.read_bytes():
        solutions[INITIAL] = initial
    solutions.update(candidates)
    with without_secrets():
        result = (bench or runner_bench)(problem, solutions, "interpret", timeout=settings.timeout_s, progress=progress,
                                         seeds=settings.seeds, quick=True, time=False)
    shown = {name: ir_patterns(path, problem, target) for name, path in [(BEST, best), *candidates.items()]}
    verdicts = {name: _verdict(name, result["solutions"][name], shown[name], shown[BEST]) for name in candidates}
    result["ascend_ir"] = shown
    return GateResult(verdicts=verdicts, spread=0.0, best_cases=case_rows(result["solutions"][BEST], {}, {}, {}),
                      device=COMPILE_ONLY, device_uuid=None, timed=False, record=result)


def ir_patterns(solution: Path, problem: Path, target: str) -> dict[str, Any]:
    """{"patterns": the npu.* ids the solution's ttadapter IR shows (rung 3), "error": why it did
    not compile, or None}."""
    from ladder.diagnoser.ir import capture, extract_facts
    from ladder.diagnoser.triage import triage

    try:
        kernels = capture(solution, problem, target=target)
    except Exception as error:  # an environment or a capture that fails is this candidate's verdict
        return {"patterns": [], "error": str(error).splitlines()[0] if str(error) else type(error).__name__}
    failed = next((kernel for kernel in kernels if kernel.error), None)
    if failed is not None:
        return {"patterns": [], "error": f"{failed.name}: {failed.error}"}
    found = triage(str(solution), str(problem), facts=extract_facts(kernels), target=target)
    return {"patterns": sorted({f.pattern for f in found if f.pattern and f.rung >= 3}), "error": None}


def _verdict(name: str, report: dict[str, Any], shown: dict[str, Any], best: dict[str, Any]) -> CandidateVerdict:
    rejected = report.get("rejected")
    compiled = not (rejected and rejected.get("stage") in ("static", "load")) and shown["error"] is None
    correct = bool(report.get("ok"))
    verdict = CandidateVerdict(name, False, "", compiled, correct, False, cases=case_rows(report, {}, {}, {}))
    wrong = next((c for c in report.get("cases", []) if not c["correct"]), None)
    if rejected:
        verdict.reason = f"rejected ({rejected['stage']}): {rejected['reason']}"
    elif wrong is not None:
        verdict.reason = f"case {wrong.get('label')}: {wrong.get('reason')} (under the interpreter)"
    elif shown["error"] is not None:
        verdict.reason = f"correct under the interpreter, but does not compile for Ascend: {shown['error']}"
    else:
        gone = sorted(set(best["patterns"]) - set(shown["patterns"]))
        kept = sorted(set(shown["patterns"]) - set(gone))
        ir = (f"its ttadapter IR no longer shows {', '.join(gone)}" if gone else "its ttadapter IR shows no pattern fewer")
        verdict.reason = (f"correct under the interpreter and compiles for Ascend; {ir}"
                          + (f" (still shows {', '.join(kept)})" if kept else "") + f"; {NOT_TIMED}")
    return verdict


def diagnose_best(best: Path, problem: Path, last_gate: GateResult | None, run: "Run") -> dict[str, Any]:
    """The ladder on the best for the run's Ascend target: on an NPU, rung 2 from the gate's timing of
    the best (no second device run); without one, rungs 1, 3 and 4 on the compiled IR."""
    from ladder.diagnoser import ladder
    from ladder.diagnoser.subject import Subject

    timed = last_gate is not None and last_gate.timed and last_gate.record.get("backend") == "npu"
    subject = Subject(str(best), str(problem), backend="npu" if timed else "aot", target=run.settings.target,
                      device=last_gate.device if timed else None)
    steps = ladder.measured_rungs(_profile_from_gate(last_gate, run.best_in_gate)) if timed else ladder.RUNGS
    state = ladder.new_state(subject)
    state["options"] = {"ncu": False}
    return ladder.climb(subject, state, set(run.settings.rungs), rungs=steps, limits=run.settings.rung_timeouts)


def _profile_from_gate(result: GateResult, name: str) -> dict[str, Any]:
    """Rung 2's profile of contestant ``name`` as the gate timed it."""
    from ladder.diagnoser.profile import ascend
    from ladder.runner.bench import flat_record

    return ascend.assemble(flat_record(result.record, name), {}, "msprof not used in the loop")
