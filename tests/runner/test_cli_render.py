"""The bench table: timed columns on a device, errors against tolerances on the interpreter."""
from ladder.diagnoser.cli.bench import render

TIMED = {
    "solution": "/x/solution.py", "problem": "/x/problem.py", "backend": "cuda", "device": "NVIDIA H200",
    "timed": True, "ok": False, "rejected": None, "static": [], "ceilings": {"source": "defaults"},
    "seeds_per_case": 3, "base_seed": 11,
    "cases": [
        {"label": "N=4096", "correct": True, "time_ms": {"median": 0.1234, "p10": 0.12, "p90": 0.13},
         "reference_ms": 0.2, "speedup": 1.62, "torch_compile_ms": 0.15, "speedup_vs_compile": 1.2,
         "gbps": 3012.4, "tflops": None, "roofline_pct": 70.14, "launches": 2, "kernels": ["a", "b"],
         "flags": []},
        {"label": "N=4097", "correct": False, "reason": "seed 2: output: 3 NaN and 0 Inf", "flags": []},
    ],
}


def test_timed_table_has_time_spread_reference_speedup_and_roofline():
    text = render(TIMED)
    assert "0.1234 (0.12-0.13)" in text and "1.62x" in text and "3012" in text and "70.1%" in text
    assert "compile ms" in text and "1.20x" in text


def test_failed_case_reason_and_launches_are_listed():
    text = render(TIMED)
    assert "case N=4097: seed 2: output: 3 NaN" in text
    assert "launches per forward: 2 (a, b)" in text
    assert "ceilings: defaults" in text and "base seed 11" in text


def test_rejection_replaces_per_case_reasons():
    record = dict(TIMED, rejected={"stage": "runtime", "reason": "forward launched no Triton kernel"})
    text = render(record)
    assert "REJECTED (runtime): forward launched no Triton kernel" in text
    assert "case N=4097: seed 2" not in text


def test_untimed_table_shows_error_against_tolerance():
    record = dict(TIMED, timed=False, cases=[{"label": "N=8", "correct": True, "max_rel_err": 3.5e-8,
                                             "rtol": 1e-4, "launches": 1, "kernels": ["k"], "flags": []}])
    text = render(record)
    assert "max error" in text and "3.5e-08" in text and "0.0001" in text and "not timed" in text
