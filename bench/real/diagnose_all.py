"""Diagnose every script of the real-kernel set (bench/sets/real) in one batched, resumable run.

On the H200 host (rungs 1-3 with Nsight Compute, one climb per GPU at a time, stopping cleanly before
a 600 s call ends):

    PYTHONPATH=. python3 bench/real/diagnose_all.py --out bench/results/real-h200 --deadline 540 --gpus all

and again with the same --out (the folder carried over from the last call) until it prints
"diagnose_all: done" (exit 0; 3 means stopped at the deadline with scripts left). Each script's
record is written as soon as its climb ends (OUT/scripts/NAME.json, the full report in
OUT/reports/NAME.json), so a rerun skips the scripts already done; a script cut off by the deadline is
not recorded and runs again; one that ran past its own --timeout is recorded as such
(--retry-failed runs those again). The device's ceilings are measured once first (OUT/ceilings.json).

On a CPU (compile-only rungs 1 and 3, each script at its small size):

    python bench/real/diagnose_all.py --out /tmp/real --backend aot --small

Each climb is `python -m ladder.diagnoser diagnose SCRIPT --rungs 1-3 --exhaustive --json --backend B` in its
own process group (a script that hangs is killed with its children). After every script,
OUT/summary.json and OUT/summary.md give the rates the set is judged by: diagnoses completed (a
parsable report, no failed rung, a kernel captured), rung 2 measured, the gap to the roofline
assessed (at least one case placed on the roofline), and rungs 1-3 within 60 s.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from ladder.diagnoser import batch

SET = REPO / "bench" / "sets" / "real"
RUNG_LIMIT_S = 60.0  # rungs 1-3 of one script, together
GAP_TARGET = 0.95  # share of scripts whose gap to the roofline must be assessed
START_MARGIN_S = RUNG_LIMIT_S  # no climb starts with less left before the deadline: it would be cut off


def scripts(folder: Path, only: list[str]) -> list[Path]:
    """The set's scripts in name order (files starting with `_` are helpers, not scripts)."""
    found = sorted(p for p in folder.glob("*.py") if not p.name.startswith("_"))
    if only:
        unknown = sorted(set(only) - {p.stem for p in found})
        if unknown:
            raise SystemExit(f"diagnose_all: no such script in {folder}: {', '.join(unknown)}")
        found = [p for p in found if p.stem in only]
    return found


def parse_report(stdout: str) -> tuple[dict | None, str]:
    """The `--json` report and how clean stdout was: "clean" (only the report), "mixed" (the
    script's own output around it), or "none" (no report to be found)."""
    try:
        return json.loads(stdout), "clean"
    except json.JSONDecodeError:
        pass
    start = stdout.find('{"schema"')
    if start < 0:
        start = stdout.find('{\n')
    if start >= 0:
        try:
            report, _ = json.JSONDecoder().raw_decode(stdout[start:])
            return report, "mixed"
        except json.JSONDecodeError:
            pass
    return None, "none"


def run_climb(script: Path, args: argparse.Namespace, gpu: str | None, seconds: float) -> dict:
    """One `ladder diagnose` in its own process group, killed with its children after `seconds`."""
    command = [sys.executable, "-m", "ladder.diagnoser", "diagnose", str(script), "--rungs", args.rungs,
               "--json", "--backend", args.backend, *([] if args.policy else ["--exhaustive"]),
               *(["--no-ncu"] if args.no_ncu else [])]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    if args.small:
        env["LADDER_SIZE"] = "small"
    if gpu is not None:
        env["CUDA_VISIBLE_DEVICES"] = gpu
    started = time.monotonic()
    process = subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, start_new_session=True)
    try:
        stdout, stderr = process.communicate(timeout=seconds)
        timed_out = False
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
        timed_out = True
    return {"command": command, "gpu": gpu, "exit": None if timed_out else process.returncode, "timed_out": timed_out,
            "limit_s": seconds,
            "wall_s": round(time.monotonic() - started, 1), "stdout": stdout, "stderr": stderr}


