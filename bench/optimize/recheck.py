"""Re-check every accepted best of a suite run with a separate `ladder bench`, on fresh seeds.

    PYTHONPATH=. python3 bench/optimize/recheck.py --runs bench/results/suite-rules \
        --out bench/results/suite-rules-recheck/h200.json [--deadline 470] [--card NAME] [--backend interpret] \
        [--only level2/99_matmul_gelu_softmax ...]

For each operator run under ``--runs`` whose journal holds an accepted best (a round > 0), this
runs ``ladder bench RUN/best.py --problem P --baseline RUN/initial.py --json`` in a process of its
own (a new judge, new seeds drawn by it, the baseline timed interleaved), then compares: every case
must be correct, and the geomean speedup over the initial version must agree with the journal's
within the journal's spread (``CASE_SPREAD_FLOOR`` at least: two separate runs differ by more than
one run's best-against-itself). The speedups are compared only when the re-check ran on the card model
that accepted the best: a ratio of two timings is a property of the card (an H100 and an H200 differ in
memory bandwidth, so a GEMM's epilogue weighs differently), and a re-check elsewhere says only whether
the best is still correct and still faster. The GPU's SM clock and power while each re-check ran
are recorded beside it (``gpu_clocks.py``), so a ratio that moved can be set against a clock that
did; and what each contestant's autotuners chose, with the time of the runner-up config beside the
kept one (each re-check compiles and tunes in a fresh kernel cache of its own, so it neither reads
an earlier run's choices nor leaves its own for the next): a ratio that moved with a different
choice, or with two configs a per cent apart, is the tuner's pick and not the kernel. The record
per operator is written to ``--out`` as soon as it is known, so a call cut short is continued by the
next (operators already there are skipped, unless a later round replaced the best their record
re-checked: that record is dropped and the new best re-checked); the table goes to stdout. The
operators whose best was accepted on the card model this call runs on go first (``--card``, else
the one this file's records were timed on, else the one ``nvidia-smi`` names): only they get a
verdict on their speedup here, and a call's device time is the scarce thing. ``--only`` names the
operators to re-check (a second sample of a ratio in question, into a file of its own).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from gpu_clocks import ClockSampler, card_model  # noqa: E402

from ladder.diagnoser.optimize.gate import CASE_SPREAD_FLOOR, geomean  # noqa: E402
from ladder.diagnoser.optimize.journal import Journal  # noqa: E402
from ladder.runner.capture.picks import AUTOTUNE_CACHE_ENV, recorded_choices  # noqa: E402

PER_OPERATOR_S = 600.0


def accepted_runs(runs: Path, only: tuple[str, ...] = ()) -> list[Path]:
    """Run folders whose journal's best came from a round (the initial version needs no re-check);
    runs set aside under ``superseded/`` were run again and are not the suite's result. ``only``
    (``LEVEL/NAME`` keys) narrows them to those operators; a key that names no run is an error, not a
    call that quietly re-checks nothing."""
    unknown = [key for key in only if not (runs / key / "journal.jsonl").is_file()]
    if unknown:
        raise SystemExit(f"recheck: no run under {runs} for {', '.join(unknown)}")
    found = []
    for journal in sorted(runs.rglob("journal.jsonl")):
        folder = journal.parent
        key = folder.relative_to(runs)
        if "superseded" in key.parts or (only and key.as_posix() not in only):
            continue
        if (Journal(folder).best() or {}).get("round", 0) > 0:
            found.append(folder)
    return found


def same_card_first(folders: list[Path], card: str | None) -> list[Path]:
    """Suite order, the bests accepted on ``card`` moved ahead (a stable sort)."""
    if card is None:
        return folders
    return sorted(folders, key=lambda folder: _accepting_card(folder) != card)


def _accepting_card(folder: Path) -> str | None:
    journal = Journal(folder)
    return _accepting_round(journal, journal.best()).get("device")


def recheck(folder: Path, runs: Path, backend: str | None, seeds: int) -> dict:
    journal = Journal(folder)
    header, best = journal.header(), journal.best()
    problem = Path(header["problem"])
    if not problem.is_file():  # a run made in another checkout: the suite operator of the same name here
        problem = ROOT / "kernels" / folder.relative_to(runs) / "problem.py"
    command = [sys.executable, "-m", "ladder.diagnoser", "bench", str(folder / "best.py"), "--problem", str(problem),
               "--baseline", str(folder / "initial.py"), "--json", "--seeds", str(seeds)]
    if backend:
        command += ["--backend", backend]
    began = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="ladder-recheck-") as scratch, ClockSampler() as clocks:
        cache = Path(scratch) / "triton"
        env = {**os.environ, "TRITON_CACHE_DIR": str(cache), AUTOTUNE_CACHE_ENV: "1"}
        try:
            done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=PER_OPERATOR_S)
        except subprocess.TimeoutExpired:
            done = subprocess.CompletedProcess(command, None, "", f"no answer within {PER_OPERATOR_S:g} s")
        picks = {name: autotuner_picks(cache, folder / f"{name}.py") for name in ("best", "initial")}
    accepting = _accepting_round(journal, best)
    row = {"run": str(folder), "problem": str(problem), "best_hash": best.get("source_hash"),
           "journal_speedup": best.get("geomean_vs_initial"),
           "journal_spread": accepting.get("spread"), "journal_device": accepting.get("device"),
           "seconds": round(time.monotonic() - began, 1), "clocks": clocks.summary(), "autotune": picks}
    try:
        record = json.loads(done.stdout)
    except json.JSONDecodeError:
        return {**row, "correct": False, "why": (done.stderr.strip().splitlines() or ["no output"])[-1]}
    wrong = [c for c in record["cases"] if not c.get("correct")]
    speedups = [c.get("speedup_vs_baseline") for c in record["cases"]]
    baseline = {c["case"]: _median(c) for c in (record.get("baseline") or {}).get("cases", [])}
    cases = [{"label": c.get("label"), "correct": c.get("correct"), "speedup_vs_initial": s,
              "best_ms": _median(c), "initial_ms": baseline.get(c["case"])}
             for c, s in zip(record["cases"], speedups)]
    row.update(correct=record["ok"] and not wrong, base_seed=record.get("base_seed"), device=record.get("device"),
               timed=record.get("timed", False), cases=cases)
    if wrong or not record["ok"]:
        reason = (record.get("rejected") or {}).get("reason") or (wrong[0].get("reason") if wrong else None)
        row["why"] = reason or "not correct"
    if row["timed"] and all(speedups):
        row.update(compare_speed(geomean(speedups), row))
    return row


def autotuner_picks(cache: Path, solution: Path) -> list[dict]:
    """Each autotuner's choice that runs of ``solution`` left under the Triton cache ``cache`` (Triton's
    ``*.autotune.json``, where ``recorded_choices`` finds them: every config's timing for one tuning
    key): the kept config, its time and the runner-up's. Autotuners whose configs carry a pre-hook
    record nothing (Triton does not write them)."""
    from triton import knobs

    with knobs.cache.scope():
        knobs.cache.dir = str(cache)
        choices = recorded_choices(solution)
    picks = []
    for path in choices:
        record = json.loads(path.read_text())
        timed = sorted((_first(timing), _config_text(config)) for config, timing in record["configs_timings"])
        picks.append({"kernel": path.name.removesuffix(".autotune.json"), "key": record.get("key"),
                      "config": timed[0][1], "ms": timed[0][0],
                      "runner_up_ms": timed[1][0] if len(timed) > 1 else None})
    return picks


def _first(timing: float | list[float]) -> float:
    """A config's time as the autotuner recorded it (a median, or the first of its quantiles)."""
    return timing[0] if isinstance(timing, list) else timing


