"""Ceilings (defaults, per-device cache) and a time's position under the roofline."""

import pytest
import torch

from ladder.runner.roofline import cache_path, default_ceilings, load_ceilings, peak_flops, position, save_ceilings


def test_defaults_are_the_h200_figures_when_nothing_was_measured(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    ceilings = load_ceilings("NVIDIA H200")
    assert ceilings["source"] == "defaults"
    assert ceilings["bandwidth"] == 4.3e12 and ceilings["flops"]["bf16"] == 7.9e14


def test_measured_file_overrides_the_defaults_for_that_device_only(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    path = save_ceilings({"device": "NVIDIA H200", "bandwidth": 4.1e12, "flops": {"bf16": 7.0e14}})
    assert path == cache_path("NVIDIA H200") and path.name == "ceilings-nvidia-h200.json"
    measured = load_ceilings("NVIDIA H200")
    assert measured["bandwidth"] == 4.1e12 and measured["flops"]["bf16"] == 7.0e14
    assert measured["flops"]["fp32"] == default_ceilings()["flops"]["fp32"]
    assert measured["source"] == str(path)
    assert load_ceilings("NVIDIA H100")["source"] == "defaults"


def test_an_h100_gets_its_own_tables_ceilings_though_it_compiles_for_the_h200s_target(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    h100 = load_ceilings("NVIDIA H100 80GB HBM3")
    assert h100["source"] == "defaults" and h100["device"].startswith("NVIDIA H100 ")
    assert h100["bandwidth"] == 3.04e12 and h100["flops"]["tf32"] == 4.12e14
    assert load_ceilings("NVIDIA H200")["bandwidth"] == 4.3e12
    assert load_ceilings("NVIDIA A100-SXM4-80GB")["bandwidth"] == 4.3e12  # no table of its own: the target's


def test_corrupt_cache_falls_back_to_defaults(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    cache_path("X").parent.mkdir(parents=True)
    cache_path("X").write_text("{not json")
    assert load_ceilings("X")["source"] == "defaults"


def test_memory_bound_position():
    # 4.3 GB moved in 1.25 ms at a 4300 GB/s ceiling: floor 1 ms, 80 % of roofline.
    result = position(1.25e-3, 4.3e9, None, 4.3e12, 7.9e14)
    assert result["gbps"] == pytest.approx(3440.0)
    assert result["floor_ms"] == pytest.approx(1.0) and result["roofline_pct"] == pytest.approx(80.0)
    assert result["tflops"] is None


def test_compute_bound_floor_takes_the_larger_of_the_two():
    flops = 2 * 8192 ** 3
    result = position(2e-3, 3 * 8192 * 8192 * 2, flops, 4.3e12, 7.9e14)
    assert result["floor_ms"] == pytest.approx(flops / 790e12 * 1e3)


def test_peak_flops_follow_dtype_and_tf32():
    ceilings = default_ceilings()
    assert peak_flops(ceilings, torch.bfloat16, False) == 7.9e14
    assert peak_flops(ceilings, torch.float32, False) == 6.7e13
    assert peak_flops(ceilings, torch.float32, True) == 4.95e14


def test_a_dtype_without_a_ceiling_of_its_own_gets_the_highest_so_the_floor_stays_unbeatable():
    ceilings = default_ceilings()
    assert peak_flops(ceilings, torch.int8, False) == max(ceilings["flops"].values())
    assert peak_flops(ceilings, "float32", False) == peak_flops(ceilings, torch.float32, False)


def test_default_ceilings_are_the_device_tables_numbers():
    from ladder.runner import hardware

    table = hardware.for_target("cuda:90")
    ceilings = default_ceilings("cuda:90")
    assert ceilings["bandwidth"] == table["ceiling_bandwidth"] and ceilings["flops"] == table["ceiling_flops"]


def test_an_old_format_cache_file_is_ignored_rather_than_misread(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    cache_path("Y").parent.mkdir(parents=True)
    cache_path("Y").write_text('{"device": "Y", "bandwidth_gbps": 4100.0, "tflops": {"bf16": 700.0}}')
    assert load_ceilings("Y")["source"] == "defaults"
