"""Every first-round proposal of the rules proposer, for every suite operator, judged under the
interpreter before any of it reaches the device.

    python bench/optimize/rules_interpreted.py --out bench/results/rules-interpreted.json [--only NAME ...]

The brief is what round 1 sees on a CPU: rung 1's findings and a timing short of the roofline (so
the configuration search is proposed too). Each proposal, single fixes and the composed one, is
judged by the runner (interpreter backend, the problem's small cases, one seed): a rewrite that is
wrong here would only cost a device gate to find out.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from ladder.diagnoser.optimize.brief import brief_for  # noqa: E402
from ladder.diagnoser.optimize.proposers.rules import RulesProposer  # noqa: E402
from ladder.diagnoser.suite.operators import discover  # noqa: E402
from ladder.diagnoser.triage import triage  # noqa: E402
from ladder.runner.bench import BenchError, bench  # noqa: E402

SHORT_OF_ROOFLINE = [{"case": 0, "label": "c0", "time_ms": 1.0, "roofline_pct": 30.0}]


def judged(op) -> dict:
    started = time.monotonic()
    findings = [f.to_dict() for f in triage(str(op.solution), str(op.problem))]
    brief = brief_for(1, str(op.problem), str(op.solution), "full", {"findings": findings}, SHORT_OF_ROOFLINE, [])
    proposals = RulesProposer().propose(brief, 0)
    folder = Path(tempfile.mkdtemp(prefix="ladder-rules-"))
    files = {}
    for index, proposal in enumerate(proposals):
        files[f"c{index}"] = folder / f"c{index}.py"
        files[f"c{index}"].write_text(proposal.source)
    verdicts = {}
    if files:
        try:
            result = bench(op.problem, files, "interpret", quick=True, seeds=1, timeout=900)
        except BenchError as error:
            verdicts = {name: f"not judged: {error}" for name in files}
        else:
            for name, report in result["solutions"].items():
                wrong = next((c.get("reason") for c in report["cases"] if not c.get("correct")), None)
                verdicts[name] = "correct" if report["ok"] else (report.get("rejected") or {}).get("reason") or wrong
    return {"proposals": [{"id": f"c{i}", "patterns": p.patterns, "verdict": verdicts.get(f"c{i}")}
                          for i, p in enumerate(proposals)], "seconds": round(time.monotonic() - started, 1)}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--only", nargs="*", default=())
    args = parser.parse_args(argv)
    operators = {}
    for op in discover(only=tuple(args.only)):
        operators[op.key] = judged(op)
        print(op.key, ", ".join(f"{p['id']} {'+'.join(p['patterns'])}: {p['verdict']}"
                                for p in operators[op.key]["proposals"]), flush=True)
    proposals = [p for row in operators.values() for p in row["proposals"]]
    correct = sum(p["verdict"] == "correct" for p in proposals)
    document = {"command": "python bench/optimize/rules_interpreted.py --out bench/results/rules-interpreted.json",
                "summary": f"{correct} of {len(proposals)} proposals correct over {len(operators)} operators",
                "operators": operators}
    args.out.write_text(json.dumps(document, indent=1) + "\n")
    print(document["summary"])
    return 0 if correct == len(proposals) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
