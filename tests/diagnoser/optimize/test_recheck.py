"""bench/optimize/recheck.py: every accepted best is judged again in a `ladder bench` of its own."""
from __future__ import annotations

import contextlib
import json
import shutil
from pathlib import Path

import pytest

from ladder.diagnoser.optimize.journal import Journal
from ladder.runner.paths import kernel_cache

from ...bench_scripts import load_bench_script

ROOT = Path(__file__).resolve().parents[3]
ADD = ROOT / "tests" / "runner" / "fixtures" / "add"
recheck = load_bench_script("optimize/recheck.py")
gpu_clocks = load_bench_script("optimize/gpu_clocks.py")


def run_folder(runs: Path, key: str, best_file: str, best_round: int = 1, device: str | None = None) -> Path:
    folder = runs / key
    journal = Journal(folder)
    best = {"round": best_round, "file": "best.py", "geomean_vs_initial": 1.25, "cases": []}
    journal.start({"solution": str(ADD / "solution.py"), "problem": str(ADD / "problem.py"), "best": {"round": 0}})
    journal.append({"kind": "round", "round": 1, "spread": 0.02, "device": device, "accepted": "r1-c1", "best": best})
    journal.append({"kind": "stop", "reason": "nothing new", "final": True, "after_round": 1, "best": best})
    shutil.copy(ADD / "solution.py", folder / "initial.py")
    shutil.copy(ADD / best_file, folder / "best.py")
    return folder


@pytest.mark.slow
def test_a_wrong_best_fails_the_recheck_and_a_second_call_runs_nothing_again(tmp_path, capsys):
    runs = tmp_path / "runs"
    run_folder(runs, "level1/good", "solution.py")
    run_folder(runs, "level1/wrong", "wrong_values.py")
    run_folder(runs, "level1/unchanged", "solution.py", best_round=0)
    out = tmp_path / "recheck.json"
    assert recheck.main(["--runs", str(runs), "--out", str(out), "--backend", "interpret", "--seeds", "1"]) == 1
    rows = {Path(row["run"]).name: row for row in json.loads(out.read_text())["operators"]}
    assert set(rows) == {"good", "wrong"}  # a run whose best is its initial version needs no re-check
    assert rows["good"]["correct"] and not rows["good"]["timed"] and "ratio" not in rows["good"]
    assert not rows["wrong"]["correct"] and "exceeds tolerance" in rows["wrong"]["why"]
    assert rows["good"]["journal_spread"] == 0.02 and rows["good"]["base_seed"] is not None
    capsys.readouterr()
    assert recheck.main(["--runs", str(runs), "--out", str(out), "--backend", "interpret"]) == 1
    assert "| level1/wrong | NO:" in capsys.readouterr().out
    assert json.loads(out.read_text())["operators"] == list(rows.values())


def test_the_speedup_must_agree_with_the_journals_within_its_spread():
    rows = [{"run": "r/level1/a", "correct": True, "journal_speedup": 1.5, "speedup": 1.52, "ratio": 1.52 / 1.5,
             "tolerance": 0.03, "within_spread": True}]
    assert "| level1/a | yes | 1.500x | 1.520x | 1.013 (tolerance 3.0%) | yes |" in recheck.table(rows)


def test_runs_set_aside_as_superseded_are_not_the_suites_result(tmp_path):
    runs = tmp_path / "runs"
    kept = run_folder(runs, "level1/good", "solution.py")
    run_folder(runs, "superseded/good-call-7", "solution.py")
    assert recheck.accepted_runs(runs) == [kept]


