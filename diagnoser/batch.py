"""Diagnose many kernels in one run (`ladder suite --diagnose`, bench/ladder/diagnose_suite.py).

Each kernel climbs its own ladder under exactly the policy of `ladder diagnose`; only the
scheduling differs, so that a whole suite fits in minutes:

1. rung 1 for every kernel, in a pool of worker processes (source analysis is CPU-bound);
2. rung 2's measurements one kernel at a time on the device (timings must not share it), after
   compiling every kernel in parallel into Triton's cache (`ladder suite`'s precompile), then a
   single Nsight Compute process over every kernel (one start instead of one per kernel; a job
   that kills it is dropped and the rest are profiled again);
   Each kernel whose worst case launches several kernels is split into them
   (`ladder.diagnoser.profile.split`) while the deadline leaves room for it.
3. the rest of every climb in the pool again: rung 2's findings, then rungs 3 and 4 where the
   policy climbs them.

Workers are started with `spawn`, so they never inherit the parent's CUDA context.
"""
from __future__ import annotations

import multiprocessing
import os
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Callable

from ladder.diagnoser import gap, ladder

from ladder.diagnoser.subject import Subject, target_for

NCU_RETRIES = 3
NCU_CHUNK = 6  # jobs per ncu process
NCU_MIN_S = 30.0  # no ncu run is started with less time than this left
NCU_TIMEOUT_S = 300.0
FINISH_S = 90.0  # what the climbs after rung 2 need for a whole suite, kept free of the ncu run
PRECOMPILE_S = 120.0  # compiling is only an accelerator: the timing compiles what is left


@dataclass
class Item:
    name: str
    solution: str
    problem: str | None


def _pool(workers: int | None) -> ProcessPoolExecutor:
    count = workers or max(1, min(8, (os.cpu_count() or 2) - 1))
    return ProcessPoolExecutor(max_workers=count, mp_context=multiprocessing.get_context("spawn"))


def _climb(job: tuple) -> dict:
    """One kernel's climb in a worker: (subject, state, selected, exhaustive, measured or error, rung time
    limits or None: each rung then runs in a process of its own, which is what stops a hung compile)."""
    subject_dict, state, selected, exhaustive, measured, limits = job
    subject = Subject(**subject_dict)
    steps = ladder.RUNGS if measured is None else ladder.measured_rungs(measured)
    try:
        return ladder.climb(subject, state, selected, exhaustive, rungs=steps, limits=limits)
    except Exception as error:  # the policy itself failing is a bug; keep the other kernels going
        state = state or ladder.new_state(subject)
        state.setdefault("warnings", []).append(f"climb failed: {type(error).__name__}: {error}")
        return state


def measure(items: list[Item], states: list[dict], use_ncu: bool, deadline: float | None,
            progress: Callable[[str], None], isolate: bool = False) -> list[dict]:
    """Rung 2's measurements for every kernel whose climb reaches it: {"error"} or a profile."""
    from ladder.diagnoser.profile import nvidia, split
    from ladder.runner.precompile import device_target, precompile

    records: dict[int, dict] = {}
    measured: list[dict | None] = [None] * len(items)
    pairs = [(item.solution, item.problem) for item in items if item.problem]
    target = device_target()
    if target and pairs:
        progress(f"compiling every kernel for {target} in parallel")
        precompile(pairs, target, jobs=min(len(pairs), os.cpu_count() or 1, 16), timeout_s=PRECOMPILE_S)
    for index, (item, state) in enumerate(zip(items, states)):
        if item.problem is None:
            measured[index] = {"error": "a script: profiled only by `ladder diagnose` itself"}
            continue
        progress(f"timing {item.name}")
        try:
            records[index] = nvidia.bench(item.solution, item.problem, isolate=isolate)
        except Exception as error:
            measured[index] = {"error": f"{type(error).__name__}: {error}".splitlines()[0]}
    if not records:
        return measured
    device = next(iter(records.values()))["device"]
    ceilings = nvidia.ceilings_for(device, None)
    counters = {"available": False, "why": "ncu not used (--no-ncu)", "cases": {}, "errors": {}}
    if use_ncu:
        deciding = {i: deciding_case(record, ceilings) for i, record in records.items()}
        order = [i for i in records if deciding[i] is not None]
        jobs = [{"solution": items[i].solution, "problem": items[i].problem, "cases": [deciding[i]]} for i in order]
        kernels = sorted({k for i in order for k in nvidia.launched_kernels(records[i])})
        timeout = NCU_TIMEOUT_S if deadline is None else min(NCU_TIMEOUT_S, deadline - time.monotonic() - FINISH_S)
        if timeout < NCU_MIN_S:
            why = f"ncu skipped: {max(timeout, 0):.0f} s left before the deadline"
            progress(why)
            counters = {"available": False, "why": why, "cases": {}, "errors": {}}
        else:
            progress(f"Nsight Compute over {len(jobs)} kernels (at most {timeout:.0f} s)")
            counters = profile_all(jobs, kernels, timeout)
        counters["cases"] = {(order[j], case): v for (j, case), v in counters["cases"].items()}
        counters["errors"] = {(order[j], case): v for (j, case), v in counters["errors"].items()}
        for i in records:
            if deciding[i] is None:
                counters["errors"][(i, "all")] = "not profiled: every case runs at its roofline floor"
    for index, record in records.items():
        try:
            measured[index] = nvidia.assemble(record, ceilings, counters, job=index)
        except Exception as error:
            measured[index] = {"error": f"{type(error).__name__}: {error}".splitlines()[0]}
            continue
        if deadline is None or deadline - time.monotonic() > FINISH_S + split.SPLIT_TIMEOUT_S:
            split.attach_split(measured[index], items[index].solution, items[index].problem)
    return measured


