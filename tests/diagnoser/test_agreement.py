"""The rungs agree: a later rung's version of a finding confirms it in the climb's state (all the
evidence, the highest confidence), and a finding the facts contradict leaves it, kept as vetoed."""
from __future__ import annotations

import copy

from ladder.diagnoser import agreement, ladder
from ladder.diagnoser.ladder import Rung

SOURCE = {"type": "source", "file": "s.py", "line": 30, "text": "acc = tl.zeros((256, 256), tl.float32)",
          "detail": "about 600 registers per thread", "cases": ["M=4096"]}
FACT = {"type": "fact", "kernel": "k", "kind": "spill", "file": "s.py", "line": 33, "stage": "sass",
        "excerpt": "STL.64 [R1+0x10], R4", "value": {"spill_stores_bytes": 7152, "spill_loads_bytes": 5620}}
METRIC = {"type": "metric", "name": "local_load_bytes", "value": 1.2e9, "unit": "B"}


def finding(rung: int, confidence: float, *evidence: dict, pattern: str = "nv.register-spill") -> dict:
    return {"pattern": pattern, "rung": rung, "title": "registers spill to local memory", "file": "s.py", "line": 30,
            "kernel": "k", "confidence": confidence, "evidence": [copy.deepcopy(e) for e in evidence], "fix": None}


def vetoed(pattern: str = "nv.register-spill") -> dict:
    return agreement.vetoed_record(finding(1, 0.75, SOURCE, pattern=pattern), 3, "ptxas spills 0 bytes",
                                   [{**FACT, "kind": "resources", "value": {"spill_stores_bytes": 0}}])


def stub_rungs(triage: dict, ir: dict) -> dict[str, Rung]:
    return {"triage": Rung(1, "pattern triage", lambda subject, state: copy.deepcopy(triage)),
            "ir": Rung(3, "IR attribution", lambda subject, state: copy.deepcopy(ir), outputs=("facts",))}


def test_a_confirmed_finding_keeps_all_its_evidence_and_the_highest_confidence(cpu_subject):
    rungs = stub_rungs({"findings": [finding(1, 0.75, SOURCE)]},
                       {"findings": [finding(3, 0.95, SOURCE, FACT)], "facts": [FACT]})
    state = ladder.climb(cpu_subject, rungs=rungs)
    [kept] = state["findings"]
    assert kept["rung"] == 3 and kept["confidence"] == 0.95
    assert kept["evidence"] == [SOURCE, FACT]  # the source line, then the IR excerpt
    assert state["vetoed"] == []


def test_merging_keeps_the_strongest_evidence_whichever_side_holds_it():
    state = {"findings": [finding(2, 0.8, SOURCE, METRIC)]}
    agreement.fold(state, {"findings": [finding(3, 0.9, SOURCE, FACT)]})
    [kept] = state["findings"]
    assert {e["type"] for e in kept["evidence"]} == {"source", "metric", "fact"}
    assert kept["confidence"] == 0.95 and kept["rung"] == 3  # the IR corroborates what rung 2 measured
    assert any(e.get("excerpt") == FACT["excerpt"] for e in kept["evidence"])


def test_a_later_version_of_a_finding_is_not_counted_as_corroboration_twice():
    earlier = finding(1, 0.75, SOURCE)
    later = finding(3, 0.9, SOURCE, FACT)  # triage already merged the source line into it
    assert agreement.absorb(earlier, later)["confidence"] == 0.9


def test_a_vetoed_finding_leaves_the_findings_with_its_reason(cpu_subject):
    other = finding(1, 0.8, {**SOURCE, "line": 12}, pattern="nv.scalar-access") | {"line": 12}
    rungs = stub_rungs({"findings": [finding(1, 0.75, SOURCE), other]}, {"findings": [], "vetoed": [vetoed()]})
    state = ladder.climb(cpu_subject, rungs=rungs)
    assert [f["pattern"] for f in state["findings"]] == ["nv.scalar-access"]
    [ruled_out] = state["vetoed"]
    assert ruled_out["pattern"] == "nv.register-spill" and ruled_out["evidence"] == [SOURCE]
    assert ruled_out["veto"] == {"rung": 3, "reason": "ptxas spills 0 bytes", "evidence": vetoed()["veto"]["evidence"]}


def test_a_measured_finding_is_not_vetoed_by_a_prediction_check():
    state = {"findings": [finding(2, 0.8, SOURCE, METRIC)]}
    agreement.fold(state, {"vetoed": [vetoed()]})
    assert len(state["findings"]) == 1 and state["vetoed"] == []


def test_folding_the_same_rung_twice_changes_nothing():
    state = {"findings": [finding(1, 0.75, SOURCE)]}
    output = {"findings": [finding(3, 0.95, SOURCE, FACT)], "vetoed": []}
    agreement.fold(state, output)
    once = copy.deepcopy(state)
    agreement.fold(state, output)
    assert state == once
