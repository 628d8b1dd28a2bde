"""The four rungs, as the ladder's table names them: subject and state in, new outputs out.

Rungs never import the policy (`ladder.diagnoser.ladder`); what both need is in `ladder.diagnoser.subject`.
Each rung imports its's package only when it runs, so `ladder diagnose` starts fast and a
machine without the index's packages (the GPU machine) still climbs rungs 1 to 3. Options a rung
reads (ncu on or off, where the index is) travel in `state["options"]`, so they are part of the
record a resumed climb continues from.
"""
from __future__ import annotations

import copy
from collections import Counter

from ladder.diagnoser.subject import NothingLaunched, RungUnavailable, Subject
from ladder.runner.errors import one_line


def _triage(subject: Subject, state: dict, facts: list[dict] | None = None, metrics: dict | None = None) -> list[dict]:
    from ladder.diagnoser.evidence import Fact
    from ladder.diagnoser.triage import triage

    found = triage(subject.solution, subject.problem, facts=[Fact.from_dict(f) for f in facts] if facts else None,
                   metrics=metrics, target=subject.target, script=subject.script)
    return [f.to_dict() if hasattr(f, "to_dict") else dict(f) for f in found]


def measured_metrics(profile: dict | None) -> dict | None:
    """Rung 2's measurements as triage's profile detectors read them: per kernel, the counters of
    its costliest launch over all cases (ncu groups: sol, occupancy, launch, stalls), the launches
    per forward and the roofline class of that case."""
    if not profile:
        return None
    per_kernel: dict[str, dict] = {}
    for case in profile.get("cases", []):
        if not case.get("class"):
            continue
        launches = (case.get("ncu") or {}).get("launches") or [{"kernel": k} for k in case.get("kernels", [])]
        for launch in launches:
            name = launch.get("kernel")
            cost = launch.get("time_ns") or 0.0
            if name is None or (name in per_kernel and per_kernel[name].get("time_ns", 0.0) >= cost and cost):
                continue
            metrics = {key: launch[key] for key in ("sol", "occupancy", "launch", "stalls", "memory") if key in launch}
            if launch.get("time_ns"):
                metrics["time_ns"] = launch["time_ns"]
            metrics["launches_per_forward"] = case.get("launches")
            metrics["roofline_class"] = case["class"].removesuffix("-bound")
            per_kernel[name] = metrics
    return per_kernel or None


def triage(subject: Subject, state: dict) -> dict:
    findings = _triage(subject, state)
    return {"findings": findings, "summary": _count(findings, "finding")}


def profile(subject: Subject, state: dict) -> dict:
    from ladder.diagnoser.profile import profile

    measured = profile(subject.solution, subject.problem, subject.backend, script=subject.script,
                       use_ncu=state.get("options", {}).get("ncu", True))
    return profiled(subject, state, measured)


def replayed_profile(measured: dict, subject: Subject, state: dict) -> dict:
    """Rung 2 from measurements taken before the climb (a batch's device pass, the loop's gate), or
    the error they ended in. Module-level, with the measurements bound by ``functools.partial``, so
    the rung can still run in a process of its own under its time limit."""
    if "error" in measured:
        raise RuntimeError(measured["error"])
    return profiled(subject, state, measured)


def profiled(subject: Subject, state: dict, measured: dict) -> dict:
    """Rung 2's output from its measurements: the profile plus what triage reads in it."""
    findings = [f for f in _triage(subject, state, metrics=measured_metrics(measured)) if f.get("rung", 1) >= 2]
    classes = Counter(c.get("class") for c in measured["cases"] if c.get("class"))
    summary = f"{len(measured['cases'])} cases: " + ", ".join(f"{n} {k}" for k, n in classes.most_common())
    return {"profile": measured, "findings": findings, "summary": summary}