def _config_text(config: dict) -> str:
    meta = [f"{name}={value}" for name, value in sorted(config.get("kwargs", {}).items())]
    return " ".join(meta + [f"warps={config.get('num_warps')}", f"stages={config.get('num_stages')}"])


def _median(case: dict) -> float | None:
    return (case.get("time_ms") or {}).get("median")


def compare_speed(speedup: float, row: dict) -> dict:
    """The re-check's speedup against the journal's: within the accepting gate's spread on the same card
    model; on another card only the ratio is reported (``within_spread`` None: no verdict)."""
    tolerance = max(row.get("journal_spread") or 0.0, CASE_SPREAD_FLOOR)
    ratio = speedup / row["journal_speedup"]
    same_card = row.get("journal_device") is None or row.get("device") == row["journal_device"]
    return {"speedup": speedup, "ratio": ratio, "tolerance": tolerance,
            "within_spread": abs(ratio - 1.0) <= tolerance if same_card else None}


def rejudged(row: dict) -> dict:
    """A record of an earlier call with its comparison made again from its recorded speedup and the
    journal as it reads now, so every record in a file is judged by the same rule."""
    folder = run_folder(row["run"])
    if not row.get("speedup") or not (folder / "journal.jsonl").is_file():
        return row
    row = {**row, "journal_device": _accepting_card(folder)}
    return {**row, **compare_speed(row["speedup"], row)}


