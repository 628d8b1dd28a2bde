"""The judge's processes' environment: never this process's secrets (a candidate could print them into its
verdict), and the autotuner's choices recorded (the next round's rung 3 reads them)."""
from __future__ import annotations

import os

from ladder.diagnoser.optimize.gate import GateSettings, run_gate, without_secrets


def test_the_judge_runs_without_keys_and_tokens_which_come_back_afterwards(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-never-seen")
    monkeypatch.setenv("LADDER_LLM_API_KEY", "sk-never-seen-either")
    monkeypatch.setenv("HF_TOKEN", "hf-never-seen")
    monkeypatch.setenv("LADDER_INDEX_DIR", "/kept")
    seen = {}

    def bench(problem, solutions, backend, **options):
        seen.update(os.environ)
        raise RuntimeError("stop here")

    solution = tmp_path / "solution.py"
    solution.write_text("class ModelNew: pass\n")
    try:
        run_gate(tmp_path / "problem.py", solution, solution, {}, GateSettings(), bench=bench)
    except RuntimeError:
        pass
    assert not {"OPENAI_API_KEY", "LADDER_LLM_API_KEY", "HF_TOKEN"} & set(seen)
    assert seen["LADDER_INDEX_DIR"] == "/kept"
    assert os.environ["OPENAI_API_KEY"] == "sk-never-seen" and os.environ["HF_TOKEN"] == "hf-never-seen"


def test_names_that_only_look_alike_are_kept(monkeypatch):
    monkeypatch.setenv("TOKENIZERS_PARALLELISM", "false")
    monkeypatch.setenv("LADDER_EVALUATION", "x")
    with without_secrets():
        assert os.environ["TOKENIZERS_PARALLELISM"] == "false" and os.environ["LADDER_EVALUATION"] == "x"


def test_the_judge_records_the_autotuners_choices_and_leaves_no_setting_behind(tmp_path, monkeypatch):
    monkeypatch.delenv("TRITON_CACHE_AUTOTUNING", raising=False)
    seen = {}

    def bench(problem, solutions, backend, **options):
        seen.update(os.environ)
        raise RuntimeError("stop here")

    solution = tmp_path / "solution.py"
    solution.write_text("class ModelNew: pass\n")
    try:
        run_gate(tmp_path / "problem.py", solution, solution, {}, GateSettings(), bench=bench)
    except RuntimeError:
        pass
    assert seen["TRITON_CACHE_AUTOTUNING"] == "1" and "TRITON_CACHE_AUTOTUNING" not in os.environ
