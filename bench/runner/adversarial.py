"""The adversarial set through the judge: does every cheat lose, does every unusual honest solution pass?

    PYTHONPATH=. python3 bench/runner/adversarial.py --backend cuda --out DIR [--resume]
    PYTHONPATH=. python3 bench/runner/adversarial.py --backend tests.runner.host_clock:backend --out DIR

The set is ``bench/sets/adversarial``: solutions, the problems they solve, and ``labels.yaml``,
which says of each file its cheat family (``kind``), the verdict it must get (``expect``:
rejected, failed or accepted), a substring the reason must contain (``reason``) and a static rule
that must be among its errors (``rule``, the one that names the trick), with the static rules on;
``runtime: true`` marks the files a runtime guard must also catch on its own, with the rules off
(``runtime_reason``, ``runtime_expect`` where that verdict reads differently).
``gpu: true`` files run only on a device backend, ``interpreter: true`` ones only where kernels run
under Triton's interpreter (the trick needs a kernel body that is Python), ``timed: true`` ones only where the backend
times (the cheat shows in timed calls), ``options`` are ``ladder.runner.bench.bench`` options the file
needs (a short call timeout for a hang, a memory limit for a memory bomb), ``after`` names a file
that must run before it in the same evaluation.

Every file runs in batches of about ten per ``bench()`` call (each contestant is a process with
torch), with the static rules on and again off; with the rules off, the files no runtime guard is
promised for are reported, not graded. The summary (per file: expected, got, reason, pass or fail;
totals) goes to ``DIR/adversarial.json`` and ``DIR/adversarial.txt``. Only torch, triton and
pyyaml are needed.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
SET = ROOT / "bench" / "sets" / "adversarial"
BATCH = 10
# Checks that keep a batch short on the interpreter: two fresh seeds, a few timed repetitions.
OPTIONS = {"seeds": 2, "reps": 10, "call_timeout_s": 120.0}
TIMEOUT_S = 900.0


@dataclass
class Label:
    """One file of the set, as labels.yaml describes it."""

    file: str
    kind: str
    expect: str
    reason: str = ""
    rule: str = ""
    runtime: bool = False
    runtime_expect: str = ""
    runtime_reason: str = ""
    problem: str = "add"
    gpu: bool = False
    interpreter: bool = False
    timed: bool = False
    options: dict[str, Any] = field(default_factory=dict)
    after: str | None = None

    def graded(self, static: bool) -> bool:
        """Whether the verdict in this mode is one the label promises (with the rules off, only for
        files a runtime guard must catch, and for honest ones)."""
        return static or self.runtime or self.expect == "accepted"

    def expected(self, static: bool) -> tuple[str, str]:
        """(verdict, reason substring) with the static rules on or off ("-" where not graded)."""
        if static:
            return self.expect, self.reason
        if not self.graded(static):
            return "-", ""
        expect = self.runtime_expect or self.expect
        return expect, "" if expect == "accepted" else self.runtime_reason or self.reason


@dataclass
class Outcome:
    file: str
    static: bool
    expected: str
    want_reason: str
    want_rule: str = ""
    got: str = "not run"
    stage: str | None = None
    reason: str | None = None
    rules: list[str] = field(default_factory=list)  # the static rules its errors come from

    @property
    def passed(self) -> bool:
        if self.expected == "-":
            return True  # no runtime guard promised: what it got is reported, not graded
        return (self.got == self.expected and self.want_reason in (self.reason or "")
                and (not self.static or not self.want_rule or self.want_rule in self.rules))


def load_labels(folder: Path = SET) -> tuple[dict[str, Label], dict[str, Path]]:
    """The labels by file name, and the problem files by name."""
    data = yaml.safe_load((folder / "labels.yaml").read_text())
    problems = {name: folder / path for name, path in data["problems"].items()}
    labels = {name: Label(file=name, **fields) for name, fields in data["files"].items()}
    return labels, problems


def selected(labels: dict[str, Label], *, static: bool, can_time: bool, on_device: bool,
             graded_only: bool = True) -> list[Label]:
    """The files to run in one mode on a backend: with the rules off only those a runtime guard must
    catch and the honest ones, which must still pass (or, ``graded_only`` false, every file: what the
    others get with the rules off is worth knowing too)."""
    return [label for label in labels.values()
            if (static or label.graded(static) or not graded_only)
            and (on_device or not label.gpu) and not (on_device and label.interpreter)
            and (can_time or not label.timed)]


def batches(chosen: list[Label], labels: dict[str, Label], size: int = BATCH) -> list[list[Label]]:
    """Files grouped by problem and options, about ``size`` per evaluation; a file's ``after`` runs
    before it in the same one."""
    groups: dict[tuple, list[Label]] = {}
    for label in chosen:
        groups.setdefault((label.problem, json.dumps(label.options, sort_keys=True)), []).append(label)
    result = []
    for members in groups.values():
        for start in range(0, len(members), size):
            batch = members[start:start + size]
            for label in list(batch):
                if label.after and labels[label.after] not in batch:
                    batch.insert(batch.index(label), labels[label.after])
            result.append(batch)
    return result


def run_batch(batch: list[Label], problems: dict[str, Path], *, backend: str, static: bool,
              folder: Path = SET, **overrides: Any) -> dict[str, Outcome]:
    """One evaluation of a batch; each file's verdict as an ``Outcome``."""
    from ladder.runner.bench import bench

    options = {**OPTIONS, **batch[0].options, **overrides, "static_checks": static}
    result = bench(problems[batch[0].problem], {label.file: folder / label.file for label in batch},
                   backend=backend, timeout=TIMEOUT_S, **options)
    outcomes = {}
    for label in batch:
        expected, want = label.expected(static)
        report = result["solutions"][label.file]
        outcome = Outcome(label.file, static, expected, want, label.rule,
                          rules=sorted({violation["rule"] for violation in report["static"]
                                        if violation["severity"] == "error"}))
        if report["rejected"]:
            outcome.got, outcome.stage, outcome.reason = ("rejected", report["rejected"]["stage"],
                                                          report["rejected"]["reason"])
        elif not report["ok"]:
            outcome.got = "failed"
            outcome.reason = next(case.get("reason") for case in report["cases"] if not case["correct"])
        else:
            outcome.got = "accepted"
        outcomes[label.file] = outcome
    return outcomes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="tests.runner.host_clock:backend",
                        help="cuda, interpret, or module:attribute of a backend (default: the CPU host-clock one)")
    parser.add_argument("--out", type=Path, required=True, help="folder for adversarial.json and adversarial.txt")
    parser.add_argument("--only", nargs="*", help="run only these files of the set")
    parser.add_argument("--modes", choices=["both", "static", "runtime"], default="both")
    parser.add_argument("--resume", action="store_true",
                        help="keep the files already graded in --out (a run cut short by a device call's limit) "
                             "and run the rest")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from ladder.runner.backends import select_backend

    backend = select_backend(args.backend)
    labels, problems = load_labels()
    if args.only:
        labels = {name: label for name, label in labels.items()
                  if name in args.only or any(name == other.after for other in labels.values() if other.file in args.only)}
    outcomes = earlier_outcomes(args.out) if args.resume else []
    started = time.time()
    modes = {"both": (True, False), "static": (True,), "runtime": (False,)}[args.modes]
    for static in modes:
        graded = {outcome.file for outcome in outcomes if outcome.static == static}
        chosen = [label for label in selected(labels, static=static, can_time=backend.can_time,
                                              on_device=backend.device_type != "cpu", graded_only=False)
                  if label.file not in graded]
        done: set[str] = set(graded)
        for batch in batches(chosen, labels):
            print(f"static {'on' if static else 'off'}: {', '.join(label.file for label in batch)}", flush=True)
            found = run_batch(batch, problems, backend=args.backend, static=static)
            outcomes += [found[label.file] for label in batch if label in chosen and label.file not in done]
            done.update(label.file for label in batch)
            # After every batch: a run cut short still leaves what it found.
            write_summary(outcomes, args.out, backend=backend.name, elapsed_s=time.time() - started)
    write_summary(outcomes, args.out, backend=backend.name, elapsed_s=time.time() - started)
    return 0 if all(outcome.passed for outcome in outcomes) else 1


