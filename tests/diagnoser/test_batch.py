"""Diagnosing many kernels at once: same policy per kernel, batched device work, the suite table."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from .ladder_recorded import replaying

from ladder.diagnoser import batch, ladder
from ladder.diagnoser.cli.suite import diagnose_suite
from ladder.diagnoser.subject import Subject

KERNELS = Path(__file__).parent / "data" / "kernels"
SAMPLE = Path(__file__).parent / "data" / "ncu_raw_2025.csv"


def recorded_state(name: str, subject: Subject) -> dict:
    return ladder.climb(subject, rungs=replaying(name))


def test_the_table_shows_rung_reached_worst_case_class_and_patterns(gpu_subject, cpu_subject):
    rows = [batch.summary_row("level1/23_softmax", recorded_state("softmax_rows", gpu_subject)),
            batch.summary_row("vecadd", recorded_state("vecadd_scalar", gpu_subject)),
            batch.summary_row("vecadd-on-cpu", recorded_state("vecadd_scalar", cpu_subject))]
    text = batch.table(rows)
    softmax_line = next(line for line in text.splitlines() if line.startswith("level1/23_softmax"))
    assert softmax_line.split()[1:4] == ["4", "31%", "of"]
    assert "latency-bound" in softmax_line and "nv.register-spill" in softmax_line
    assert batch.climbed(rows) == {1: 3, 2: 2, 3: 2, 4: 2}
    assert "rungs climbed: rung 1: 3/3, rung 2: 2/3, rung 3: 2/3, rung 4: 2/3" in text


def test_an_evidence_chain_goes_from_symptom_to_compiler_code(gpu_subject):
    text = batch.chain("softmax", recorded_state("softmax_rows", gpu_subject))
    lines = text.splitlines()
    assert lines[1].startswith("  symptom: case 0 at 31% of its roofline floor, latency-bound")
    assert lines[2].startswith("  finding: nv.register-spill (rung 3) at line 12")
    assert lines[3].startswith("  IR fact: spill at line 12")
    assert lines[4].startswith("  compiler: softmax_kernel spills 4096 bytes")


FAKE_NCU = """#!{python}
import json, sys
args = sys.argv[1:]
jobs, log = json.load(open(args[-2])), args[-1]
with open(log, "a") as out:
    for number, job in enumerate(jobs):
        out.write(json.dumps({{"job": number, "case": "start"}}) + "\\n")
        if job["solution"] == "crashes.py":
            sys.exit(139)  # the profiled process died here: ncu prints no table
        out.write(json.dumps({{"job": number, "case": 0, "launches": ["add_kernel"]}}) + "\\n")
print(open({sample!r}).read())
"""


def test_a_job_that_kills_the_profiled_process_is_dropped_and_the_rest_profiled(tmp_path, monkeypatch):
    script = tmp_path / "ncu"
    script.write_text(FAKE_NCU.format(python=sys.executable, sample=str(SAMPLE)))
    script.chmod(0o755)
    monkeypatch.setenv("NCU", str(script))
    jobs = [{"solution": "crashes.py", "problem": "p.py"}, {"solution": "ok.py", "problem": "p.py"},
            {"solution": "ok2.py", "problem": "p.py"}]
    got = batch.profile_all(jobs, ["add_kernel"], timeout=120)
    assert got["available"]
    assert set(got["cases"]) == {(1, 0), (2, 0)}
    assert got["errors"] == {(0, "all"): "the profiled process died in this job"}


@pytest.mark.slow
def test_suite_diagnose_prints_the_rung_reached_and_findings_per_operator(tmp_path, monkeypatch):
    from types import SimpleNamespace

    monkeypatch.setenv("LADDER_INDEX_DIR", str(tmp_path / "no-index"))
    operator = SimpleNamespace(key="fixture/scaled_add", solution=KERNELS / "scaled_add" / "solution.py",
                               problem=KERNELS / "scaled_add" / "problem.py")
    printed: list[str] = []
    output = tmp_path / "diagnose.json"
    status = diagnose_suite([operator], "interpret", as_json=False, output=output, echo=printed.append,
                                 err=lambda line: None)
    assert status == 0
    line = next(x for x in printed[0].splitlines() if x.startswith("fixture/scaled_add"))
    assert line.split()[1] == "3"  # rung 4 found no index here, and said so
    saved = json.loads(output.read_text())
    assert saved["states"]["fixture/scaled_add"]["facts"]
    assert saved["climbed"] == {"1": 1, "2": 0, "3": 1, "4": 0}
    assert "no index" in saved["states"]["fixture/scaled_add"]["rungs"][3]["why"]


def test_jobs_are_profiled_in_chunks_of_separate_ncu_runs(tmp_path, monkeypatch):
    script = tmp_path / "ncu"
    script.write_text(FAKE_NCU.format(python=sys.executable, sample=str(SAMPLE)))
    script.chmod(0o755)
    monkeypatch.setenv("NCU", str(script))
    monkeypatch.setattr(batch, "NCU_CHUNK", 2)
    runs = []
    from ladder.diagnoser.profile import ncu

    real = ncu.profile_jobs
    monkeypatch.setattr(ncu, "profile_jobs", lambda jobs, *rest: runs.append(len(jobs)) or real(jobs, *rest))
    jobs = [{"solution": f"ok{i}.py", "problem": "p.py"} for i in range(5)]
    got = batch.profile_all(jobs, ["add_kernel"], timeout=300)
    assert runs == [2, 2, 1]
    # the sample holds one add_kernel row per run: the first job of each chunk gets it
    assert {job for (job, _case), launches in got["cases"].items() if launches} == {0, 2, 4}


SLOW_NCU = """#!{python}
import json, sys, time
jobs, log = json.load(open(sys.argv[-2])), sys.argv[-1]
with open(log, "a") as out:
    for number, job in enumerate(jobs):
        out.write(json.dumps({{"job": number, "case": "start"}}) + "\\n")
        out.flush()
        if job["solution"] == "slow.py":
            time.sleep(60)
        out.write(json.dumps({{"job": number, "case": 0, "launches": ["add_kernel"]}}) + "\\n")