def ir(subject: Subject, state: dict) -> dict:
    from pathlib import Path

    from ladder.diagnoser.ir import capture, extract_facts
    from ladder.runner.ascend_ir import AscendUnavailable

    backend = "cuda" if subject.backend == "cuda" and subject.device else "aot"
    refused = None
    try:
        kernels = capture(subject.solution, subject.problem, target=subject.target, backend=backend)
    except AscendUnavailable as missing:
        raise RungUnavailable(str(missing)) from None
    except Exception as error:
        if backend != "cuda" or not refused_by_device(error):
            raise
        # The JIT compiled the kernel and the device would not load it: the IR exists all the same,
        # and the refusal is the strongest evidence this rung has, so it is kept, not a failed rung.
        refused = f"the device refused to launch it: {one_line(error)}"
        backend = "aot"
        kernels = capture(subject.solution, subject.problem, target=subject.target, backend=backend)
    if not kernels:
        raise NothingLaunched(f"{Path(subject.solution).name} launched no Triton kernel ({backend} capture): "
                              "nothing to diagnose")
    facts = [f.to_dict() for f in extract_facts(kernels)]
    output = {"facts": facts, "summary": f"{len(facts)} facts ({backend} capture)"}
    if refused:
        output["launch_refused"] = refused
        output["summary"] += f"; {refused}"
    if state.get("profile") and state["profile"].get("backend") == "cuda":
        from ladder.diagnoser.profile.nvidia import attach_occupancy

        output["profile"] = copy.deepcopy(state["profile"])
        attach_occupancy(output["profile"], facts)
    settled = _settle(subject, facts, measured_metrics(state.get("profile")))
    findings = [f.to_dict() for f in settled.findings if f.rung >= 3]
    output["findings"] = findings
    output["vetoed"] = settled.vetoed
    output["summary"] += f", {_count(findings, 'finding')}" + (f", {len(settled.vetoed)} vetoed" if settled.vetoed else "")
    return output


def refused_by_device(error: BaseException) -> bool:
    """Triton's "out of resource" (shared memory, registers): raised when the device loads a kernel
    that compiled, so a compile-only capture still gets its IR."""
    try:
        from triton.runtime.errors import OutOfResources
    except ImportError:
        return False
    return isinstance(error, OutOfResources)


def _settle(subject: Subject, facts: list[dict], metrics: dict | None):
    """Triage again with rung 3's facts: the findings they confirm or add, and the rung-1 findings
    they veto (with why), for the policy to fold into the state (`ladder.diagnoser.agreement.fold`)."""
    from ladder.diagnoser.evidence import Fact
    from ladder.diagnoser.triage import run_triage

    return run_triage(subject.solution, subject.problem, facts=[Fact.from_dict(f) for f in facts], metrics=metrics,
                      target=subject.target, script=subject.script)


def compiler(subject: Subject, state: dict) -> dict:
    index_dir = state.get("options", {}).get("index_dir")
    search = _search(index_dir)
    from ladder.diagnoser.compiler import escalate
    from ladder.indexer.store import Store

    return escalate(state.get("facts", []), state.get("findings", []), search, target=subject.target,
                    catalog=catalog_compiler_refs(), compiler_source=Store(index_dir).has_compiler_source())


def _search(index_dir: str | None):
    """ladder.indexer.search bound to the index and to the relevance below which a result is noise,
    or RungUnavailable saying what is missing here."""
    for module in ("onnxruntime", "bm25s"):
        try:
            __import__(module)
        except ImportError:
            raise RungUnavailable(f"{module} is not installed here; finish on a machine with the index:"
                                  " ladder diagnose --from REPORT.json") from None
    from ladder import indexer
    from ladder.indexer.rerank import MIN_RELEVANCE
    from ladder.indexer.store import Store

    store = Store(index_dir)
    if store.current_id() is None:
        raise RungUnavailable(f"no index at {store.root} (build it with `ladder index build`)")

    def search(query: str, k: int = 5, where: dict | None = None) -> list[dict]:
        return indexer.search(query, k=k, where=where, index_dir=index_dir, min_score=MIN_RELEVANCE)
    return search


def catalog_compiler_refs() -> dict[str, list[dict]]:
    """Catalog id -> the compiler code its entry names (`compiler`: path, lines, symbol, why).

    Entries are read one by one, so one entry that does not validate costs only its own refs.
    """
    from ladder.diagnoser.triage.catalog import PATTERNS_DIR, CatalogError, load_entry

    refs: dict[str, list[dict]] = {}
    for path in sorted(PATTERNS_DIR.glob("*.yaml")):
        try:
            entry = load_entry(path)
        except CatalogError:
            continue
        refs[entry.id] = [ref for ref in entry.compiler if isinstance(ref, dict) and ref.get("path")]
    return refs


def _count(items: list, noun: str) -> str:
    return f"{len(items)} {noun}{'' if len(items) == 1 else 's'}"
