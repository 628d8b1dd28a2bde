"""What each part of rung 4's queries adds: IR facts of known kinds asked with parts left out.

    python bench/index/rung4_queries.py --index-dir DIR [--out bench/results/index-rung4-queries.json]

Rung 4 builds each query from parts (diagnoser.compiler.questions.QUERY_PARTS: the topic in words,
the IR op names of the fact's excerpt, the names of the passes that decide it). For one fact of
every kind rung 4 asks about, with the triton-ascend files that explain it, this asks the index
(built over that tree) as rung 4 does, with every combination of parts that keeps the topic, and
scores whether an explaining file is among the first 5 results (`retrieved`, and the reciprocal
rank of the first one), among the citations rung 4 keeps (`cited`) and the first of them
(`cited_first`).
"""
from __future__ import annotations

import argparse
import importlib
import itertools
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

COMMAND = " ".join(["python", "bench/index/rung4_queries.py", *sys.argv[1:]])
NV = "third_party/nvidia/lib/TritonNVIDIAGPUToLLVM"
PIPELINER = "lib/Dialect/TritonGPU/Transforms/Pipeliner"
ASCEND = "third_party/ascend/lib"


def fact(kind: str, value: dict, excerpt: str = "") -> dict:
    return {"kernel": "k", "kind": kind, "value": value, "file": "solution.py", "line": 12, "stage": "ttgir",
            "excerpt": excerpt}


# (target, fact, files that explain it)
CASES = [
    ("sm90", fact("global_access", {"op": "load", "vector_bits": 32, "via": "ld.global", "dtype": "fp32"},
                  "%5 = tt.load %4, %m : tensor<1024x!tt.ptr<f32>, #blocked>"),
     ["lib/Dialect/TritonGPU/Transforms/Coalesce.cpp", "lib/Analysis/AxisInfo.cpp", f"{NV}/LoadStoreOpToLLVM.cpp"]),
    ("sm90", fact("spill", {"spill_stores_bytes": 96, "spill_loads_bytes": 96}),
     ["third_party/nvidia/backend/compiler.py"]),
    ("sm90", fact("convert_layout", {"src": "blocked", "dst": "mma", "in_loop": True},
                  "%9 = ttg.convert_layout %8 : tensor<64x64xf32, #blocked> -> tensor<64x64xf32, #mma>"),
     ["lib/Dialect/TritonGPU/Transforms/RemoveLayoutConversions.cpp"]),
    ("sm90", fact("dot_lowering", {"kind": "fma", "operand_dtype": "fp32", "input_precision": "ieee"},
                  "%7 = tt.dot %a, %b, %acc"),
     ["lib/Dialect/TritonGPU/Transforms/AccelerateMatmul.cpp"]),
    ("sm90", fact("dot_lowering", {"kind": "mma_sync", "mma_version": 2, "operand_dtype": "fp16"},
                  "%7 = tt.dot %a, %b, %acc"),
     ["lib/Dialect/TritonGPU/Transforms/AccelerateMatmul.cpp"]),
    ("sm90", fact("pipelining", {"requested_stages": 3, "pipelined": False, "async_copies": 0, "tma": False},
                  "scf.for %k = %c0 to %K step %c64"),
     [f"{PIPELINER}/SoftwarePipeliner.cpp", f"{PIPELINER}/AssignLatencies.cpp", f"{PIPELINER}/ScheduleLoops.cpp",
      f"{PIPELINER}/LowerLoops.cpp"]),
    ("sm90", fact("barrier_in_loop", {"count": 2}, "gpu.barrier"), ["lib/Analysis/Membar.cpp"]),
    ("sm90", fact("occupancy", {"occupancy": 0.125, "warps_per_sm": 8, "limiter": "shared memory"}),
     ["lib/Analysis/Allocation.cpp", "lib/Conversion/TritonGPUToLLVM/AllocateSharedMemory.cpp"]),
    ("sm90", fact("occupancy", {"occupancy": 0.125, "warps_per_sm": 8, "limiter": "registers"}),
     ["third_party/nvidia/backend/compiler.py"]),
    ("sm90", fact("reduction_in_loop", {"cross_warp": True, "op": "sum"}, "%r = \"tt.reduce\"(%x) <{axis = 1 : i32}>"),
     ["lib/Conversion/TritonGPUToLLVM/ReduceOpToLLVM.cpp", "lib/Dialect/TritonGPU/Transforms/OptimizeThreadLocality.cpp"]),
    ("sm90", fact("atomic", {"op": "add", "sem": "acq_rel", "scope": "gpu", "in_loop": True},
                  "%o = tt.atomic_rmw fadd, acq_rel, gpu, %p, %v"),
     [f"{NV}/LoadStoreOpToLLVM.cpp"]),
    ("ascend", fact("discrete_access", {}, "%v = tt.load %ptrs : tensor<128x!tt.ptr<f32>>"),
     [f"{ASCEND}/TritonToUnstructure/UnstructureConversionPass.cpp", f"{ASCEND}/TritonToUnstructure/OffsetAnalysis.cpp"]),
    ("ascend", fact("masked_load_fill", {}, "scf.if %c { linalg.fill ins(%cst) outs(%alloc) }"),
     [f"{ASCEND}/TritonToLinalg/LoadStoreConverter.cpp", f"{ASCEND}/TritonToLinalg/MaskAnalysis.cpp",
      f"{ASCEND}/TritonToStructured/MaskAnalysis.cpp"]),
    ("ascend", fact("ub_usage", {"bytes": 180000, "limit": 196608}),
     ["docs/en/programming_guide.md", "docs/zh/programming_guide.md", "docs/en/migration_guide/migrate_from_gpu.md"]),
    ("ascend", fact("int64_arith", {}, "%s = arith.addi %a, %b : tensor<128xi64>"),
     ["docs/en/debug_guide/profiling.md", "docs/zh/debug_guide/profiling.md",
      "docs/en/migration_guide/performance_guidelines.md"]),
]


