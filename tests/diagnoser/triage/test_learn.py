"""`ladder kb learn`: a verified, accepted round becomes a draft entry; anything else is refused."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from ladder.diagnoser.triage.catalog import load_entry
from ladder.diagnoser.cli.kb import kb
from ladder.diagnoser.triage.learn import LearnError, draft_from_journal, learn_from_runs, write_draft

DIFF = """--- a/solution.py
+++ b/solution.py
@@ -10,7 +10,9 @@
     acc = 0.0
-    for start in range(0, n, BLOCK):
-        acc += tl.sum(tl.load(x + start + offs), axis=0)
+    vec = tl.zeros((BLOCK,), dtype=tl.float32)
+    for start in range(0, n, BLOCK):
+        vec += tl.load(x + start + offs)
+    acc = tl.sum(vec, axis=0)
"""


def journal(tmp_path: Path, *rounds: dict) -> Path:
    path = tmp_path / "journal.jsonl"
    header = {"round": 0, "target": "sm90", "solution": "kernels/level1/47_sum_dim/solution.py",
              "outcome": {"compiled": True, "correct": True, "time_ms": 2.0}}
    path.write_text("\n".join(json.dumps(r) for r in (header, *rounds)) + "\n")
    return path


def good_round(number: int = 1, speedup: float = 1.6, **extra) -> dict:
    record = {"round": number, "rung": 1,
              "proposal": {"summary": "Accumulate a vector in the loop and reduce once after it"},
              "diff": DIFF,
              "evidence": [{"pattern": "nv.loop-carried-reduction", "title": "cross-warp reduction every iteration",
                            "evidence": [{"type": "fact", "kind": "reduction_in_loop", "value": {}},
                                         {"type": "chunk", "path": "lib/Conversion/TritonGPUToLLVM/ReduceOpToLLVM.cpp",
                                          "start": 27, "end": 77, "pass": None}]}],
              "outcome": {"compiled": True, "correct": True, "speedup": speedup, "time_ms": 2.0 / speedup,
                          "baseline_ms": 2.0, "accepted": True}}
    record.update(extra)
    return record


def test_draft_from_an_accepted_round_validates(tmp_path):
    draft = draft_from_journal(journal(tmp_path, good_round()))
    assert draft["status"] == "draft" and draft["id"].startswith("nv.")
    assert "vec += tl.load" in draft["fix"]["after"] and "acc += tl.sum" in draft["fix"]["before"]
    assert {d["level"] for d in draft["detect"]} == {"source", "ir"}
    assert draft["compiler"][0]["lines"] == [27, 77]
    path = write_draft(draft, tmp_path / f"{draft['id']}.yaml")
    assert load_entry(path).status == "draft"


def test_best_accepted_round_is_chosen_by_default(tmp_path):
    draft = draft_from_journal(journal(tmp_path, good_round(1, 1.2), good_round(2, 2.5), good_round(3, 1.4)))
    assert draft["learned_from"]["round"] == 2


@pytest.mark.parametrize("outcome,why", [
    ({"compiled": True, "correct": False, "speedup": 3.0}, "not verified correct"),
    ({"compiled": True, "correct": True, "speedup": 0.9}, "not faster"),
    ({"compiled": False}, "did not compile"),
    ({"compiled": True, "correct": True, "speedup": 1.3, "accepted": False}, "did not accept"),
])
def test_round_that_was_not_correct_and_faster_is_refused(tmp_path, outcome, why):
    with pytest.raises(LearnError, match=why):
        draft_from_journal(journal(tmp_path, good_round(outcome=outcome)), round_=1)


def test_journal_without_any_good_round_is_refused(tmp_path):
    bad = good_round(outcome={"compiled": True, "correct": False})
    with pytest.raises(LearnError, match="nothing to learn"):
        draft_from_journal(journal(tmp_path, bad))


def test_garbage_line_is_reported_with_its_number(tmp_path):
    path = tmp_path / "j.jsonl"
    path.write_text('{"round": 1}\nnot json\n')
    with pytest.raises(LearnError, match="j.jsonl:2"):
        draft_from_journal(path)


def test_existing_ids_are_not_overwritten(tmp_path):
    draft = draft_from_journal(journal(tmp_path, good_round()), pattern_id="nv.tiny-block")
    assert draft["id"] == "nv.tiny-block-2"


def test_cli_writes_the_draft_and_prints_where(tmp_path):
    out = tmp_path / "draft.yaml"
    result = CliRunner().invoke(kb, ["learn", str(journal(tmp_path, good_round())), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "written to" in result.output and yaml.safe_load(out.read_text())["status"] == "draft"


def test_cli_refusal_is_one_line(tmp_path):
    result = CliRunner().invoke(kb, ["learn", str(journal(tmp_path, good_round(outcome={"correct": False}))),
                                     "--round", "1", "--out", "-"])
    assert result.exit_code == 1 and len(result.output.strip().splitlines()) == 1


def test_a_folder_of_runs_drafts_only_the_fixes_no_entry_covers(tmp_path):
    covered = good_round(1, proposer="rules",
                         proposal={"summary": "fix nv.hardcoded-config (autotune)", "patterns": ["nv.hardcoded-config"]})
    new = good_round(2, speedup=2.1)
    for name, record in (("a", covered), ("b", new)):
        folder = tmp_path / "runs" / name
        folder.mkdir(parents=True)
        journal(folder, {**record, "kind": "round", "accepted": f"r{record['round']}-c1"})
    learned = {Path(e["journal"]).parent.name: e for e in learn_from_runs(tmp_path / "runs")}
    assert learned["a"]["covered_by"] == ["nv.hardcoded-config"] and "draft" not in learned["a"]
    assert learned["b"]["draft"]["status"] == "draft" and "covered_by" not in learned["b"]


REWRITE_BEFORE = '''"""Sum of rows."""
import triton
import triton.language as tl


def _grid(n):
    return (n,)


@triton.jit
def row_sum_kernel(x, y, n, BLOCK: tl.constexpr):
    acc = 0.0
    for start in range(0, n, BLOCK):
        acc += tl.sum(tl.load(x + start + tl.arange(0, BLOCK)), axis=0)
    tl.store(y + tl.program_id(0), acc)


class ModelNew:
    def forward(self, x):
        return x
'''
REWRITE_AFTER = REWRITE_BEFORE.replace("""    acc = 0.0
    for start in range(0, n, BLOCK):
        acc += tl.sum(tl.load(x + start + tl.arange(0, BLOCK)), axis=0)
    tl.store(y + tl.program_id(0), acc)""", """    vec = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n, BLOCK):
        vec += tl.load(x + start + tl.arange(0, BLOCK))
    tl.store(y + tl.program_id(0), tl.sum(vec, axis=0))""").replace("return (n,)", "return (n, 1)")


def rewrite_diff(before: str, after: str, context: int) -> str:
    import difflib

    return "".join(difflib.unified_diff(before.splitlines(True), after.splitlines(True), "a/solution.py",
                                        "b/solution.py", n=context))


def test_snippets_keep_the_lines_between_the_changes():
    """Removed and added lines alone would lose the loop header they sit in; both sides keep it."""
    from ladder.diagnoser.triage.learn import _diff_sides

    before, after = _diff_sides(DIFF)
    assert before.splitlines()[:2] == ["acc = 0.0", "for start in range(0, n, BLOCK):"]
    assert "for start in range(0, n, BLOCK):" in after and "acc = tl.sum(vec, axis=0)" in after


@pytest.mark.parametrize("context", [3, 200])
def test_a_rewrite_is_shown_by_the_kernels_it_changed(context):
    """A whole-file hunk (context 200) or a partial one (3: the hunk ends inside the class) shows only
    the changed @triton.jit function on each side, not the helper that changed beside it or the imports."""
    from ladder.diagnoser.triage.learn import _diff_sides

    before, after = _diff_sides(rewrite_diff(REWRITE_BEFORE, REWRITE_AFTER, context))
    assert before.startswith("@triton.jit\ndef row_sum_kernel") and "acc += tl.sum" in before
    assert after.startswith("@triton.jit\ndef row_sum_kernel") and "vec += tl.load" in after
    assert "import" not in before + after and "ModelNew" not in before + after


def test_a_long_snippet_is_clipped_and_names_the_candidate_file(tmp_path, monkeypatch):
    from ladder.diagnoser.triage import learn

    monkeypatch.setattr(learn, "SNIPPET_LINES", 3)
    run = tmp_path / "run"
    (run / "candidates").mkdir(parents=True)
    (run / "candidates" / "r1-c1.py").write_text(REWRITE_AFTER)
    draft = draft_from_journal(journal(run, good_round(
        diff=rewrite_diff(REWRITE_BEFORE, REWRITE_AFTER, 200), kind="round", accepted="r1-c1",
        proposals=[{"id": "r1-c1", "file": "candidates/r1-c1.py"}])))
    assert draft["fix"]["after"].splitlines()[-1].startswith("# ... ")
    assert "learned_from.candidate" in draft["fix"]["after"] and len(draft["fix"]["after"].splitlines()) == 4
    assert draft["learned_from"]["candidate"] == str(run / "candidates" / "r1-c1.py")


def test_an_agent_fix_for_a_catalog_finding_is_drafted_not_covered(tmp_path):
    """An agent's `patterns` are the findings its rewrite answers, not a catalog fix it applied: the
    win is new knowledge, drafted and marked as another fix for that entry's finding."""
    agent = good_round(1, speedup=5.0, proposer="agent",
                       proposal={"summary": "the row sum taken algebraically", "patterns": ["nv.unfused-epilogue"]})
    (tmp_path / "runs" / "a").mkdir(parents=True)
    journal(tmp_path / "runs" / "a", {**agent, "kind": "round", "accepted": "r1-c1"})
    [entry] = learn_from_runs(tmp_path / "runs")
    assert "covered_by" not in entry and entry["proposer"] == "agent"
    assert "A fix of its own for what nv.unfused-epilogue finds" in entry["draft"]["fix"]["how"]
    assert entry["draft"]["learned_from"]["proposer"] == "agent"


