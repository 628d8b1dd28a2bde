"""The gate the Ray tests run on logical GPUs: the deterministic fake gate, holding its GPU a moment
(so two evaluations on one GPU would overlap visibly) and dying once where the test asks it to."""
from __future__ import annotations

import os
import time
from pathlib import Path

from .test_loop import fake_gate

HOLD_S = 0.3


def gate(problem, best, initial, candidates, settings, torch_compile=False):
    marker = Path(problem).with_name("kill-once")
    if candidates and marker.is_file():
        marker.unlink()
        os._exit(1)  # the worker dies mid-evaluation, as a lost GPU or node would take it
    time.sleep(HOLD_S)
    return fake_gate(problem, best, initial, candidates, settings, torch_compile)


def cache_gate(problem, best, initial, candidates, settings, torch_compile=False):
    """What a judge starting here would find (in the result's record): the files in each
    contestant's private kernel cache."""
    from ladder.diagnoser.optimize.gate import GateResult
    from ladder.runner.prebuild import cache_folder

    files = {"best": best, "initial": initial, **candidates}
    found = {name: sum(1 for entry in cache_folder(Path(path)).rglob("*") if entry.is_file())
             for name, path in files.items()}
    return GateResult(verdicts={}, spread=0.0, best_cases=[], device=None, device_uuid=None, timed=False,
                      record={"cached_files": found})


def holding_gate(problem, best, initial, candidates, settings, torch_compile=False):
    """The fake gate holding its GPU for the seconds the problem file names (``# hold: S``)."""
    time.sleep(float(Path(problem).read_text().split("# hold:")[1]))
    return fake_gate(problem, best, initial, candidates, settings, torch_compile)