def deciding_case(record: dict, ceilings: dict) -> int | None:
    """The case whose counters decide a batched diagnosis: the furthest below its roofline floor.

    Under ncu most of a job's time goes to building each case and warming it up (compiling,
    autotuning) while every API call is intercepted, so a whole suite with every case does not fit
    in one run. The ladder's verdict hangs on the cases below `gap.AT_ROOFLINE`, the worst of which
    names the class to explain; `ladder diagnose` of a single kernel still profiles every case.
    None when every case already runs at the roofline (nothing for counters to explain).
    """
    from ladder.diagnoser.profile import nvidia

    none = {"available": False, "why": "", "cases": {}, "errors": {}}
    try:
        cases = nvidia.assemble(record, ceilings, none)["cases"]
    except RuntimeError:
        return None
    worst = gap.worst_case([c for c in cases if c.get("efficiency") is not None and c["efficiency"] < gap.AT_ROOFLINE])
    return worst["case"] if worst else None


def profile_all(jobs: list[dict], kernels: list[str], timeout: float) -> dict:
    """ncu over all jobs, `NCU_CHUNK` jobs per ncu process, within `timeout` seconds in all.

    ncu prints its table only when the profiled process ends, so a run cut off by the clock loses
    everything it measured: chunks bound that loss (a chunk that runs past its share is recorded as
    not profiled and the next chunk still runs), and chunks that no longer fit are skipped with a
    reason. Inside a chunk, if the profiled process dies, the job it was in is dropped (recorded
    as an error) and the jobs after it are profiled again, up to `NCU_RETRIES` runs.
    """
    from ladder.diagnoser.profile import ncu

    merged = {"available": False, "why": "", "cases": {}, "errors": {}}
    deadline = time.monotonic() + timeout
    chunks = [list(range(i, min(i + NCU_CHUNK, len(jobs)))) for i in range(0, len(jobs), NCU_CHUNK)]
    for number, chunk in enumerate(chunks):
        pending = chunk
        for _ in range(NCU_RETRIES):
            left = deadline - time.monotonic()
            if not pending or left < NCU_MIN_S:
                break
            remaining = len(pending) + sum(len(c) for c in chunks[number + 1:])
            share = min(left, max(2 * NCU_MIN_S, 2 * left * len(pending) / remaining))  # a hang costs one chunk
            got = ncu.profile_jobs([jobs[i] for i in pending], kernels, share)
            if got.get("timed_out"):  # ncu works but this chunk is too slow for its share: move on
                for i in pending:
                    merged["errors"][(i, "all")] = f"not profiled: {got['why']}"
                pending = []
                break
            merged["why"] = merged["why"] or got["why"]
            merged["available"] = merged["available"] or got["available"]
            for key in ("cases", "errors"):
                for (j, case), value in got[key].items():
                    merged[key][(pending[j], case)] = value
            begun = [pending[j] for j in got["started"]]
            finished = {pending[j] for (j, _case) in list(got["cases"]) + list(got["errors"])}
            unfinished = [i for i in pending if i not in finished]
            if not got["available"] and not begun:
                return merged  # ncu itself cannot run here: no point in trying other chunks
            culprit = begun[-1] if begun and begun[-1] in unfinished else None
            if culprit is None:
                pending = []
                break
            merged["errors"][(culprit, "all")] = "the profiled process died in this job"
            pending = [i for i in unfinished if i > culprit]
        out_of_time = deadline - time.monotonic() < NCU_MIN_S
        for i in pending:
            merged["errors"][(i, "all")] = ("not profiled: the run's time budget was spent" if out_of_time
                                            else "not profiled: the profiled process kept dying in this chunk")
    if merged["available"]:
        merged["why"] = f"{sum(len(v) for v in merged['cases'].values())} launches profiled"
    return merged


