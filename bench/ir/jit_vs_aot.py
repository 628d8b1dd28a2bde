"""Do the facts read from the aot backend (CPU, no device) match the facts of what the JIT built on the GPU?

For each suite kernel, captures every kernel its forward launches on every case twice in one
process: through the JIT on this GPU (runner.capture, triton's hooks) and through the aot backend
(runner.backends.aot, CPU tensors, compiled for sm_90). Then compares, kernel by kernel (matched
by label, i.e. by specialization), the compile hash, registers and spills (the driver's numbers on
the JIT side: registers and local memory per thread), the vector width of every global access, how each dot lowers and whether each loop
was pipelined. Prints a table of the comparisons and writes everything under $OUT (default ./out):

    PYTHONPATH=. python3 bench/ir/jit_vs_aot.py [--only 19_relu ...]

Needs a CUDA GPU (sm_90 for the comparison to be meaningful) and only torch, triton and pyyaml.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

SUITE = [
    "level1/19_relu",
    "level1/23_softmax",
    "level1/01_square_matmul",
    "level1/40_layer_norm",
    "level2/76_gemm_add_relu",
]


def comparable(facts: list, kernels: list) -> dict[tuple, object]:
    """The quantities that must agree, keyed so that the same quantity lines up on both sides."""
    rows: dict[tuple, object] = {}
    for kernel in kernels:
        used = kernel.resources
        rows[(kernel.label, "hash", None)] = kernel.metadata.get("hash")
        rows[(kernel.label, "registers", None)] = used.get("driver_registers", used.get("registers"))
        rows[(kernel.label, "spill bytes (ptxas)", None)] = used.get("spill_stores_bytes", 0) + \
            used.get("spill_loads_bytes", 0)
        rows[(kernel.label, "local words", None)] = local_words(kernel)
        rows[(kernel.label, "shared_bytes", None)] = used.get("shared_bytes")
        rows[(kernel.label, "cases", None)] = kernel.cases
    for fact in facts:
        value = fact.value
        if fact.kind == "global_access":
            rows[(fact.kernel, f"{value['op']} bits via {value['via']}", fact.line)] = value["vector_bits"]
        elif fact.kind == "dot_lowering":
            rows[(fact.kernel, "dot", fact.line)] = f"{value['kind']} v{value['mma_version']}"
        elif fact.kind == "pipelining":
            rows[(fact.kernel, "pipelined", fact.line)] = (value["pipelined"], value["buffers"])
        elif fact.kind == "launch":
            rows[(fact.kernel, f"grid case {value['case']}", None)] = value["grid"]
    return rows


def local_words(kernel) -> int:
    """Per-thread local memory in 32-bit words: the driver's `n_spills` on the GPU, the cubin's on the CPU."""
    used = kernel.resources
    if "driver_spills" in used:
        return used["driver_spills"]
    return (used.get("local_bytes") or used.get("stack_bytes") or 0) // 4


def compare_one(name: str, out: Path) -> tuple[list[dict], dict]:
    from ladder.diagnoser.ir import extract_facts
    from ladder.runner.backends.aot import capture as aot_capture
    from ladder.runner.capture import capture as jit_capture
    from ladder.runner.capture import save

    solution = REPO / "kernels" / name / "solution.py"
    problem = REPO / "kernels" / name / "problem.py"
    started = time.time()
    jit_kernels = jit_capture(solution, problem)
    jit_seconds = time.time() - started
    started = time.time()
    aot_kernels = aot_capture(solution, problem)
    aot_seconds = time.time() - started
    stem = name.replace("/", "_")
    save(jit_kernels, out / f"{stem}.jit.json")
    save(aot_kernels, out / f"{stem}.aot.json")
    jit_facts, aot_facts = extract_facts(jit_kernels), extract_facts(aot_kernels)
    (out / f"{stem}.facts.json").write_text(json.dumps({"jit": [f.to_dict() for f in jit_facts],
                                                        "aot": [f.to_dict() for f in aot_facts]}, indent=1))
    jit_rows, aot_rows = comparable(jit_facts, jit_kernels), comparable(aot_facts, aot_kernels)
    rows = []
    for key in sorted(set(jit_rows) | set(aot_rows), key=lambda k: (k[0], k[1], k[2] or 0)):
        jit_value, aot_value = jit_rows.get(key, "-"), aot_rows.get(key, "-")
        rows.append({"suite": name, "kernel": key[0], "quantity": key[1], "line": key[2],
                     "jit": jit_value, "aot": aot_value, "same": jit_value == aot_value})
    return rows, {"suite": name, "jit_kernels": len(jit_kernels), "aot_kernels": len(aot_kernels),
                  "jit_seconds": round(jit_seconds, 1), "aot_seconds": round(aot_seconds, 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="suite entries (e.g. 19_relu) instead of the default five")
    options = parser.parse_args()

    import torch

    if not torch.cuda.is_available():
        print("needs a CUDA GPU: the JIT side runs the kernels", file=sys.stderr)
        return 2
    out = Path(os.environ.get("OUT", "out")) / "ir_jit_vs_aot"
    out.mkdir(parents=True, exist_ok=True)
    names = [entry for entry in SUITE if not options.only or any(entry.endswith(only) for only in options.only)]
    all_rows, runs = [], []
    for name in names:
        try:
            rows, run = compare_one(name, out)
        except Exception as error:  # one suite entry failing must not hide the others' results
            runs.append({"suite": name, "error": f"{type(error).__name__}: {error}"})
            (out / f"{name.replace('/', '_')}.error.txt").write_text(traceback.format_exc())
            continue
        all_rows.extend(rows)
        runs.append(run)
    device = torch.cuda.get_device_name()
    (out / "comparison.json").write_text(json.dumps({"device": device, "runs": runs, "rows": all_rows},
                                                    indent=1, default=str))

    differing = [row for row in all_rows if not row["same"]]
    print(f"\nJIT ({device}) vs aot (CPU, sm_90): {len(all_rows)} quantities compared, {len(differing)} differ")
    print(f"{'suite':<26} {'kernel':<34} {'quantity':<24} {'line':>5}  {'jit':<22} {'aot':<22} same")
    for row in all_rows:
        if row["quantity"] == "hash":
            continue
        print(f"{row['suite']:<26} {row['kernel'][:34]:<34} {row['quantity']:<24} {row['line'] or '':>5}  "
              f"{str(row['jit'])[:22]:<22} {str(row['aot'])[:22]:<22} {'yes' if row['same'] else 'NO'}")
    hashes = [row for row in all_rows if row["quantity"] == "hash"]
    print(f"\ncompile hashes equal for {sum(row['same'] for row in hashes)} of {len(hashes)} kernels")
    for run in runs:
        print("  " + ", ".join(f"{key}={value}" for key, value in run.items()))
    print(f"details: {out}")
    return 0 if not differing and all("error" not in run for run in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