def test_the_autotuners_choice_is_read_with_the_runner_up_beside_it(tmp_path):
    solution = ADD / "solution.py"
    with recheck_knobs_cache(tmp_path / "triton"):
        folder = kernel_cache(solution) / "KEYHASH"
    folder.mkdir(parents=True)
    timings = [[{"kwargs": {"BLOCK_M": 128, "BLOCK_N": 256}, "num_warps": 8, "num_stages": 3}, [0.205, 0.2, 0.21]],
               [{"kwargs": {"BLOCK_M": 128, "BLOCK_N": 128}, "num_warps": 4, "num_stages": 4}, [0.198, 0.19, 0.2]]]
    (folder / "matmul_kernel.autotune.json").write_text(json.dumps({"key": [1024, 8192], "configs_timings": timings}))
    assert recheck.autotuner_picks(tmp_path / "triton", solution) == [
        {"kernel": "matmul_kernel", "key": [1024, 8192], "config": "BLOCK_M=128 BLOCK_N=128 warps=4 stages=4",
         "ms": 0.198, "runner_up_ms": 0.205}]
    assert recheck.autotuner_picks(tmp_path / "elsewhere", solution) == []


@contextlib.contextmanager
def recheck_knobs_cache(folder: Path):
    """Triton's cache folder set to ``folder`` for the block, as the re-check's child sees it."""
    from triton import knobs

    with knobs.cache.scope():
        knobs.cache.dir = str(folder)
        yield


def test_only_narrows_the_recheck_to_the_named_operators_and_a_misspelt_one_is_an_error(tmp_path):
    runs = tmp_path / "runs"
    run_folder(runs, "level1/a", "solution.py")
    named = run_folder(runs, "level2/b", "solution.py")
    assert recheck.accepted_runs(runs, ("level2/b",)) == [named]
    with pytest.raises(SystemExit, match="no run under .* for level2/bb"):
        recheck.accepted_runs(runs, ("level2/bb",))


def test_a_speedup_timed_on_another_card_gets_its_ratio_but_no_verdict():
    row = {"journal_speedup": 1.8, "journal_spread": 0.01, "journal_device": "NVIDIA H200",
           "device": "NVIDIA H100 80GB HBM3"}
    elsewhere = recheck.compare_speed(2.3, row)
    assert elsewhere["within_spread"] is None and elsewhere["ratio"] == pytest.approx(2.3 / 1.8)
    assert "| other card (journal: NVIDIA H200) |" in recheck.table([{"run": "r/level1/a", "correct": True, **row,
                                                                      **elsewhere}])
    assert recheck.compare_speed(2.3, {**row, "device": "NVIDIA H200"})["within_spread"] is False
    assert recheck.compare_speed(1.81, {**row, "device": "NVIDIA H200"})["within_spread"] is True


def test_records_of_an_earlier_call_are_judged_again_by_the_journals_card(tmp_path):
    folder = run_folder(tmp_path / "runs", "level1/good", "solution.py", device="NVIDIA H200")
    earlier = {"run": str(folder), "correct": True, "journal_speedup": 1.25, "journal_spread": 0.02,
               "device": "NVIDIA H100 80GB HBM3", "speedup": 1.6, "ratio": 1.28, "tolerance": 0.03,
               "within_spread": False}
    again = recheck.rejudged(earlier)
    assert again["journal_device"] == "NVIDIA H200" and again["within_spread"] is None


def test_the_bests_accepted_on_this_calls_card_are_rechecked_first(tmp_path):
    runs = tmp_path / "runs"
    first = run_folder(runs, "level1/a", "solution.py", device="NVIDIA H200")
    second = run_folder(runs, "level1/b", "solution.py", device="NVIDIA H100 80GB HBM3")
    third = run_folder(runs, "level2/c", "solution.py", device="NVIDIA H100 80GB HBM3")
    found = recheck.accepted_runs(runs)
    assert found == [first, second, third]
    assert recheck.same_card_first(found, "NVIDIA H100 80GB HBM3") == [second, third, first]
    assert recheck.same_card_first(found, None) == found