def kernels_of(report: dict) -> list[str]:
    """The kernels the climb saw (rung 3's facts, rung 2's cases, the findings), by @triton.jit name."""
    names = {f.get("kernel") for f in report.get("facts", [])} | {f.get("kernel") for f in report.get("findings", [])}
    for case in (report.get("profile") or {}).get("cases", []):
        names |= set(case.get("kernels") or [])
    # a specialization is labelled `name[what differs]`; the kernel is the name
    return sorted({name.split("[", 1)[0] for name in names if isinstance(name, str) and name})


def not_completed_because(run: dict, report: dict | None, kernels: list[str]) -> str | None:
    """Why a climb does not count as a completed diagnosis, or None when it does."""
    if run["timed_out"]:
        return f"ran past {run['limit_s']:.0f} s"
    if report is None or "rungs" not in report:
        return "no `--json` report on stdout"
    failed = [r for r in report["rungs"] if r["status"] == "failed"]
    if failed:
        return f"rung {failed[0]['rung']} failed: {failed[0]['error']}"
    if run["exit"] != 0:
        return f"exit status {run['exit']}"
    if not kernels:
        return "no Triton kernel captured"
    return None


def record_of(script: Path, run: dict) -> tuple[dict, dict | None]:
    """What the set is judged by, for one climb: (the record, the parsed report)."""
    report, stdout_kind = parse_report(run["stdout"]) if not run["timed_out"] else (None, "none")
    if report is not None and "rungs" not in report:
        report = None
    kernels = kernels_of(report) if report else []
    why = not_completed_because(run, report, kernels)
    record = {"script": script.stem, "exit": run["exit"], "timed_out": run["timed_out"], "wall_s": run["wall_s"],
              "gpu": run["gpu"], "stdout": stdout_kind, "limit_s": run["limit_s"], "completed": why is None,
              "why_not": why, "kernels": kernels, "stderr_tail": run["stderr"].strip().splitlines()[-3:]}
    if report is None:
        return {**record, "rung2_measured": False, "gap_assessed": False, "rungs_1_3_s": None,
                "within_limit": False}, None
    row = batch.summary_row(script.stem, report)
    rung_seconds = {str(r["rung"]): r["seconds"] for r in report["rungs"] if r["rung"] in (1, 2, 3)}
    rungs_1_3 = round(sum(rung_seconds.values()), 1)
    cases = [c for c in (report.get("profile") or {}).get("cases", []) if c.get("efficiency") is not None]
    return {**record, "reached": report.get("reached"), "rung_seconds": rung_seconds, "rungs_1_3_s": rungs_1_3,
            "within_limit": rungs_1_3 <= RUNG_LIMIT_S, "rung2_measured": row["rungs"].get("2", {}).get("status") == "ok",
            "gap_assessed": bool(cases), "gap_explained": report["gap"]["explained"], "gap": report["gap"]["why"],
            "worst_case": row["worst_case"], "findings": row["findings"], "patterns": row["patterns"],
            "rungs": row["rungs"]}, report


def rate(records: list[dict], key: str) -> dict:
    hits = sum(1 for r in records if r.get(key))
    return {"count": hits, "of": len(records), "rate": round(hits / len(records), 3) if records else None}


def summarize(records: list[dict], total: int, args: argparse.Namespace) -> dict:
    """The set's headline numbers and whether each meets its target."""
    completed, gap = rate(records, "completed"), rate(records, "gap_assessed")
    within = rate(records, "within_limit")
    return {"backend": args.backend, "small": args.small, "rungs": args.rungs, "scripts": total,
            "done": len(records), "completed": completed, "rung2_measured": rate(records, "rung2_measured"),
            "gap_assessed": gap, "within_limit": within, "limit_s": RUNG_LIMIT_S,
            "kernels": len({(r["script"], k) for r in records for k in r.get("kernels", [])}),
            "targets": {"all completed": completed["count"] == total,
                        f"gap assessed on >= {GAP_TARGET:.0%}": gap["count"] >= GAP_TARGET * total,
                        f"rungs 1-3 within {RUNG_LIMIT_S:.0f} s on all": within["count"] == total},
            "records": records}


