"""Ceilings (defaults, per-device cache) and a time's position under the roofline."""
import json

import pytest
import torch

from runner.roofline import DEFAULT_CEILINGS, cache_path, load_ceilings, peak_tflops, position, save_ceilings


def test_defaults_are_the_h200_figures_when_nothing_was_measured(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    ceilings = load_ceilings("NVIDIA H200")
    assert ceilings["source"] == "defaults"
    assert ceilings["bandwidth_gbps"] == 4300.0 and ceilings["tflops"]["bf16"] == 790.0


def test_measured_file_overrides_the_defaults_for_that_device_only(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    path = save_ceilings({"device": "NVIDIA H200", "bandwidth_gbps": 4100.0, "tflops": {"bf16": 700.0}})
    assert path == cache_path("NVIDIA H200") and path.name == "ceilings-nvidia-h200.json"
    measured = load_ceilings("NVIDIA H200")
    assert measured["bandwidth_gbps"] == 4100.0 and measured["tflops"]["bf16"] == 700.0
    assert measured["tflops"]["fp32"] == DEFAULT_CEILINGS["tflops"]["fp32"]
    assert measured["source"] == str(path)
    assert load_ceilings("NVIDIA H100")["source"] == "defaults"


def test_corrupt_cache_falls_back_to_defaults(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    cache_path("X").parent.mkdir(parents=True)
    cache_path("X").write_text("{not json")
    assert load_ceilings("X")["source"] == "defaults"


def test_memory_bound_position():
    # 4.3 GB moved in 1.25 ms at a 4300 GB/s ceiling: floor 1 ms, 80 % of roofline.
    result = position(1.25e-3, 4.3e9, None, 4300.0, 790.0)
    assert result["gbps"] == pytest.approx(3440.0)
    assert result["floor_ms"] == pytest.approx(1.0) and result["roofline_pct"] == pytest.approx(80.0)
    assert result["tflops"] is None


def test_compute_bound_floor_takes_the_larger_of_the_two():
    flops = 2 * 8192 ** 3
    result = position(2e-3, 3 * 8192 * 8192 * 2, flops, 4300.0, 790.0)
    assert result["floor_ms"] == pytest.approx(flops / 790e12 * 1e3)


def test_peak_flops_follow_dtype_and_tf32():
    ceilings = json.loads(json.dumps(DEFAULT_CEILINGS))
    assert peak_tflops(ceilings, torch.bfloat16, False) == 790.0
    assert peak_tflops(ceilings, torch.float32, False) == 67.0
    assert peak_tflops(ceilings, torch.float32, True) == 495.0
