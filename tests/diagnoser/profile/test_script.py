"""Rung 2 for a script: launch sites as cases, placed on the roofline from their replayed times, the
heaviest under a bounded Nsight Compute, and the policy deciding on their gap like a pair's."""
from __future__ import annotations

from pathlib import Path

import pytest

from ladder.diagnoser import gap, ladder
from ladder.diagnoser.profile import ncu, script
from ladder.diagnoser.subject import Subject

SCRIPTS = Path(__file__).parents[1] / "data" / "kernels" / "script"
ROWS = ncu.parse_raw_csv((Path(__file__).parents[1] / "data" / "ncu_raw_2025.csv").read_text())
H200 = {"bandwidth": 4.2e12, "flops": {"fp32": 6.7e13, "tf32": 4.9e14, "fp16": 7.9e14, "bf16": 7.9e14},
        "source": "test", "device": "NVIDIA H200"}
FACTS = {"case": "script", "script_s": 2.0, "launches": 1112, "tuning_launches": 1080, "untracked_launches": 0,
         "device": "NVIDIA H200", "backend": "cuda"}


def site(name, line, launches, median_ms, bytes_moved, flops=None, dtype="float32", tuning=0, timed=True):
    variant = {"key": f"{name}-v0", "launches": launches, "arguments": [{"name": "x", "shape": [1024], "dtype": dtype,
                                                                         "stride": [1]}],
               "grid": [8, 1, 1], "bytes": bytes_moved, "flops": flops, "flops_from": "(mxk) @ (kxn)" if flops else None,
               "dtype": dtype}
    variant.update({"time_ms": {"median": median_ms, "iqr": median_ms / 50, "clock": "events"}} if timed
                   else {"not_timed": "replay failed: RuntimeError: boom"})
    return {"key": f"{name}@/w/train.py:{line}", "kernel": name, "function": f"train.{name}", "kernel_file": "/w/train.py",
            "kernel_line": 1, "file": "/w/train.py", "line": line, "order": line, "dot": bool(flops),
            "launches": launches, "tuning_launches": tuning, "other_launches": 0, "variants": [variant]}


GEMM = site("matmul_kernel", 40, 10, 2.0, 3 * 4096 * 4096 * 2, flops=2 * 4096.0 ** 3, dtype="float16", tuning=1080)
COPY = site("copy_kernel", 50, 100, 0.07, 2 * 100 * 2 ** 20)  # 210 MB: 0.05 ms at 4.2 TB/s
TINY = site("tiny_kernel", 60, 1000, 0.003, 4096)
RARE = site("rare_kernel", 70, 1, 0.002, 4096)


@pytest.fixture
def measured():
    return script.assemble(FACTS, [TINY, COPY, RARE, GEMM], H200, "events")


def test_sites_become_cases_in_the_order_of_the_time_they_carry(measured):
    assert [c["kernels"] for c in measured["cases"]] == [["matmul_kernel"], ["copy_kernel"], ["tiny_kernel"]]
    assert [m["kernel"] for m in measured["minor_sites"]] == ["rare_kernel"]  # past 95% of the kernel time
    gemm = measured["cases"][0]
    assert gemm["site"]["seconds"] == pytest.approx(10 * 2.0e-3)
    assert gemm["site"]["share"] == pytest.approx(20.0 / (20.0 + 7.0 + 3.0 + 0.002))
    assert gemm["params"] == {"site": "train.py:40", "kernel": "matmul_kernel", "launches": 10,
                              "args": "x 1024 float16", "grid": "8x1x1"}


def test_a_dot_sites_floor_counts_its_gemm_flops_at_its_dtypes_peak(measured):
    gemm = measured["cases"][0]
    assert gemm["ceiling_flops"] == 7.9e14 and gemm["flops"] == 2 * 4096.0 ** 3
    floor = max(2 * 4096.0 ** 3 / 7.9e14, 3 * 4096 * 4096 * 2 / 4.2e12)
    assert gemm["floor_s"] == pytest.approx(floor) and gemm["efficiency"] == pytest.approx(floor / 2.0e-3)
    assert gemm["region"] == "compute" and "a dot" in gemm["flops_source"]