def earlier_outcomes(out: Path) -> list[Outcome]:
    """The files a run cut short already graded (its adversarial.json), to be kept by ``--resume``."""
    path = out / "adversarial.json"
    if not path.is_file():
        return []
    names = {f.name for f in fields(Outcome)}
    return [Outcome(**{key: value for key, value in entry.items() if key in names})
            for entry in json.loads(path.read_text())["files"]]


def write_summary(outcomes: list[Outcome], out: Path, **facts: Any) -> None:
    out.mkdir(parents=True, exist_ok=True)
    totals = {}
    for static in (True, False):
        mine = [outcome for outcome in outcomes if outcome.static == static]
        totals["static on" if static else "static off"] = {
            "files": len(mine), "passed": sum(outcome.passed for outcome in mine),
            "cheats rejected or failed": sum(outcome.got != "accepted" for outcome in mine
                                             if outcome.expected != "accepted"),
            "cheats": sum(outcome.expected != "accepted" for outcome in mine),
            "cheats accepted where no runtime guard is promised": sorted(
                outcome.file for outcome in mine if outcome.expected == "-" and outcome.got == "accepted"),
            "honest accepted": sum(outcome.got == "accepted" for outcome in mine if outcome.expected == "accepted"),
            "honest": sum(outcome.expected == "accepted" for outcome in mine)}
    report = {**facts, "totals": totals,
              "files": [{**asdict(outcome), "passed": outcome.passed} for outcome in outcomes]}
    (out / "adversarial.json").write_text(json.dumps(report, indent=2))
    lines = [f"backend {facts.get('backend')}, {facts.get('elapsed_s', 0):.0f} s"]
    lines += [f"{mode}: " + ", ".join(f"{key} {value}" for key, value in counts.items())
              for mode, counts in totals.items()]
    for outcome in outcomes:
        mark = "pass" if outcome.passed else "FAIL"
        lines.append(f"{mark}  static {'on ' if outcome.static else 'off'}  {outcome.file:40s} expected "
                     f"{outcome.expected:8s} got {outcome.got:8s} {outcome.reason or ''}")
    (out / "adversarial.txt").write_text("\n".join(lines) + "\n")
    print("\n".join(lines[:3]), flush=True)


if __name__ == "__main__":
    sys.exit(main())
