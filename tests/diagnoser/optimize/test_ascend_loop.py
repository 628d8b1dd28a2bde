"""`ladder optimize --target ascend`: compile-only rounds without an NPU (compiled by Triton-Ascend,
checked under the interpreter, IR diagnosed, never accepted since nothing is timed), and with
`--backend npu` the usual gate with the diagnosis of the Ascend part (untested on hardware)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ladder.diagnoser import gap
from ladder.diagnoser.optimize import ascend
from ladder.diagnoser.optimize.brief import brief_for
from ladder.diagnoser.optimize.gate import GateResult, GateSettings
from ladder.diagnoser.optimize.loop import Settings, optimize
from ladder.diagnoser.optimize.proposers.rules import FIX_ORDERS, RulesProposer
from ladder.runner.ascend_ir import ENV_VAR, ascend_python

GRID = Path(__file__).resolve().parents[1] / "triage" / "fixtures" / "ascend" / "grid"


def test_the_gate_and_the_diagnosis_follow_the_target_and_the_backend():
    assert ascend.gate_for("ascend", None) is ascend.compile_only_gate
    assert ascend.gate_for("ascend:Ascend910B3", "interpret") is ascend.compile_only_gate
    assert ascend.gate_for("ascend", "npu") is None  # on an NPU: the usual gate, which times
    assert ascend.gate_for("sm90", None) is None
    assert ascend.diagnose_for("ascend") is ascend.diagnose_best and ascend.diagnose_for("sm90") is None


def test_the_rules_propose_only_the_targets_fixes(tmp_path):
    made = brief_for(1, str(GRID / "problem.py"), str(GRID / "solution.py"), "none", None, [], [])
    for target, backend in (("ascend", "ascend"), ("sm90", "nvidia")):
        proposals = RulesProposer(target=target).propose(made, 0)
        assert {p for proposal in proposals for p in proposal.patterns} <= set(FIX_ORDERS[backend])
    ascend_fixes = {p for proposal in RulesProposer(target="ascend").propose(made, 0) for p in proposal.patterns}
    assert "npu.grid-exceeds-cores" in ascend_fixes


def test_a_verdict_says_what_the_ir_lost_kept_and_why_it_is_not_accepted():
    report = {"ok": True, "rejected": None, "cases": [{"case": 0, "label": "small", "correct": True}]}
    best = {"patterns": ["npu.grid-exceeds-cores", "npu.masked-load-fill"], "error": None}
    verdict = ascend._verdict("r1-c1", report, {"patterns": ["npu.masked-load-fill"], "error": None}, best)
    assert not verdict.accepted and not verdict.timed and verdict.compiled and verdict.correct
    assert "no longer shows npu.grid-exceeds-cores (still shows npu.masked-load-fill)" in verdict.reason
    assert ascend.NOT_TIMED in verdict.reason
    broken = ascend._verdict("r1-c2", report, {"patterns": [], "error": "ttadapter: failed to legalize"}, best)
    assert not broken.compiled and "does not compile for Ascend: ttadapter: failed to legalize" in broken.reason


def test_on_an_npu_rung_2_reads_the_gates_timing_against_the_parts_ceilings():
    record = {"problem": "problem.py", "backend": "npu", "device": "Ascend910B3", "timed": True, "cases": [
        {"case": 0, "bytes": 1.2e9, "flops": 0.0, "reference_ms": {"median": 2.0}}],
        "solutions": {"best": {"path": "best.py", "ok": True, "rejected": None, "static": [], "cases": [
            {"case": 0, "label": "c0", "correct": True, "time_ms": {"median": 2.0}, "kernels": ["k"], "launches": 1}]}}}
    gate = GateResult(verdicts={}, spread=0.01, best_cases=[], device="Ascend910B3", device_uuid=None, timed=True,
                      record=record)
    profile = ascend._profile_from_gate(gate, "best")
    assert profile["backend"] == "npu" and profile["ceilings"]["bandwidth"] == 1.2e12  # kb/hardware/ascend910b3.yaml
    (case,) = profile["cases"]
    assert case["efficiency"] == pytest.approx(0.5)  # 1.2 GB at 1.2 TB/s is 1 ms; it took 2 ms
    fill = {"pattern": "npu.masked-load-fill", "rung": 3, "confidence": 0.95, "kernel": "k", "evidence": []}
    assert case["class"] == "latency-bound"  # 50% of the copy ceiling, by events alone
    assert gap.assess(profile, [fill])["explained"] and not gap.assess(profile, [])["explained"]


def test_compile_only_without_the_ascend_environment_cannot_run(tmp_path):
    from ladder.diagnoser.cli.optimize import optimize as command

    result = CliRunner().invoke(command, ["run", str(GRID / "solution.py"), "--target", "ascend", "--out",
                                          str(tmp_path / "run")], env={ENV_VAR: str(tmp_path / "none")})
    assert result.exit_code == 3 and "ladder setup ascend" in result.output


@pytest.mark.slow
@pytest.mark.skipif(ascend_python() is None, reason="needs the Triton-Ascend environment")
def test_compile_only_rounds_diagnose_compile_and_check_but_never_accept(tmp_path):
    settings = Settings(rounds=3, target="ascend", rungs=(1, 2, 3), gate=GateSettings(seeds=1))
    summary = optimize(GRID / "solution.py", GRID / "problem.py", tmp_path / "run", RulesProposer(target="ascend"),
                       settings)
    records = [json.loads(line) for line in (tmp_path / "run" / "journal.jsonl").read_text().splitlines()]
    header, first = records[0], next(r for r in records if r.get("kind") == "round")
    assert header["device"] == ascend.COMPILE_ONLY and header["settings"]["target"] == "ascend"
    assert "npu.grid-exceeds-cores" in first["evidence"] and first["rung_reached"] == 3
    (candidate,) = first["proposals"]
    assert candidate["patterns"] == ["npu.grid-exceeds-cores"] and first["accepted"] is None
    assert "compiles for Ascend" in candidate["outcome"]["reason"]
    assert "no longer shows npu.grid-exceeds-cores" in candidate["outcome"]["reason"]
    assert summary["best_round"] == 0 and summary["stopped"] == "the rules proposer has nothing new to try"

