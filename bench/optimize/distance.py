"""Why each driven operator's best is not within 25% of its roofline floor, in the ladder's own evidence.

    python bench/optimize/distance.py --runs bench/results/suite-agent --out bench/results/suite-agent/distance.md

Reads, for every run under --runs, the brief the run wrote for the round it waits on (`brief.json`:
the current best's timing per case, rung 2's kernel split of its worst multi-kernel case, the gap
line and the findings at rung 1-3) and prints one row per operator: its cases' share of the floor,
the worst case, which kernel holds that case's time and how far that kernel is from its own floor,
the findings that hold on the worst case, and how close the references come to the same floor on
that case: PyTorch eager (timed beside the best in the same gate run) and torch.compile (timed once
by the run's baseline, `journal.jsonl`, shown only where that ran on the same card). A worst case
that neither reference brings closer to its floor than the best is one where the best already leads
every implementation at hand: what is left is a distance no known implementation closes, not one
the ladder left behind. Nothing is measured again; an operator whose best reaches 75% of its floor
on every case needs no explanation and says so.

With --triage-now, rung 1 of this ladder also runs again on each best (on the CPU, seconds each),
with the rung-3 facts and rung-2 profile of the diagnosis its brief was made from (the run's
`diagnoses/`, cached by the best's text): a best diagnosed before a check existed (the wave and
operand-feed model of nv.tile-misfit, say) is judged by the checks there are now, and its gap is
assessed again on the same measurements (`ladder.diagnoser.gap.assess`).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from ladder.diagnoser import gap  # noqa: E402
from ladder.diagnoser.optimize.journal import Journal, diagnosis_key  # noqa: E402

# A case within 25% of its roofline floor runs at 75% of the roofline or better.
WITHIN = 75.0


def brief_of(run: Path) -> dict | None:
    path = run / "brief.json"
    return json.loads(path.read_text())["brief"] if path.is_file() else None


def worst_case(brief: dict) -> dict:
    return min(brief["timing"], key=lambda case: case["roofline_pct"])


def split_line(brief: dict) -> str:
    """The kernel that holds most of the split case's time, its share and its distance to its own floor."""
    split = brief.get("split") or {}
    kernels = split.get("kernels") or []
    if not kernels:
        return "-" if not split.get("error") else f"split failed: {split['error']}"
    top = max(kernels, key=lambda kernel: kernel["share"])
    own = f"{100 * top['efficiency']:.0f}% of its own floor" if top.get("efficiency") is not None else "no floor"
    return (f"case {split['case']}: {top['kernel']} (line {top['line']}) {100 * top['share']:.0f}% of the "
            f"forward at {own}, {top['class']}")


def findings_on(brief: dict, label: str) -> list[str]:
    """The findings whose evidence names the case `label` (or names no case: they hold on all)."""
    held = []
    for finding in brief.get("findings") or []:
        cases = {case for item in finding.get("evidence") or [] for case in item.get("cases") or []}
        if not cases or label in cases:
            held.append(f"{finding['pattern']}@{finding.get('line')}")
    return sorted(set(held), key=held.index)


def diagnosis_of(run: Path, brief: dict) -> dict | None:
    """The cached diagnosis the brief was made from, under the loop's key for the run's best.py."""
    journal = Journal(run)
    baseline = next((record for record in journal.records() if record.get("kind") == "baseline"), None)
    if baseline is None:
        return None
    rungs = baseline["settings"].get("rungs") or (1, 2, 3, 4)
    return journal.diagnosis(diagnosis_key((run / "best.py").read_text(), brief["problem_source"], rungs))


def triage_now(run: Path, brief: dict) -> dict | None:
    """Rung 1 of this ladder on the run's best, with the facts and measurements of its cached diagnosis
    (what rung 3 does when it triages again), and the gap assessed on that diagnosis' profile; None
    where no diagnosis is cached (evidence other than full, or a brief from another version of the best)."""
    from ladder.diagnoser.evidence import Fact
    from ladder.diagnoser.rungs import measured_metrics
    from ladder.diagnoser.triage import triage

    diagnosis = diagnosis_of(run, brief)
    if diagnosis is None or not (diagnosis.get("profile") or {}).get("cases"):
        return None
    profile = diagnosis["profile"]
    facts = [Fact.from_dict(fact) for fact in diagnosis.get("facts") or []] or None
    with tempfile.TemporaryDirectory() as scratch:  # the problem as the brief holds it: its path was the device's
        problem = Path(scratch) / "problem.py"
        problem.write_text(brief["problem_source"])
        found = triage(run / "best.py", problem, facts=facts, metrics=measured_metrics(profile), target="sm90")
    findings = [finding.to_dict() for finding in found]
    return {"findings": findings, "gap": gap.assess(profile, findings)}


def compile_times(run: Path) -> dict[str, float]:
    """torch.compile's time per case index, from the run's baseline record, where the baseline ran on
    the device of the run's last timed record (the one the brief's timing comes from): a run continued
    on another card has no torch.compile time to set beside its best."""
    records = Journal(run).records()
    baseline = next((record for record in records if record.get("kind") == "baseline"), None)
    last_device = next((record["device"] for record in reversed(records) if record.get("device")), None)
    if baseline is None or baseline.get("device") != last_device:
        return {}
    return baseline.get("torch_compile_ms") or {}


def references(case: dict, compiled_ms: float | None) -> dict:
    """How close eager and torch.compile come to the case's floor, in % of it (None where not timed)."""
    def share(reference_ms: float | None) -> float | None:
        return case["roofline_pct"] * case["time_ms"] / reference_ms if reference_ms and case.get("time_ms") else None

    return {"eager_pct": share(case.get("eager_ms")), "compile_pct": share(compiled_ms)}