def markdown(summary: dict) -> str:
    def share(part: dict) -> str:
        return f"{part['count']}/{part['of']}" + (f" ({part['rate']:.0%})" if part["of"] else "")

    lines = [f"# The real-kernel set through `ladder diagnose --rungs {summary['rungs']}`", "",
             (f"Backend {summary['backend']}{', small sizes' if summary['small'] else ''}; "
              f"{summary['done']} of {summary['scripts']} scripts done, {summary['kernels']} kernels captured."), "",
             f"- completed (a parsable report, no failed rung, a kernel captured): {share(summary['completed'])}",
             f"- rung 2 measured: {share(summary['rung2_measured'])}",
             f"- gap to the roofline assessed: {share(summary['gap_assessed'])}",
             f"- rungs 1-3 within {summary['limit_s']:.0f} s: {share(summary['within_limit'])}", "",
             "Targets: " + "; ".join(f"{name}: {'met' if met else 'NOT met'}" for name, met in summary["targets"].items()),
             "", "| script | exit | wall s | rung 1 s | rung 2 s | rung 3 s | rung 2 | gap | worst case | findings |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in summary["records"]:
        seconds = r.get("rung_seconds") or {}
        worst = r.get("worst_case")
        rung2 = (r.get("rungs") or {}).get("2", {}).get("status", "-")
        lines.append("| " + " | ".join([
            r["script"], "timeout" if r["timed_out"] else str(r["exit"]), f"{r['wall_s']:.1f}",
            *(f"{seconds[n]:.1f}" if n in seconds else "-" for n in ("1", "2", "3")), rung2,
            ("explained" if r.get("gap_explained") else "assessed") if r["gap_assessed"] else "unknown",
            "-" if not worst else f"{worst['efficiency']:.0%} of floor, {worst['class']}",
            ", ".join(r.get("patterns") or []) or str(r.get("findings", "-"))]) + " |")
    failures = [r for r in summary["records"] if not r["completed"]]
    if failures:
        lines += ["", "## Not completed", ""] + [f"- {r['script']}: {r['why_not']}" for r in failures]
    return "\n".join(lines) + "\n"


class Store:
    """OUT/scripts/NAME.json per finished climb, OUT/reports/NAME.json, and the summaries."""

    def __init__(self, out: Path):
        self.out, self.lock = out, threading.Lock()
        for folder in ("scripts", "reports"):
            (out / folder).mkdir(parents=True, exist_ok=True)

    def done(self, retry_failed: bool) -> dict[str, dict]:
        records = {p.stem: json.loads(p.read_text()) for p in sorted((self.out / "scripts").glob("*.json"))}
        return {name: r for name, r in records.items() if r["completed"] or not retry_failed}

    def save(self, record: dict, report: dict | None) -> None:
        with self.lock:
            if report is not None:
                (self.out / "reports" / f"{record['script']}.json").write_text(json.dumps(report, indent=1, default=str))
            (self.out / "scripts" / f"{record['script']}.json").write_text(json.dumps(record, indent=1))

    def write_summary(self, names: list[str], args: argparse.Namespace) -> dict:
        with self.lock:
            records = [r for name, r in self.done(retry_failed=False).items() if name in names]
            summary = summarize(records, len(names), args)
            (self.out / "summary.json").write_text(json.dumps(summary, indent=1))
            (self.out / "summary.md").write_text(markdown(summary))
            return summary


def measure_ceilings(out: Path) -> dict:
    """Measure and cache the GPU's ceilings once, so that no climb pays for it (the cache is per
    device name, shared by all GPUs of the host); a failure is recorded, the climbs then use the
    device table's defaults."""
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "ladder.runner.roofline", "cuda"], cwd=REPO, capture_output=True,
                          text=True, check=False, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    result = {"seconds": round(time.monotonic() - started, 1), "ok": done.returncode == 0,
              "output": (done.stdout if done.returncode == 0 else done.stderr).strip().splitlines()[-8:]}
    (out / "ceilings.json").write_text(json.dumps(result, indent=1))
    return result