print(open({sample!r}).read())
"""


def test_a_chunk_that_runs_past_its_share_is_not_profiled_and_later_chunks_still_are(tmp_path, monkeypatch):
    script = tmp_path / "ncu"
    script.write_text(SLOW_NCU.format(python=sys.executable, sample=str(SAMPLE)))
    script.chmod(0o755)
    monkeypatch.setenv("NCU", str(script))
    monkeypatch.setattr(batch, "NCU_CHUNK", 1)
    monkeypatch.setattr(batch, "NCU_MIN_S", 1.0)
    jobs = [{"solution": name, "problem": "p.py"} for name in ("slow.py", "ok.py", "ok2.py")]
    got = batch.profile_all(jobs, ["add_kernel"], timeout=12)  # the first chunk's share: 8 s
    assert got["available"]
    assert set(got["cases"]) == {(1, 0), (2, 0)}
    assert got["errors"][(0, "all")].startswith("not profiled: ncu did not finish within")


def _record(efficiencies_floor_ms: list[tuple[float, float]]) -> dict:
    """A bench record whose cases take `measured` ms against a memory floor of `floor` ms."""
    bandwidth = 1e12
    cases = [{"case": i, "time_ms": {"median": measured, "iqr": 0.0}, "bytes": floor / 1e3 * bandwidth, "flops": 0.0,
              "launches": 1, "correct": True} for i, (measured, floor) in enumerate(efficiencies_floor_ms)]
    return {"device": "test", "ok": True, "rejected": None, "cases": cases}


CEILINGS = {"bandwidth": 1e12, "flops": {"fp32": 1e14}}


def test_the_deciding_case_is_the_one_furthest_below_its_floor():
    record = _record([(1.0, 0.5), (1.0, 0.2), (1.0, 0.9)])
    assert batch.deciding_case(record, CEILINGS) == 1


def test_a_kernel_at_its_roofline_in_every_case_has_no_case_to_profile():
    assert batch.deciding_case(_record([(1.0, 0.9), (1.0, 0.85)]), CEILINGS) is None


HANGING = Path(__file__).parent / "cli" / "data" / "hanging_compile.py"


@pytest.mark.slow
def test_a_hanging_compile_stops_its_own_rung_and_the_other_kernels_climb_on(tmp_path, monkeypatch):
    """`ladder suite --diagnose` runs each rung under its limit: one kernel whose compile never ends
    costs its rung 3 (recorded as timed out, rung 1 kept), not the batch."""
    import time

    monkeypatch.setenv("LADDER_INDEX_DIR", str(tmp_path / "no-index"))
    items = [batch.Item("hanging", str(HANGING), None),
             batch.Item("scaled_add", str(KERNELS / "scaled_add" / "solution.py"),
                        str(KERNELS / "scaled_add" / "problem.py"))]
    # The well-behaved kernel's rung 3 takes about 7 s on a loaded 2-core machine: its limit leaves room.
    limits = {**ladder.RUNG_TIMEOUTS_S, "ir": 20.0}
    started = time.monotonic()
    hanging, fine = batch.diagnose_many(items, selected={1, 3}, backend="aot", workers=2, limits=limits)
    assert time.monotonic() - started < 120
    rungs = {r["rung"]: r for r in hanging["rungs"]}
    assert rungs[1]["status"] == "ok"
    assert rungs[3]["status"] == "failed" and rungs[3]["timed_out"] and 20 <= rungs[3]["seconds"] < 60
    assert {r["rung"]: r["status"] for r in fine["rungs"]}[3] == "ok" and fine["facts"]