def row(run: Path, brief: dict, now: bool = False) -> dict:
    cases = [case["roofline_pct"] for case in brief["timing"]]
    worst = worst_case(brief)
    refs = references(worst, compile_times(run).get(str(worst["case"])))
    timed = [pct for pct in refs.values() if pct is not None]
    return {**refs, "references_timed": len(timed),
            "references_no_closer": bool(timed) and max(timed) <= worst["roofline_pct"],
            "operator": "/".join(run.parts[-2:]), "round": brief["round"],
            "geomean_pct": statistics.geometric_mean(cases), "cases_within": sum(pct >= WITHIN for pct in cases),
            "cases": len(cases), "worst": worst["label"], "worst_pct": worst["roofline_pct"],
            "gap": brief.get("gap") or "-", "split": split_line(brief),
            "findings": findings_on(brief, worst["label"]), "now": _now(run, brief, worst["label"]) if now else None}


def _now(run: Path, brief: dict, label: str) -> dict:
    """The gap line and worst-case findings of this ladder's triage now, beside those of the brief,
    and the cases short of the issue's measure: under 75% of the floor in the gate's timing and
    with no finding that accounts for them."""
    fresh = triage_now(run, brief)
    if fresh is None:
        return {"gap": "no cached diagnosis of this best", "findings": [], "explained": None, "open": None}
    unexplained = {verdict["case"] for verdict in fresh["gap"]["cases"] if verdict["status"] == "unexplained"}
    short = [case["case"] for case in brief["timing"] if case["roofline_pct"] < WITHIN and case["case"] in unexplained]
    return {"gap": fresh["gap"]["why"], "explained": fresh["gap"]["explained"], "open": short,
            "findings": findings_on({"findings": fresh["findings"]}, label)}


def markdown(rows: list[dict], runs: Path, now: bool = False) -> str:
    command = f"python bench/optimize/distance.py --runs {runs}" + (" --triage-now" if now else "")
    lines = [f"# Distance to the roofline floor of each driven operator's best ({runs})", "",
             f"Generated by `{command}` from each run's last brief (the evidence of its current best)"
             + ("; the last two columns are rung 1 of this ladder run again on each best with its brief's facts and "
                "profile" if now else "") + ". A case is within 25% of its floor at 75% of the roofline or more.",
             "", "| operator | brief of round | % of roofline (geomean) | cases within 25% | worst case | "
             "eager / torch.compile there (% of floor) | where its time goes (rung 2 split) | "
             "findings on the worst case | gap line |" + (" findings now | gap line now |" if now else ""),
             "|---|---|---|---|---|---|---|---|---|" + ("---|---|" if now else "")]
    for r in rows:
        lines.append(f"| {r['operator']} | {r['round']} | {r['geomean_pct']:.1f} | {r['cases_within']}/{r['cases']} | "
                     f"{r['worst']}: {r['worst_pct']:.1f}% | {_pct(r['eager_pct'])} / {_pct(r['compile_pct'])} | "
                     f"{r['split']} | {', '.join(r['findings']) or '-'} | {r['gap']} |"
                     + (f" {', '.join(r['now']['findings']) or '-'} | {r['now']['gap']} |" if now else ""))
    behind = [r for r in rows if r["cases_within"] < r["cases"]]
    both = [r["operator"] for r in behind if r["references_no_closer"] and r["references_timed"] == 2]
    eager_only = [r["operator"] for r in behind if r["references_no_closer"] and r["references_timed"] == 1]
    lines += ["", f"Of the {len(behind)} operators with a case short of 75% of its floor, {len(both)} have a worst "
              "case that neither eager nor torch.compile brings closer to the floor than the best does"
              + (f" ({', '.join(both)})" if both else "") + f"; {len(eager_only)} more have one that eager does not, "
              "with torch.compile not timed on that card" + (f" ({', '.join(eager_only)})" if eager_only else "") + "."]
    if now:
        explained = sum(r["now"]["explained"] is True for r in behind)
        open_now = [r["operator"] for r in behind if r["now"]["explained"] is False]
        unknown = [r["operator"] for r in behind if r["now"]["explained"] is None]
        lines += ["", f"Judged by this ladder's checks now, {explained} of those {len(behind)} have every case within "
                  "20% of its floor or explained by a finding"
                  + (f"; unexplained: {', '.join(open_now)}" if open_now else "")
                  + (f"; no cached diagnosis to judge: {', '.join(unknown)}" if unknown else "") + "."]
        short = [r["operator"] for r in behind if r["now"]["open"]]
        met = sum(r["now"]["open"] == [] for r in behind)
        lines += ["", f"By the issue's measure (each case at 75% of its floor in the gate's timing, or explained by "
                  f"a finding), {met} of those {len(behind)} meet it"
                  + (f"; open: {', '.join(short)}" if short else "") + "."]
    return "\n".join(lines) + "\n"


def _pct(value: float | None) -> str:
    return f"{value:.1f}%" if value is not None else "-"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=Path, required=True)
    parser.add_argument("--out", type=Path, default=None, help="write the Markdown table here (default: print it)")
    parser.add_argument("--triage-now", action="store_true",
                        help="also run this ladder's rung 1 again on each best (CPU) and assess its gap anew")
    args = parser.parse_args(argv)
    briefs = sorted(args.runs.glob("level*/*/brief.json"))
    rows = [row(path.parent, brief, args.triage_now) for path in briefs if (brief := brief_of(path.parent))]
    text = markdown(rows, args.runs, args.triage_now)
    if args.out:
        args.out.write_text(text)
    else:
        print(text, end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
