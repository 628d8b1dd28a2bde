"""Diagnosis reports built by hand for the report tests: the shape `ladder diagnose --json` prints,
modelled on a row softmax diagnosed on the H200 (four unvectorized accesses on four lines, two
of five cases misaligned, rung-3 facts for two specializations, rung-4 citations)."""
from __future__ import annotations

import copy

FILE = "/home/user/kernels/softmax/solution.py"
SIZES = [(4096, 32768), (1024, 393216), (16384, 4097), (2048, 65535), (16384, 8192)]
MISALIGNED = ["batch_size=16384, dim=4097", "batch_size=2048, dim=65535"]
LINES = {18: "x = tl.load(x_row + start + cols, mask=start + cols < n_cols, other=float('-inf'))",
         24: "x = tl.load(x_row + start + cols, mask=start + cols < n_cols, other=float('-inf'))",
         30: "x = tl.load(x_row + start + cols, mask=mask, other=float('-inf'))",
         31: "tl.store(y_row + start + cols, tl.exp(x - m) / d, mask=mask)"}
NARROW = "softmax_kernel[n_cols:i32,stride_x:i32,stride_y:i32]"
WIDE = "softmax_kernel[n_cols:i32%16,stride_x:i32%16,stride_y:i32%16]"


def case(number: int, batch: int, dim: int, seconds: float, efficiency: float, klass: str) -> dict:
    flops, bytes_ = 5.0 * batch * dim, 8.0 * batch * dim
    return {"case": number, "params": {"batch_size": batch, "dim": dim}, "time_s": seconds,
            "ref_time_s": seconds * 0.9, "flops": flops, "bytes": bytes_, "efficiency": efficiency,
            "class": klass, "why": f"{klass} at {efficiency:.0%}", "ceiling_flops": 5.1e13,
            "achieved_gbps": bytes_ / seconds / 1e9, "achieved_tflops": flops / seconds / 1e12,
            "occupancy": {"theoretical": 1.0, "achieved": None}}


def profile(cases: list[dict]) -> dict:
    return {"backend": "cuda", "device": "NVIDIA H200", "ncu": {"available": False, "why": "--no-ncu"},
            "ceilings": {"bandwidth": 4.26e12, "flops": {"fp32": 5.1e13}, "source": "measured"}, "cases": cases}


def softmax_cases() -> list[dict]:
    """Five cases at one intensity and nearly one rate: their points crowd one spot."""
    times = [5.24e-4, 1.545e-3, 2.006e-4, 9.85e-4, 5.125e-4]
    efficiencies = [0.48, 0.49, 0.63, 0.26, 0.49]
    return [case(i, b, d, t, e, "memory-bound" if e > 0.6 else "latency-bound")
            for i, ((b, d), t, e) in enumerate(zip(SIZES, times, efficiencies))]


def spread_cases() -> list[dict]:
    """Five cases of very different intensity and rate: room for a label beside each point."""
    rows = []
    for i, (intensity, rate) in enumerate([(0.25, 4e11), (2.0, 3e12), (16.0, 2e13), (120.0, 4e13), (900.0, 4.5e13)]):
        row = case(i, 1024 * (i + 1), 4096, 1e-3, 0.5, "memory-bound")
        row["bytes"] = 1e9
        row["flops"] = intensity * 1e9
        row["time_s"] = row["flops"] / rate
        rows.append(row)
    return rows


def near_roof_cases() -> list[dict]:
    """Five square fp16 GEMMs as measured on an H200 (N=3000 ... 8192): three sit just under the
    compute roof, where a label placed by boxes alone lands on the roof line."""
    rows = []
    for i, (n, time_s) in enumerate([(3000, 7.345e-4), (4096, 2.334e-4), (4999, 2.929e-3), (6144, 8.013e-4),
                                     (8192, 2.061e-3)]):
        row = case(i, n, n, time_s, 0.5, "compute-bound")
        row.update(params={"N": n}, flops=2.0 * n ** 3, bytes=6.0 * n * n)
        rows.append(row)
    return rows


def fact(kernel: str, line: int, bits: int, op: str = "load") -> dict:
    instruction = "ld.global" if op == "load" else "st.global"
    width = f".v{bits // 32}" if bits > 32 else ""
    return {"kernel": kernel, "kind": "global_access", "file": FILE, "line": line, "stage": "ptx",
            "value": {"op": op, "vector_bits": bits, "elements": bits // 32, "dtype": "f32", "masked": True,
                      "via": instruction},
            "excerpt": f"%x = tt.load %p loc(#loc{line})\n@%p2 {instruction}{width}.b32 {{ %r14 }}, [ %rd5 + 0 ];"}