def run(index_dir: str, parts: tuple[str, ...]) -> dict:
    from ladder import indexer
    from ladder.diagnoser.compiler import BACKEND_OF_TARGET, CHUNKS_PER_QUESTION, CITED_PER_QUESTION, answers
    from ladder.indexer.rerank import MIN_RELEVANCE

    questions = importlib.import_module("ladder.diagnoser.compiler.questions")
    questions.QUERY_PARTS = parts
    rows = []
    for target, the_fact, expected in CASES:
        question = questions.from_fact(the_fact, target)
        hits = indexer.search(question.query, k=CHUNKS_PER_QUESTION, index_dir=index_dir, min_score=MIN_RELEVANCE,
                              where={"backend": BACKEND_OF_TARGET[target]})
        cited = [c["path"] for c in answers.keep(hits, question)[:CITED_PER_QUESTION]]
        rank = next((i for i, h in enumerate(hits, 1) if h["path"] in expected), None)
        rows.append({"kind": the_fact["kind"], "target": target, "query": question.query,
                     "retrieved": rank is not None and rank <= 5, "reciprocal_rank": 1 / rank if rank else 0.0,
                     "cited": any(path in expected for path in cited),
                     "cited_first": bool(cited) and cited[0] in expected, "top": [h["path"] for h in hits[:5]]})
    share = {key: round(sum(r[key] for r in rows) / len(rows), 3)
             for key in ("retrieved", "reciprocal_rank", "cited", "cited_first")}
    return {"parts": list(parts), **share, "cases": rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--index-dir", required=True)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "index-rung4-queries.json")
    args = parser.parse_args()
    questions = importlib.import_module("ladder.diagnoser.compiler.questions")
    every = questions.QUERY_PARTS
    variants = [("topic", *extra) for n in range(len(every)) for extra in itertools.combinations(every[1:], n)]
    results = [run(args.index_dir, variant) for variant in variants]
    questions.QUERY_PARTS = every
    print(f"{len(CASES)} facts: share with an explaining file in the first 5 results, mean reciprocal rank of the "
          "first one, share with one among rung 4's citations and cited first")
    for result in results:
        print(f"  {' + '.join(result['parts']):<28} retrieved {result['retrieved']:.3f}  MRR {result['reciprocal_rank']:.3f}"
              f"  cited {result['cited']:.3f}  cited first {result['cited_first']:.3f}")
    args.out.write_text(json.dumps({"command": COMMAND, "index_dir": args.index_dir, "variants": results}, indent=1) + "\n")


if __name__ == "__main__":
    main()