def test_an_agent_draft_is_named_by_the_change_its_candidate_states_not_by_the_case_it_answered(tmp_path):
    """An agent's summary leads with the evidence ("N = 3000 at 54% of the roofline ..."); the id and
    title come from the accepted candidate's docstring, less the operator named before its colon."""
    run = tmp_path / "runs" / "a"
    (run / "candidates").mkdir(parents=True)
    (run / "candidates" / "r2-c1.py").write_text(
        '"""Linear + Swish + scale: operands through TMA descriptors into 128x256 tiles, output rows\n'
        'padded to 16 bytes. The rest of the paragraph.\n\nWhy, at length.\n"""\n' + REWRITE_AFTER)
    agent = good_round(2, speedup=1.2, proposer="agent", kind="round", accepted="r2-c1",
                       proposal={"summary": "N = 3000 at 54% of the roofline against cuBLAS's 81%: TMA"},
                       proposals=[{"id": "r2-c1", "file": "candidates/r2-c1.py"}])
    journal(run, agent)
    [entry] = learn_from_runs(tmp_path / "runs")
    draft = entry["draft"]
    assert draft["id"] == "nv.operands-through-tma-descriptors"
    assert draft["title"] == "operands through TMA descriptors into 128x256 tiles, output rows padded to 16 bytes"
    assert draft["fix"]["summary"].startswith("N = 3000")  # the evidence stays in the fix's summary

    (run / "candidates" / "r2-c1.py").write_text(REWRITE_AFTER.split("\n", 1)[1])  # no docstring: the summary names it
    [entry] = learn_from_runs(tmp_path / "runs")
    assert entry["draft"]["id"] == "nv.n-3000-at-54"