def present_records(path: Path) -> tuple[list[dict], list[dict]]:
    """A record file's records of the bests their runs hold now, each judged again (``rejudged``), and
    those of bests replaced or re-timed since (``of_the_present_best``), which no longer count."""
    present, stale = [], []
    for row in json.loads(path.read_text())["operators"] if path.is_file() else []:
        if of_the_present_best(row):
            present.append(rejudged(row))
        else:
            stale.append(row)
    return present, stale


def of_the_present_best(row: dict) -> bool:
    """Whether a record re-checked the best its run holds now (a run that went on since may have
    replaced it): by the best's source hash, or, in a record older than that field, by the journal's
    figure for the best, which a later gate re-timing the same best also moves (such a record is
    dropped too, and the best re-checked again: a few minutes spent, nothing wrongly credited)."""
    folder = run_folder(row["run"])
    if not (folder / "journal.jsonl").is_file():
        return False
    best = Journal(folder).best()
    if "best_hash" in row:
        return row["best_hash"] == best.get("source_hash")
    return row.get("journal_speedup") == best.get("geomean_vs_initial")


def run_folder(run: str) -> Path:
    """A record's run folder: as written, or under the repository where the record names it relatively."""
    return Path(run) if Path(run).is_absolute() else ROOT / run


def _accepting_round(journal: Journal, best: dict) -> dict:
    """The round record whose gate accepted the best: its spread (the best against itself in that run)
    and the card it ran on."""
    return next((r for r in journal.rounds() if r["round"] == best.get("round", 0)), {})


def table(rows: list[dict]) -> str:
    lines = ["| operator | correct | journal | re-check | ratio | within spread | SM clock, power |",
             "|---|---|---|---|---|---|---|"]
    for row in rows:
        name = "/".join(Path(row["run"]).parts[-2:])
        speed = f"{row['speedup']:.3f}x" if row.get("speedup") else "not timed"
        ratio = f"{row['ratio']:.3f} (tolerance {row['tolerance']:.1%})" if row.get("ratio") else "-"
        lines.append(f"| {name} | {'yes' if row['correct'] else 'NO: ' + str(row.get('why'))} | "
                     f"{row['journal_speedup']:.3f}x | {speed} | {ratio} | "
                     f"{_verdict(row)} | {_clocks(row.get('clocks'))} |")
    return "\n".join(lines)


def _clocks(clocks: dict | None) -> str:
    """The SM clock's median against its maximum and the highest power against the limit: a clock held
    under its maximum at the power limit is the card throttling."""
    if not clocks or "sm_clock_mhz" not in clocks:
        return "-"
    text = f"{clocks['sm_clock_mhz']['median']:.0f}/{clocks.get('max_sm_clock_mhz', 0):.0f} MHz"
    if "power_w" in clocks:
        text += f", {clocks['power_w']['max']:.0f}/{clocks.get('power_limit_w', 0):.0f} W"
    return text


def _verdict(row: dict) -> str:
    if not row.get("ratio"):
        return "-"
    if row.get("within_spread") is None:
        return f"other card (journal: {row.get('journal_device')})"
    return "yes" if row["within_spread"] else "no"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--backend", default=None, help="cuda on the GPU machine (the default there)")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--card", help="the card model this call runs on (default: the one --out's records name, "
                        "else nvidia-smi's)")
    parser.add_argument("--deadline", type=float, default=math.inf, help="seconds: no operator is started after")
    parser.add_argument("--only", nargs="*", default=(), help="operators as LEVEL/NAME (default: every accepted best)")
    args = parser.parse_args(argv)
    started = time.monotonic()
    rows, stale = present_records(args.out)
    for row in stale:
        print(f"{row['run']}: its record is not of the present best (replaced, or re-timed since); dropped",
              flush=True)
    done = {row["run"] for row in rows}
    card = args.card or next((row["device"] for row in rows if row.get("device")), None) or card_model()
    for folder in same_card_first(accepted_runs(args.runs, args.only), card):
        if str(folder) in done:
            continue
        if time.monotonic() - started > args.deadline:
            print(f"{folder}: not started (deadline)", flush=True)
            continue
        rows.append(recheck(folder, args.runs, args.backend, args.seeds))
        args.out.write_text(json.dumps({"runs": str(args.runs), "operators": rows}, indent=1, default=str))
        print(json.dumps(rows[-1], default=str), flush=True)
    print(table(rows))
    return 0 if all(row["correct"] and row.get("within_spread") is not False for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