def scalar_access(line: int) -> dict:
    op = "store" if line == 31 else "load"
    return {"pattern": "nv.scalar-access", "rung": 1, "title": "global accesses not vectorized", "file": FILE,
            "line": line, "kernel": "softmax_kernel", "confidence": 0.65,
            "evidence": [{"type": "source", "file": FILE, "line": line, "text": LINES[line],
                          "detail": f"{op} of x_ptr [1024] moves 32 bits per thread per instruction; the real "
                                    "addresses are not 16-byte aligned for two cases", "cases": list(MISALIGNED)}],
            "fix": "Make 16-byte alignment and contiguity provable or true (pad rows to a multiple of 16 bytes)."}


def rung(number: int, title: str, ran: bool = True, why: str = "climbed", status: str | None = None) -> dict:
    return {"rung": number, "name": title, "title": title, "ran": ran, "why": why,
            "status": status or ("ok" if ran else "skipped"), "seconds": 0.2 if ran else 0.0, "error": None}


def launch(kernel: str, case_number: int, programs: int) -> dict:
    return {"kernel": kernel, "kind": "launch", "file": FILE, "line": 10, "stage": "meta",
            "value": {"grid": [programs, 1, 1], "programs": programs, "count": 1, "case": case_number},
            "excerpt": f"softmax_kernel[({programs}, 1, 1)] x1"}


def softmax_report() -> dict:
    narrow = [fact(NARROW, line, 32, "store" if line == 31 else "load") for line in LINES]
    wide = [fact(WIDE, line, 128, "store" if line == 31 else "load") for line in LINES]
    launches = [launch(NARROW if (b, d) in (SIZES[2], SIZES[3]) else WIDE, i, b) for i, (b, d) in enumerate(SIZES)]
    occupancy = {"kernel": NARROW, "kind": "occupancy", "file": FILE, "line": 10, "stage": "meta", "excerpt": "",
                 "value": {"programs_per_sm": 16, "warps_per_sm": 64, "occupancy": 1.0, "limiter": "registers",
                           "limits": {"registers": 16, "shared_memory": 107, "warps": 16, "blocks": 32},
                           "device": "NVIDIA H200 " + "with a very long description " * 12}}
    about_18 = {"kind": "fact", "fact_kind": "global_access", "kernel": NARROW, "file": FILE, "line": 18}
    citations = [
        {"id": "C1", "path": "lib/Dialect/TritonGPU/Transforms/Coalesce.cpp", "start": 49, "end": 86,
         "pass": "tritongpu-coalesce", "score": 0.06, "about": about_18, "statement": "the width follows divisibility",
         "excerpt": "void setCoalescedEncoding(...) {"},
        {"id": "C2", "path": "lib/Analysis/AxisInfo.cpp", "start": 1223, "end": 1254, "pass": None, "score": 0.4,
         "about": {"kind": "finding", "pattern": "nv.scalar-access", "kernel": "softmax_kernel", "file": FILE,
                   "line": 18}, "statement": "contiguity comes from AxisInfo", "excerpt": "unsigned getContiguity("},
    ]
    redundant = {"pattern": "nv.redundant-global-traffic", "rung": 1, "title": "the same data read more than once",
                 "file": FILE, "line": 24, "kernel": "softmax_kernel", "confidence": 0.8,
                 "evidence": [{"type": "source", "file": FILE, "line": 24, "text": LINES[24],
                               "detail": "`x_ptr` is read by 3 passes (lines 18, 24, 30)",
                               "cases": [f"batch_size={b}, dim={d}" for b, d in SIZES]}],
                 "fix": "Load the row once, or use an online formulation."}
    compiler_behind = {"pattern": None, "rung": 4, "file": FILE, "line": 18, "kernel": NARROW, "confidence": 0.5,
                       "title": "compiler source behind: the load at solution.py:18 moves 32 bits per instruction",
                       "evidence": [{"type": "fact", **f} for f in narrow]
                       + [{"type": "chunk", "path": "lib/Dialect/TritonGPU/Transforms/Coalesce.cpp", "start": 49,
                           "end": 86, "pass": "tritongpu-coalesce", "score": 0.06}], "fix": None}
    return {
        "schema": "ladder.diagnose/1",
        "subject": {"solution": FILE, "problem": FILE.replace("solution", "problem"), "script": False,
                    "backend": "cuda", "target": "sm90", "device": "NVIDIA H200"},
        "rungs": [rung(1, "pattern triage"), rung(2, "profiling"), rung(3, "IR attribution"), rung(4, "compiler source")],
        "findings": [redundant] + [scalar_access(line) for line in LINES] + [compiler_behind],
        "profile": profile(softmax_cases()), "facts": launches + wide + narrow + [occupancy], "citations": citations,
        "gap": {"explained": False, "why": "4 of 5 cases unexplained"}, "reached": 4, "warnings": [],
    }


def without_device(report: dict) -> dict:
    """The same climb on a machine with no GPU: rung 2 skipped with the ladder's reason."""
    cpu = copy.deepcopy(report)
    cpu["subject"].update(backend="aot", device=None)
    cpu["profile"] = None
    cpu["rungs"][1] = rung(2, "profiling", ran=False, why="no device on this machine (backend aot): profiling needs"
                           " one; the gap to the roofline stays unmeasured")
    return cpu
