"""Roofline classes: which rule fires for which measurement."""
from __future__ import annotations

import pytest

from ladder.diagnoser.profile import roofline
from ladder.runner.roofline import floor_seconds

H200 = {"bandwidth": 4.2e12, "flops": 7.4e14}


def test_a_kernel_moving_bytes_near_the_copy_ceiling_is_memory_bound():
    bytes_moved = 3.0e8
    got = roofline.classify(bytes_moved / 3.5e12, 1e7, bytes_moved, H200)
    assert got["class"] == "memory-bound"
    assert got["achieved_gbps"] == pytest.approx(3500, rel=1e-6)
    assert got["region"] == "memory"


def test_a_matmul_near_peak_flops_is_compute_bound():
    flops = 2 * 8192.0 ** 3
    got = roofline.classify(flops / 6.5e14, flops, 3 * 8192 * 8192 * 2, H200)
    assert got["class"] == "compute-bound"
    assert got["region"] == "compute"
    assert got["efficiency"] == pytest.approx(6.5 / 7.4, rel=1e-3)


def test_a_kernel_using_neither_unit_is_latency_bound():
    got = roofline.classify(1e-3, 1e9, 1e9, H200)
    assert got["class"] == "latency-bound"
    assert "neither memory" in got["why"]


def test_many_tiny_launches_are_launch_bound_without_ncu():
    got = roofline.classify(24e-6, 1e5, 1e6, H200, launches=4)
    assert got["class"] == "launch-bound"
    assert "6.0 us per launch" in got["why"]


def test_with_ncu_an_idle_gpu_between_kernels_is_launch_bound():
    got = roofline.classify(100e-6, 1e5, 1e6, H200, launches=1, ncu={"busy_s": 30e-6, "memory_pct": 80, "sm_pct": 5})
    assert got["class"] == "launch-bound"


def test_ncu_counters_override_the_event_estimate_of_utilisation():
    # useful bytes suggest 20% of bandwidth, but the kernel really moves far more (re-reads)
    got = roofline.classify(1e-3, 1e6, 0.84e9, H200, ncu={"busy_s": 1e-3, "memory_pct": 85.0, "sm_pct": 10.0})
    assert got["class"] == "memory-bound"
    assert got["util_source"] == "ncu"


def test_when_both_units_are_busy_the_busier_wins():
    got = roofline.classify(1e-3, 1e6, 1e6, H200, ncu={"busy_s": 1e-3, "memory_pct": 65.0, "sm_pct": 90.0})
    assert got["class"] == "compute-bound"


def test_floor_is_the_slower_of_compute_and_memory():
    assert floor_seconds(7.4e14, 4.2e9, H200["bandwidth"], H200["flops"]) == pytest.approx(1.0)
    assert floor_seconds(7.4e11, 4.2e12, H200["bandwidth"], H200["flops"]) == pytest.approx(1.0)
    assert floor_seconds(0, 0, H200["bandwidth"], H200["flops"]) is None


def test_aggregate_weights_utilisation_by_kernel_time():
    launches = [
        {"time_ns": 3000.0, "sol": {"memory_pct": 90.0, "sm_pct": 10.0}, "occupancy": {"achieved_pct": 80.0}, "memory": {}},
        {"time_ns": 1000.0, "sol": {"memory_pct": 10.0, "sm_pct": 50.0}, "occupancy": {"achieved_pct": 20.0}, "memory": {}},
    ]
    got = roofline.aggregate(launches)
    assert got["busy_s"] == pytest.approx(4e-6)
    assert got["memory_pct"] == pytest.approx(70.0)
    assert got["sm_pct"] == pytest.approx(20.0)
    assert got["achieved_occupancy_pct"] == pytest.approx(65.0)


def test_aggregate_of_nothing_is_none():
    assert roofline.aggregate([]) is None