def test_the_classes_rest_on_one_launchs_replayed_time(measured):
    gemm, copy, tiny = measured["cases"]
    assert copy["class"] == "memory-bound" and copy["efficiency"] == pytest.approx((2 * 100 * 2 ** 20 / 4.2e12) / 7e-5)
    assert tiny["class"] == "launch-bound" and tiny["launches"] == 1  # 3 us a launch, below a launch's host cost
    assert gemm["class"] != "launch-bound"  # 1080 autotuning launches are not the script's
    assert gemm["steady_state"] == {"launches_in_script": 10, "warmup_replays": 3, "excluded_launches": {"autotuning": 1080}}
    assert measured["steady_state"]["autotuning_launches_excluded"] == 1080


def test_a_site_faster_than_its_arguments_floor_has_an_unknown_gap():
    paged = site("paged_attention", 80, 5, 0.01, 10 * 2 ** 30)  # 10 GiB spanned, read in 10 us: it reads a part
    (case,) = script.assemble(FACTS, [paged], H200, "events")["cases"]
    assert case["efficiency"] is None and "reads only part" in case["floor_note"]
    assert gap.assess({"cases": [case]}, [])["why"].startswith("the gap is unknown")


def test_a_gather_faster_than_its_arguments_floor_is_placed_from_the_dram_traffic_ncu_measured():
    """Liger's embedding on the H100: the table spans 1 GiB, a lookup reads the rows it is asked for."""
    gather = site("embedding_kernel", 80, 1, 0.1, 2 ** 30)
    measured = script.assemble(FACTS, [gather], H200, "events")
    launch = {**ncu.counters(ROWS[1]), "time_ns": 90_000.0}
    launch["memory"] = {**launch.get("memory", {}), "dram_read_bytes": 200 * 2 ** 20, "dram_write_bytes": 100 * 2 ** 20}
    script.attach_counters(measured, {"available": True, "why": "1 launch profiled", "errors": {},
                                      "cases": {(0, f"site:{gather['key']}"): [launch]}})
    (case,) = measured["cases"]
    floor = 300 * 2 ** 20 / 4.2e12
    assert case["bytes"] == 300 * 2 ** 20 and case["spanned_bytes"] == 2 ** 30 and "floor_note" not in case
    assert case["efficiency"] == pytest.approx(floor / 1e-4)
    assert "DRAM traffic Nsight Compute measured" in case["bytes_source"]
    assert not gap.assess(measured, [])["why"].startswith("the gap is unknown")



def _with_dram_traffic(site_, read_mib, written_mib):
    measured = script.assemble(FACTS, [site_], H200, "events")
    launch = {**ncu.counters(ROWS[1]), "time_ns": 60_000.0}
    launch["memory"] = {**launch.get("memory", {}), "dram_read_bytes": read_mib * 2 ** 20,
                        "dram_write_bytes": written_mib * 2 ** 20}
    script.attach_counters(measured, {"available": True, "why": "1 launch profiled", "errors": {},
                                      "cases": {(0, f"site:{site_['key']}"): [launch]}})
    return measured["cases"][0]


def test_a_site_that_moved_far_less_than_its_arguments_span_is_placed_from_its_traffic_short_of_the_floor():
    """vLLM's reshape_and_cache on the H100: a 128 MiB cache, half its slots written: 104% of the span's floor."""
    spanned = 192 * 2 ** 20
    cache_write = site("reshape_and_cache_kernel_flash", 80, 1, spanned / 4.2e12 / 1.04 * 1e3, spanned)
    case = _with_dram_traffic(cache_write, 64, 48)
    assert case["bytes"] == 112 * 2 ** 20 and case["spanned_bytes"] == spanned
    assert case["efficiency"] == pytest.approx(1.04 * 112 / 192)


