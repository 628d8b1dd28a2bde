"""Evaluate the index on a compiler tree: build timings, query latency and file-level recall@5.

    python bench/index/eval.py --tree /work/src/triton-ascend

1. copies the tree to a scratch folder (the original is never written) and indexes it, with the
   catalog, through the real command line: full build (--rebuild), rebuild with nothing changed,
   rebuild after one changed file;
2. asks every question of bench/index/questions.yaml through `indexer.search` in this process
   (first query = cold: loads the model and the index; the rest = warm) and scores recall@5 at
   file level, over the whole index and restricted to the tree;
3. prints a summary table and writes the details to bench/results/index-<tree>.json.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

QUESTIONS = Path(__file__).with_name("questions.yaml")
# The file edited for the one-changed-file rebuild.
CHANGED_FILE = "lib/Dialect/TritonGPU/Transforms/Coalesce.cpp"


def run_build(index_dir: Path, source: str, *extra: str) -> tuple[float, dict]:
    command = [sys.executable, "-m", "diagnoser", "index", "build", "--source", source,
               "--index-dir", str(index_dir), "--json", *extra]
    started = time.monotonic()
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True)
    seconds = time.monotonic() - started
    if done.returncode != 0:
        sys.exit(f"build failed ({' '.join(command)}):\n{done.stderr[-2000:]}")
    return seconds, json.loads(done.stdout)


def recall(expected: list, files: list[str]) -> float:
    """Fraction of expected entries found; an entry that is a list is met by any of its files."""
    groups = [e if isinstance(e, list) else [e] for e in expected]
    return sum(any(f in files for f in group) for group in groups) / len(groups)


def ask(questions: list[dict], tree: str, index_dir: Path, k: int) -> dict:
    import indexer

    started = time.monotonic()
    indexer.search("warm up: load the model and the index", k=k, index_dir=str(index_dir))
    cold = time.monotonic() - started
    latencies, rows = [], []
    for question in questions:
        started = time.monotonic()
        hits = indexer.search(question["q"], k=k, index_dir=str(index_dir))
        latencies.append(time.monotonic() - started)
        in_tree = indexer.search(question["q"], k=k, where={"tree": tree}, index_dir=str(index_dir))
        files = [h["path"] for h in hits if h["tree"] == tree]
        tree_files = [h["path"] for h in in_tree]
        rows.append({
            "id": question["id"], "q": question["q"], "expected": question["expected"],
            "recall": recall(question["expected"], files),
            "recall_in_tree": recall(question["expected"], tree_files),
            "top": [f"{h['tree']}:{h['path']}:{h['start']}-{h['end']} pass={h['pass']}" for h in hits],
        })
    return {
        "cold_first_query_s": round(cold, 3),
        "warm_query_p50_ms": round(1000 * statistics.median(latencies), 1),
        "warm_query_p95_ms": round(1000 * sorted(latencies)[int(0.95 * (len(latencies) - 1))], 1),
        "recall_at_k": round(statistics.mean(r["recall"] for r in rows), 3),
        "recall_at_k_in_tree": round(statistics.mean(r["recall_in_tree"] for r in rows), 3),
        "questions": rows,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tree", required=True, help="compiler source tree (read only)")
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--out", help="result file (default bench/results/index-<tree>.json)")
    args = parser.parse_args()

    spec = yaml.safe_load(QUESTIONS.read_text())
    tree_name = spec["tree"]
    out = Path(args.out) if args.out else REPO / "bench" / "results" / f"index-{tree_name}.json"
    with tempfile.TemporaryDirectory(prefix="ladder-eval-") as scratch:
        scratch = Path(scratch)
        copy = scratch / tree_name
        shutil.copytree(args.tree, copy, symlinks=True, ignore=shutil.ignore_patterns(".git"))
        index_dir = scratch / "index"
        source = f"{tree_name}={copy}"

        full_s, full = run_build(index_dir, source, "--rebuild")
        same_s, same = run_build(index_dir, source)
        changed = copy / CHANGED_FILE
        changed.chmod(0o644)
        changed.write_text(changed.read_text() + "\n// touched by the index benchmark\n")
        one_s, one = run_build(index_dir, source)
        queries = ask(spec["questions"], tree_name, index_dir, args.k)

    result = {
        "tree": tree_name, "source": args.tree, "k": args.k,
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
        "chunks": full["chunks"], "files": full["files"], "trees": full["trees"],
        "full_build_s": round(full_s, 1), "full_build_embedded": full["embedded_chunks"],
        "unchanged_rebuild_s": round(same_s, 1), "unchanged_up_to_date": same["up_to_date"],
        "one_file_rebuild_s": round(one_s, 1), "one_file_changed_files": one["changed_files"],
        "one_file_embedded": one["embedded_chunks"],
        **queries,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")

    print(f"{'tree':<28}{tree_name}")
    print(f"{'files / chunks':<28}{result['files']} / {result['chunks']}")
    print(f"{'full build':<28}{result['full_build_s']} s ({result['full_build_embedded']} chunks embedded)")
    print(f"{'rebuild, nothing changed':<28}{result['unchanged_rebuild_s']} s")
    print(f"{'rebuild, one file changed':<28}{result['one_file_rebuild_s']} s "
          f"({result['one_file_changed_files']} file, {result['one_file_embedded']} chunks embedded)")
    print(f"{'first query (cold)':<28}{result['cold_first_query_s']} s")
    print(f"{'warm query p50 / p95':<28}{result['warm_query_p50_ms']} / {result['warm_query_p95_ms']} ms")
    print(f"{'recall@' + str(args.k):<28}{result['recall_at_k']} (restricted to the tree: {result['recall_at_k_in_tree']})")
    for row in result["questions"]:
        if row["recall"] < 1:
            print(f"  miss {row['id']:<28} recall {row['recall']:.2f}")
    print(f"details: {out}")


if __name__ == "__main__":
    main()
