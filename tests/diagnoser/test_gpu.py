"""On a CUDA machine only: rung 2 for real (runner timing, ncu over the driver), and a whole climb."""
from __future__ import annotations

from pathlib import Path

import pytest

from ladder.diagnoser import ladder
from ladder.diagnoser.subject import Subject
from ladder.diagnoser.profile import ncu

SCALED_ADD = Path(__file__).parent / "data" / "kernels" / "scaled_add"
PAIR = {"solution": str(SCALED_ADD / "solution.py"), "problem": str(SCALED_ADD / "problem.py")}


@pytest.mark.gpu
def test_ncu_profiles_one_forward_per_case_and_only_the_triton_kernel():
    if ncu.find_ncu() is None:
        pytest.skip("ncu not installed")
    got = ncu.profile_jobs([PAIR], ["scaled_add_kernel"], timeout=300)
    assert got["available"], got["why"]
    assert sorted(got["cases"]) == [(0, 0), (0, 1)]
    for launches in got["cases"].values():
        assert [c["kernel"] for c in launches] == ["scaled_add_kernel"]
        assert launches[0]["time_ns"] > 0
        assert launches[0]["occupancy"]["achieved_pct"] > 0


@pytest.mark.gpu
def test_profile_places_every_case_under_the_measured_roofline():
    from ladder.diagnoser.profile import nvidia

    profile = nvidia.profile(PAIR["solution"], PAIR["problem"])
    assert profile["correct"]
    assert profile["ceilings"]["bandwidth"] > 1e12
    for case in profile["cases"]:
        assert case["class"] in ("memory-bound", "compute-bound", "latency-bound", "launch-bound")
        assert case["time_s"] > 0 and case["efficiency"] > 0


@pytest.mark.gpu
def test_a_climb_on_the_gpu_runs_rung_two(tmp_path):
    import torch

    subject = Subject(PAIR["solution"], PAIR["problem"], backend="cuda", device=torch.cuda.get_device_name())
    state = ladder.climb(subject, selected={1, 2, 3})
    ran = {r["rung"]: r for r in state["rungs"]}
    assert ran[2]["ran"] and ran[2]["status"] == "ok", ran[2]
    assert state["profile"]["cases"]