def test_a_site_whose_traffic_falls_short_of_its_span_by_what_the_l2_holds_keeps_the_span_s_floor():
    """Written lines still in the L2 when the kernel ends never reach DRAM while it runs."""
    spanned = 192 * 2 ** 20
    copy = site("copy_kernel", 80, 1, spanned / 4.2e12 / 1.02 * 1e3, spanned)
    case = _with_dram_traffic(copy, 96, 56)
    assert case["bytes"] == spanned and "spanned_bytes" not in case and case["efficiency"] == pytest.approx(1.02)


def test_a_site_whose_replay_failed_is_a_case_that_says_why():
    broken = site("broken_kernel", 90, 3, 1.0, 4096, timed=False)
    measured = script.assemble(FACTS, [COPY, broken], H200, "events")
    assert measured["cases"][1]["why"] == "not timed: replay failed: RuntimeError: boom"
    assert "class" not in measured["cases"][1]


def test_the_policy_weighs_a_scripts_sites_like_a_pairs_cases(measured):
    verdict = gap.assess(measured, [])
    assert not verdict["explained"] and [v["status"] for v in verdict["cases"]] == ["unexplained"] * 3
    findings = [{"pattern": "nv.launch-bound", "kernel": "tiny_kernel", "confidence": 0.8},
                {"pattern": "nv.scalar-access", "kernel": "copy_kernel", "confidence": 0.8},
                {"pattern": "nv.no-tensor-core", "kernel": "matmul_kernel", "confidence": 0.9}]
    gemm_class = measured["cases"][0]["class"]
    assert gemm_class in ("compute-bound", "latency-bound")
    assert gap.assess(measured, findings)["explained"]
    # a cause tied to another kernel explains nothing here
    wrong_kernel = [dict(f, kernel="other_kernel") for f in findings]
    assert not gap.assess(measured, wrong_kernel)["explained"]


def test_host_clock_numbers_never_decide_the_gap(measured):
    host = script.assemble(FACTS, [COPY], H200, "host")
    assert host["clock"] == "host" and "not a device's" in host["note"]
    assert gap.assess(host, [{"pattern": "nv.scalar-access", "confidence": 0.9}]) == {
        "explained": False, "cases": [],
        "why": "the gap is unknown: rung 2 timed on the host clock under the interpreter, and those times are not a device's"}


def test_nsight_compute_profiles_only_the_heaviest_sites_bounded(measured, monkeypatch):
    calls = []

    def profile_jobs(jobs, kernels, timeout, launch_count=None):
        calls.append((jobs, kernels, timeout, launch_count))
        return {"available": True, "why": "1 launches profiled", "cases": {(0, f"site:{GEMM['key']}"): [ncu.counters(ROWS[1])]},
                "errors": {(0, f"site:{COPY['key']}"): "the site did not launch this time"}}

    monkeypatch.setattr(ncu, "profile_jobs", profile_jobs)
    counters = script.profile_sites("/w/train.py", None, measured["cases"])
    (jobs, kernels, timeout, launch_count), = calls
    chosen = [choice["key"] for choice in jobs[0]["profile"]["sites"]]
    assert chosen == [GEMM["key"], COPY["key"]]  # 67%, then 90% >= NCU_SHARE: the tiny site is left out
    assert kernels == ["copy_kernel", "matmul_kernel"] and launch_count == 2 and timeout == script.NCU_TIMEOUT_S
    assert jobs[0]["profile"]["sites"][0]["variant"] == "matmul_kernel-v0" and "time" not in jobs[0]
    script.attach_counters(measured, counters)
    gemm = measured["cases"][0]
    assert gemm["util_source"] == "ncu" and gemm["class"] == "latency-bound" and gemm["ncu"]["launches"]
    assert gemm["occupancy"]["achieved"] == pytest.approx(0.119)
    assert measured["ncu"]["available"] and measured["ncu"]["why"].startswith("2 launch sites carrying 90%")
    assert "the site did not launch this time" in measured["ncu"]["why"]
    assert measured["cases"][1]["util_source"] == "events"  # not profiled: its class stays the events'