def diagnose_many(items: list[Item], *, selected: set[int] | None = None, exhaustive: bool = False,
                  backend: str = "auto", target: str | None = None, use_ncu: bool = True,
                  index_dir: str | None = None, workers: int | None = None, deadline: float | None = None,
                  isolate: bool = False, limits: dict[str, float | None] | None = None,
                  progress: Callable[[str], None] = lambda line: None) -> list[dict]:
    """The diagnosis state of every item, in order (see the module docstring for the schedule).

    `target` is every kernel's compile target (`sm90`, `ascend`); without one each kernel gets the
    one its backend and code call for (`ladder.diagnoser.subject.target_for`).
    `deadline` (time.monotonic()) bounds the ncu run, leaving `FINISH_S` for the rest of the climbs.
    `isolate` times each kernel in its own runner worker (survives crashes; a few seconds more per
    kernel); by default the timing runs in this process, as `ladder suite` does for its own kernels.
    `limits` (seconds per rung name, as `ladder diagnose --rung-timeout`) runs every rung of every
    climb in a process of its own under its limit: a hung compile is stopped and recorded as a timed-out
    rung, and the pool goes on; without, rungs run in the pool's workers.
    """
    from ladder.runner.backends import detect

    selected = set(selected or {1, 2, 3, 4})
    name, device = detect(backend)
    subjects = [Subject(item.solution, item.problem, script=item.problem is None, backend=name,
                        target=target_for(name, item.solution, item.problem, target), device=device)
                for item in items]
    states = []
    for subject in subjects:
        state = ladder.new_state(subject)
        state["options"] = {"ncu": use_ncu, "index_dir": index_dir}
        states.append(state)
    progress(f"rung 1 for {len(items)} kernels")
    states = _climb_all([(s.to_dict(), st, selected & {1}, exhaustive, None, limits)
                         for s, st in zip(subjects, states)], workers)
    measured: list[dict | None] = [None] * len(items)
    if 2 in selected and device is not None and name == "cuda":
        measured = measure(items, states, use_ncu, deadline, progress, isolate)
    progress(f"rungs 2-4 for {len(items)} kernels")
    return _climb_all([(s.to_dict(), st, selected, exhaustive, m, limits)
                       for s, st, m in zip(subjects, states, measured)], workers)


def _climb_all(jobs: list[tuple], workers: int | None) -> list[dict]:
    """`_climb` over every job in the pool. A worker that dies (a compiler crash, say) breaks the
    pool: the unfinished jobs get one more try in a fresh pool, then a state that says so."""
    results: list[dict | None] = [None] * len(jobs)
    pending = list(range(len(jobs)))
    for attempt in range(2):
        with _pool(workers) as pool:
            futures = {index: pool.submit(_climb, jobs[index]) for index in pending}
            failures = {}
            for index, future in futures.items():
                try:
                    results[index] = future.result()
                except Exception as error:
                    failures[index] = f"{type(error).__name__}: {error}".splitlines()[0]
        pending = list(failures)
        if not pending:
            break
    for index, reason in failures.items():
        state = jobs[index][1]
        state.setdefault("warnings", []).append(f"the worker climbing this kernel died twice ({reason})")
        results[index] = state
    return results