def test_with_no_records_yet_the_card_is_the_one_the_driver_names_or_none(tmp_path, monkeypatch):
    tools = tmp_path / "bin"
    tools.mkdir()
    smi = tools / "nvidia-smi"
    smi.write_text('#!/bin/sh\n[ "$1" = "--query-gpu=name" ] && printf "NVIDIA H200\\nNVIDIA H200\\n"\n')
    smi.chmod(0o755)
    monkeypatch.setenv("PATH", str(tools))
    assert gpu_clocks.card_model() == "NVIDIA H200"
    smi.write_text("#!/bin/sh\nexit 9\n")
    assert gpu_clocks.card_model() is None
    smi.unlink()
    assert gpu_clocks.card_model() is None



def test_the_clocks_and_power_during_a_recheck_are_sampled_from_the_driver(tmp_path, monkeypatch):
    tools = tmp_path / "bin"
    tools.mkdir()
    smi = tools / "nvidia-smi"
    smi.write_text(f'#!/bin/sh\necho "$@" >> {tools / "asked"}\nprintf "1755, 1980, 699.1, 700.00, [N/A]\\n"\n')
    smi.chmod(0o755)
    monkeypatch.setenv("PATH", str(tools))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3")
    with gpu_clocks.ClockSampler(period=0.05) as clocks:
        __import__("time").sleep(0.5)
    summary = clocks.summary()
    assert summary["samples"] >= 2
    assert summary["sm_clock_mhz"] == {"median": 1755.0, "min": 1755.0} and summary["max_sm_clock_mhz"] == 1980.0
    assert summary["power_w"]["max"] == 699.1 and summary["power_limit_w"] == 700.0
    assert "temperature_c_max" not in summary  # the driver's [N/A] is no reading
    assert "-i 3" in (tools / "asked").read_text()
    smi.unlink()
    with gpu_clocks.ClockSampler(period=0.05) as clocks:
        pass
    assert clocks.summary() is None


def test_clock_samples_summarize_to_median_and_extremes():
    samples = [gpu_clocks.parse(line) for line in ("1980, 1980, 400, 700, 50", "1500, 1980, 700, 700, 71",
                                                   "1755, 1980, 650, 700, 66")]
    summary = gpu_clocks.summarize(samples)
    assert summary["sm_clock_mhz"] == {"median": 1755.0, "min": 1500.0}
    assert summary["power_w"] == {"median": 650.0, "max": 700.0} and summary["temperature_c_max"] == 71.0
    assert gpu_clocks.summarize([]) is None
    row = {"run": "r/level1/a", "correct": True, "journal_speedup": 1.2, "clocks": summary}
    assert recheck.table([row]).splitlines()[-1].endswith("| 1755/1980 MHz, 700/700 W |")
    assert recheck.table([{**row, "clocks": None}]).splitlines()[-1].endswith("| - | - |")


def test_a_record_of_a_best_a_later_round_replaced_is_dropped_and_the_new_best_rechecked(tmp_path, capsys):
    runs = tmp_path / "runs"
    replaced = run_folder(runs, "level1/replaced", "solution.py")
    kept = run_folder(runs, "level1/kept", "solution.py")
    out = tmp_path / "recheck.json"
    out.write_text(json.dumps({"operators": [
        {"run": str(replaced), "journal_speedup": 1.1, "correct": True},  # the figure of an earlier best
        {"run": str(kept), "journal_speedup": 1.25, "correct": True},  # the journal's best's own figure
    ]}))
    assert recheck.main(["--runs", str(runs), "--out", str(out), "--backend", "interpret", "--deadline", "0"]) == 0
    printed = capsys.readouterr().out
    assert f"{replaced}: its record is not of the present best (replaced, or re-timed since); dropped" in printed
    assert f"{replaced}: not started (deadline)" in printed and f"{kept}: not started" not in printed
    assert not recheck.of_the_present_best({"run": str(kept), "best_hash": "another best's", "journal_speedup": 1.25})
    assert not recheck.of_the_present_best({"run": str(tmp_path / "gone"), "journal_speedup": 1.25})