def test_ncu_is_told_to_stop_after_the_launches_it_was_given():
    cmd = ncu.command("ncu", ["python3", "x.py"], ["matmul_kernel"], launch_count=3)
    assert cmd[cmd.index("--launch-count") + 1] == "3" and "--kernel-name" in cmd


@pytest.fixture(scope="module")
def interpreted():
    """The two-site script profiled under the interpreter (one driver process)."""
    return script.profile(str(SCRIPTS / "two_sites.py"), "interpret")


def test_under_the_interpreter_every_site_is_replayed_and_marked_host_timed(interpreted):
    assert interpreted["clock"] == "host" and interpreted["backend"] == "interpret"
    assert {c["kernels"][0] for c in interpreted["cases"]} == {"tuned_add_kernel", "scale_kernel"}
    tuned = next(c for c in interpreted["cases"] if c["kernels"] == ["tuned_add_kernel"])
    assert tuned["site"]["launches"] == 3 and tuned["steady_state"]["excluded_launches"]["autotuning"] == 3
    assert tuned["clock"] == "host" and tuned["util_source"] == "host clock" and tuned["time_s"] > 0
    assert interpreted["steady_state"]["autotuning_launches_excluded"] == 3
    assert interpreted["ncu"] == {"available": False, "why": "no device: Nsight Compute needs a GPU"}


def test_a_script_with_no_kernel_is_an_error_not_an_empty_profile(capfd):
    with pytest.raises(script.ScriptError, match="no_kernel.py launched no Triton kernel"):
        script.profile(str(SCRIPTS / "no_kernel.py"), "interpret")
    assert "3.0" not in capfd.readouterr().out  # what the script prints stays in its own process


def test_a_failing_script_says_why_it_launched_nothing(tmp_path):
    failing = tmp_path / "failing.py"
    failing.write_text("raise SystemExit(3)\n")
    with pytest.raises(script.ScriptError, match=r"launched no Triton kernel \(it failed: .*status 3"):
        script.profile(str(failing), "interpret")


def test_the_climb_runs_rung_two_on_a_script_and_keeps_the_gap_unknown_on_the_host(interpreted, monkeypatch):
    monkeypatch.setattr(script, "profile", lambda *args, **kwargs: interpreted)
    subject = Subject(str(SCRIPTS / "two_sites.py"), None, script=True, backend="interpret",
                      device="CPU (Triton interpreter)")
    state = ladder.climb(subject, selected={1, 2})
    rung2 = next(r for r in state["rungs"] if r["rung"] == 2)
    assert rung2["status"] == "ok" and state["profile"]["clock"] == "host"
    assert state["gap"]["why"].startswith("the gap is unknown: rung 2 timed on the host clock")


def test_a_script_whose_only_launch_fails_fails_rung_two_with_its_error():
    """Its launch site is captured before the launch fails; with nothing timed, rung 2 must not
    read as a profile of one empty case (seen on the H200 with a kernel given host tensors)."""
    with pytest.raises(script.ScriptError, match=r"failing_launch.py: no launch of its 1 site\(s\) could be timed: "
                                                 r"the script failed \(.*power of 2"):
        script.profile(str(SCRIPTS / "failing_launch.py"), "interpret")


def driven_under_a_stand_in_ncu(monkeypatch, answer):
    """`ncu.profile_jobs` replaced by the real driver on the job (under the interpreter, so no GPU is
    needed), its log handed to `answer`, which plays what ncu returned; the two-run way refused."""
    real_driver, calls = script.run_driver, []

    def profile_jobs(jobs, kernels, timeout, launch_count=None):
        calls.append((jobs, kernels, launch_count))
        entries = real_driver([{**jobs[0], "backend": "interpret", "time": script.HOST_TIMING}], 120, "interpret")
        return answer(entries)

    def second_run(*args, **kwargs):
        raise AssertionError("the script was run a second time")

    monkeypatch.setattr(ncu, "find_ncu", lambda: "/opt/ncu")
    monkeypatch.setattr(ncu, "profile_jobs", profile_jobs)
    monkeypatch.setattr(script, "run_driver", second_run)
    monkeypatch.setattr(script.nvidia, "ceilings_for", lambda device, cached: H200)
    return calls