def summary_row(name: str, state: dict) -> dict:
    """One line of the suite table: rung reached, the class of the worst case (`gap.worst_case`), the
    findings, and the seconds its climb took (each rung's and their sum)."""
    worst = gap.worst_case((state.get("profile") or {}).get("cases", []))
    patterns = sorted({f["pattern"] for f in state["findings"] if f.get("pattern")})
    return {
        "kernel": name, "reached": state["reached"],
        "rungs": {str(r["rung"]): {"ran": r["ran"], "status": r["status"], "why": r["why"], "seconds": r["seconds"]}
                  for r in state["rungs"]},
        "seconds": round(sum(r["seconds"] for r in state["rungs"]), 1),
        "explained": state["gap"]["explained"], "gap": state["gap"]["why"],
        "worst_case": None if worst is None else {"case": worst["case"], "efficiency": worst["efficiency"],
                                                  "class": worst.get("class")},
        "findings": len(state["findings"]), "patterns": patterns,
        "citations": [f"{c['path']}:{c['start']}-{c['end']}" for c in state.get("citations", [])],
        "failed": [f"rung {r['rung']}: {r['error']}" for r in state["rungs"] if r["status"] == "failed"],
    }


def climbed(rows: list[dict]) -> dict[int, int]:
    """For each rung, how many kernels' climbs ran it."""
    return {n: sum(1 for row in rows if row["rungs"][str(n)]["ran"]) for n in (1, 2, 3, 4)}


def table(rows: list[dict]) -> str:
    """The terminal table of `ladder suite --diagnose`."""
    header = ["kernel", "rung", "worst case", "class", "explained", "time", "findings"]
    lines = [header]
    for row in rows:
        worst = row["worst_case"]
        lines.append([row["kernel"], str(row["reached"]),
                      "-" if worst is None else f"{worst['efficiency']:.0%} of floor",
                      "-" if worst is None else str(worst["class"]),
                      "yes" if row["explained"] else "no",
                      f"{row['seconds']:.1f} s" if row.get("seconds") is not None else "-",
                      f"{row['findings']}: " + (", ".join(row["patterns"]) or "uncatalogued") if row["findings"] else "-"])
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    out = ["  ".join(cell.ljust(width) for cell, width in zip(line, widths)).rstrip() for line in lines]
    out.insert(1, "  ".join("-" * width for width in widths))
    out.append("")
    out.append("rungs climbed: " + ", ".join(f"rung {n}: {count}/{len(rows)}" for n, count in climbed(rows).items()))
    for row in rows:
        for failure in row["failed"]:
            out.append(f"{row['kernel']}: {failure}")
    return "\n".join(out)


def chain(name: str, state: dict) -> str:
    """One kernel's evidence chain in a few lines: symptom -> finding -> IR fact -> compiler code.

    The chain follows rung 4's first answer: the facts it was about, the lower-rung finding on the
    same line (else the most confident one that can cause the worst case's class), and the code.
    """
    from ladder.diagnoser.evidence import fact_of

    lines = [f"{name} (reached rung {state['reached']}): {state['gap']['why']}"]
    worst = gap.worst_case((state.get("profile") or {}).get("cases", []))
    if worst:
        lines.append(f"  symptom: case {worst['case']} at {worst['efficiency']:.0%} of its roofline floor, "
                     f"{worst.get('class')} ({worst.get('why')})")
    answer = next((f for f in state["findings"] if f["rung"] == 4), None)
    facts = [fact_of(e) for e in (answer or {}).get("evidence", []) if e.get("type") == "fact"]
    lower = [f for f in state["findings"] if f["rung"] < 4]
    if facts:
        related = ([f for f in lower if f.get("line") == facts[0].get("line")]
                   or [f for f in lower if any(e.get("type") == "fact" and fact_of(e)["kind"] == facts[0]["kind"]
                                               for e in f.get("evidence", []))])
    else:
        related = [f for f in lower if worst and worst.get("class") in gap.causes_of(f)] or lower
    finding = max(related, key=lambda f: f.get("confidence", 0), default=None)
    if finding:
        lines.append(f"  finding: {finding.get('pattern') or 'uncatalogued'} (rung {finding['rung']}) at line "
                     f"{finding.get('line')}: {finding['title']}")
    elif facts:
        lines.append("  finding: none from the catalog; rung 4 explains an IR fact no lower rung reported")
    if facts:
        lines.append(f"  IR fact: {facts[0]['kind']} at line {facts[0].get('line')} in {facts[0].get('kernel')}:"
                     f" {facts[0].get('value')}")
    chunk = next((e for e in (answer or {}).get("evidence", []) if e.get("type") == "chunk"), None)
    citation = next((c for c in state.get("citations", []) if chunk and (c["path"], c["start"]) == (chunk["path"], chunk["start"])), None)
    if citation:
        lines.append(f"  compiler: {citation['statement']}")
    return "\n".join(lines)