@pytest.mark.parametrize("first_sentence,expected", [
    ("round 4's TMA and cp.async main loops, each beside persistent configs", "nv.tma-cp-async-main"),
    ("Rounds 2 and 3's split tails kept beside TMA operands", "nv.split-tails-kept-beside"),
    ("the GEMM's operands now come through TMA descriptors", "nv.gemm-operands-now-come"),
])
def test_a_draft_id_names_the_change_not_the_round_it_builds_on(tmp_path, first_sentence, expected):
    run = tmp_path / "runs" / "a"
    (run / "candidates").mkdir(parents=True)
    (run / "candidates" / "r5-c1.py").write_text(f'"""{first_sentence}. More.\n"""\n' + REWRITE_AFTER)
    journal(run, good_round(5, speedup=1.1, proposer="agent", kind="round", accepted="r5-c1",
                            proposal={"summary": "case 4 at 51%: persistent configs"},
                            proposals=[{"id": "r5-c1", "file": "candidates/r5-c1.py"}]))
    [entry] = learn_from_runs(tmp_path / "runs")
    assert entry["draft"]["id"] == expected


def test_a_folder_gets_distinct_ids_and_writes_where_out_says(tmp_path):
    for name in ("a", "b"):
        (tmp_path / "runs" / name).mkdir(parents=True)
        journal(tmp_path / "runs" / name, {**good_round(1, speedup=2.0), "kind": "round", "accepted": "r1-c1"})
    out = tmp_path / "drafts"
    result = CliRunner().invoke(kb, ["learn", str(tmp_path / "runs"), "--out", str(out)])
    assert result.exit_code == 0, result.output
    written = sorted(p.name for p in out.glob("*.yaml"))
    assert len(written) == 2 and written[0] != written[1]
    printed = CliRunner().invoke(kb, ["learn", str(tmp_path / "runs"), "--out", "-"])
    assert printed.exit_code == 0 and printed.output.count("status: draft") == 2
    assert sorted(p.name for p in out.glob("*.yaml")) == written
