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
the ladder left behind. Nothing is run or measured again; an operator whose best reaches 75% of its
floor on every case needs no explanation and says so.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from ladder.diagnoser.optimize.journal import Journal  # noqa: E402

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


def row(run: Path, brief: dict) -> dict:
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
            "findings": findings_on(brief, worst["label"])}


def markdown(rows: list[dict], runs: Path) -> str:
    lines = [f"# Distance to the roofline floor of each driven operator's best ({runs})", "",
             "Generated by `python bench/optimize/distance.py --runs " + str(runs) + "` from each run's last brief "
             "(the evidence of its current best). A case is within 25% of its floor at 75% of the roofline or more.",
             "", "| operator | brief of round | % of roofline (geomean) | cases within 25% | worst case | "
             "eager / torch.compile there (% of floor) | where its time goes (rung 2 split) | "
             "findings on the worst case | gap line |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['operator']} | {r['round']} | {r['geomean_pct']:.1f} | {r['cases_within']}/{r['cases']} | "
                     f"{r['worst']}: {r['worst_pct']:.1f}% | {_pct(r['eager_pct'])} / {_pct(r['compile_pct'])} | "
                     f"{r['split']} | {', '.join(r['findings']) or '-'} | {r['gap']} |")
    behind = [r for r in rows if r["cases_within"] < r["cases"]]
    both = [r["operator"] for r in behind if r["references_no_closer"] and r["references_timed"] == 2]
    eager_only = [r["operator"] for r in behind if r["references_no_closer"] and r["references_timed"] == 1]
    lines += ["", f"Of the {len(behind)} operators with a case short of 75% of its floor, {len(both)} have a worst "
              "case that neither eager nor torch.compile brings closer to the floor than the best does"
              + (f" ({', '.join(both)})" if both else "") + f"; {len(eager_only)} more have one that eager does not, "
              "with torch.compile not timed on that card" + (f" ({', '.join(eager_only)})" if eager_only else "") + "."]
    return "\n".join(lines) + "\n"


def _pct(value: float | None) -> str:
    return f"{value:.1f}%" if value is not None else "-"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=Path, required=True)
    parser.add_argument("--out", type=Path, default=None, help="write the Markdown table here (default: print it)")
    args = parser.parse_args(argv)
    rows = [row(brief_path.parent, brief) for brief_path in sorted(args.runs.glob("level*/*/brief.json"))
            if (brief := brief_of(brief_path.parent))]
    text = markdown(rows, args.runs)
    if args.out:
        args.out.write_text(text)
    else:
        print(text, end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