def profiled_rows(entries):
    return {"available": True, "why": "2 launches profiled", "errors": {}, "started": [0], "log": entries,
            "cases": {(0, e["case"]): [ncu.counters(ROWS[1])] for e in entries if str(e["case"]).startswith("site:")}}


def test_with_ncu_the_script_runs_once_timed_then_its_heaviest_sites_profiled(monkeypatch):
    calls = driven_under_a_stand_in_ncu(monkeypatch, profiled_rows)
    measured = script.profile(str(SCRIPTS / "two_sites.py"), "cuda")
    (jobs, kernels, launch_count), = calls
    assert kernels is None and launch_count == script.NCU_SITES * script.NCU_LAUNCHES
    assert jobs[0]["time"] and jobs[0]["profile"]["choose"] == {"sites": script.NCU_SITES, "share": script.NCU_SHARE}
    profiled = [case for case in measured["cases"] if case.get("ncu")]
    assert profiled and all(case["util_source"] == "ncu" for case in profiled)
    assert measured["ncu"]["available"]
    assert measured["ncu"]["why"].startswith(f"{len(profiled)} launch sites carrying")
    assert "in the run that timed them" in measured["ncu"]["why"]


def test_the_driver_profiles_the_sites_it_chose_from_its_own_timings():
    job = {"script": str(SCRIPTS / "two_sites.py"), "argv": [], "backend": "interpret", "time": script.HOST_TIMING,
           "profile": {"choose": {"sites": 1, "share": 0.5}, "launches": 2}}
    entries = script.run_driver([job], 120, "interpret")
    sites = [e["site"] for e in entries if e["case"] == "site"]
    (choice,) = [e for e in entries if e["case"] == "profile-choice"]
    heaviest = max(sites, key=lambda site: script.site_seconds(site)[0] or 0.0)
    assert [c["key"] for c in choice["sites"]] == [heaviest["key"]] and 0 < choice["share"] <= 1
    (profiled,) = [e for e in entries if str(e["case"]).startswith("site:")]  # the interpreter names no launch
    assert profiled["case"] == f"site:{heaviest['key']}" and "error" not in profiled


def test_a_run_that_hangs_in_the_profiler_keeps_its_timing_and_says_ncu_did_not_finish(monkeypatch):
    def hung(entries):
        return {"available": False, "why": "ncu did not finish within 420 s", "timed_out": True, "cases": {},
                "errors": {}, "started": [0], "log": entries}

    driven_under_a_stand_in_ncu(monkeypatch, hung)
    measured = script.profile(str(SCRIPTS / "two_sites.py"), "cuda")
    assert all(case.get("time_s") for case in measured["cases"])
    assert measured["ncu"] == {"available": False, "why": "ncu did not finish within 420 s, after the timing"}


def test_a_driver_that_fails_under_ncu_is_timed_and_profiled_in_two_runs(monkeypatch, interpreted):
    real_driver = script.run_driver
    driven_under_a_stand_in_ncu(monkeypatch, lambda entries: {"available": False, "why": "ncu: the driver crashed",
                                                               "cases": {}, "errors": {}, "started": [0], "log": []})
    runs = []

    def second_run(jobs, timeout_s, backend):
        runs.append(jobs[0])
        return real_driver([{**jobs[0], "backend": "interpret"}], 120, "interpret")

    monkeypatch.setattr(script, "run_driver", second_run)
    monkeypatch.setattr(script, "profile_sites", lambda path, argv, cases: {"available": True, "why": "profiled apart",
                                                                             "cases": {}, "errors": {}})
    measured = script.profile(str(SCRIPTS / "two_sites.py"), "cuda")
    assert len(runs) == 1 and "profile" not in runs[0]
    assert measured["ncu"] == {"available": True, "why": "profiled apart"}