def on_a_gpu(backend: str) -> bool:
    if backend == "aot":
        return False
    import torch

    return torch.cuda.is_available()


def gpu_slots(text: str | None) -> list[str | None]:
    """`all` -> every visible CUDA device, `0,1` -> those, none -> one slot with no pinning."""
    if not text:
        return [None]
    if text == "all":
        import torch

        return [str(i) for i in range(torch.cuda.device_count())] or [None]
    return [part.strip() for part in text.split(",") if part.strip()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, type=Path, help="where records and summaries go (resumable)")
    parser.add_argument("--set", dest="folder", type=Path, default=SET, help="the folder of scripts")
    parser.add_argument("--only", nargs="*", default=[], help="script names (stems) to run")
    parser.add_argument("--backend", default="auto", choices=["auto", "cuda", "aot"])
    parser.add_argument("--rungs", default="1-3")
    parser.add_argument("--small", action="store_true", help="run each script at its small size (LADDER_SIZE=small)")
    parser.add_argument("--no-ncu", action="store_true", help="profile with events only")
    parser.add_argument("--policy", action="store_true",
                        help="let the policy stop the climb (default: --exhaustive, so every rung's time is measured)")
    parser.add_argument("--timeout", type=float, default=180.0, help="seconds one climb may take before it is killed")
    parser.add_argument("--deadline", type=float, default=540.0, help="seconds after which no script starts or runs on")
    parser.add_argument("--gpus", help="run one climb per GPU at a time: all, or a list like 0,1")
    parser.add_argument("--retry-failed", action="store_true", help="run again the scripts recorded as not completed")
    args = parser.parse_args(argv)
    started = time.monotonic()
    chosen = scripts(args.folder, args.only)
    store = Store(args.out)
    done = store.done(args.retry_failed)
    todo = [p for p in chosen if p.stem not in done]
    names = [p.stem for p in scripts(args.folder, [])]  # the summary judges the set, whatever --only ran
    print(f"diagnose_all: {len(chosen)} scripts, {len(chosen) - len(todo)} done before, {len(todo)} to run",
          flush=True)
    if todo and on_a_gpu(args.backend) and not (args.out / "ceilings.json").is_file():
        ceilings = measure_ceilings(args.out)
        print(f"diagnose_all: device ceilings {'measured' if ceilings['ok'] else 'NOT measured'} in "
              f"{ceilings['seconds']:.0f} s", flush=True)
    slots = gpu_slots(args.gpus)
    free = list(slots)
    free_lock = threading.Lock()
    stopped: list[str] = []

    def one(script: Path) -> None:
        left = args.deadline - (time.monotonic() - started)
        if left < START_MARGIN_S:
            stopped.append(script.stem)
            return
        with free_lock:
            gpu = free.pop()
        try:
            limit = min(args.timeout, left - 5.0)
            run = run_climb(script, args, gpu, limit)
        finally:
            with free_lock:
                free.append(gpu)
        if run["timed_out"] and limit < args.timeout:
            stopped.append(script.stem)  # cut off by the deadline, not by its own limit: runs again next time
            return
        record, report = record_of(script, run)
        store.save(record, report)
        store.write_summary(names, args)
        print(f"diagnose_all: {script.stem}: exit {record['exit']}, {record['wall_s']:.1f} s, rungs 1-3 "
              f"{record['rungs_1_3_s']} s, rung 2 {'measured' if record['rung2_measured'] else 'not measured'}, "
              f"gap {'assessed' if record['gap_assessed'] else 'unknown'}", flush=True)

    with ThreadPoolExecutor(max_workers=len(slots)) as pool:
        list(pool.map(one, todo))
    summary = store.write_summary(names, args)
    print(markdown(summary), flush=True)
    if stopped:
        print(f"diagnose_all: stopped at the deadline with {len(stopped)} scripts left; run again with the same --out",
              flush=True)
        return 3
    print("diagnose_all: done", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
