"""Evaluate the index on a compiler tree: build timings, query latency and file-level recall@5.

    python bench/index/eval.py --tree /work/src/triton-ascend

1. copies the tree and the catalog (kb/) to a scratch folder (the originals are never written)
   and indexes them through the real command line: full build (--rebuild), rebuild with nothing changed,
   rebuild after one changed file; then times whole `ladder query` processes (process start included);
2. asks every question of each question set through `ladder.indexer.search` in this process (first
   query = cold: loads the model and the index; the rest = warm) and scores recall@5 at file
   level, over the whole index and restricted to the tree. The sets are bench/index/questions.yaml
   (the development set), questions-heldout.yaml (written before the retrieval changes that were
   measured on it, to show whether they generalise) and questions-unseen.yaml (written after the
   retrieval settings were chosen, never tuned on) and questions-symptoms.yaml (symptom-phrased, in a
   `split: tune` and a `split: heldout` half); --questions picks others. Each question is asked with
   k results (recall@k) and with 10 (mean reciprocal rank of the first answering file, whether all
   expected files are in the top 10, whether the top k of the 10 equal the k, whether the 10 are in
   score order); scores are reported per split;
3. prints a summary table per set and writes the details to bench/results/: index-<tree>.json for
   questions.yaml, index-<name>.json for questions-<name>.yaml, each with the build numbers.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import resource
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

QUESTION_SETS = [Path(__file__).with_name(name) for name in
                 ("questions.yaml", "questions-heldout.yaml", "questions-unseen.yaml", "questions-symptoms.yaml")]
# How the results were made, written beside them.
COMMAND = " ".join(["python", "bench/index/eval.py", *sys.argv[1:]])
# Ranks are scored over this many results (MRR, all expected files found, stability of the first k).
DEEP = 10
# The file edited for the one-changed-file rebuild.
CHANGED_FILE = "lib/Dialect/TritonGPU/Transforms/Coalesce.cpp"


def run_build(index_dir: Path, sources: list[str], *extra: str) -> tuple[float, float, dict]:
    """(wall seconds, CPU seconds, report) of one `ladder index build` in a fresh process.

    CPU seconds are reported too because the machine may be shared: wall time then depends on
    what else runs, CPU time much less.
    """
    command = [sys.executable, "-m", "ladder.diagnoser", "index", "build",
               *[arg for source in sources for arg in ("--source", source)],
               "--index-dir", str(index_dir), "--json", *extra]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True)
    seconds = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"build failed ({' '.join(command)}):\n{done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return seconds, cpu, json.loads(done.stdout)


def _groups(expected: list) -> list[list[str]]:
    return [e if isinstance(e, list) else [e] for e in expected]


CLI_QUESTIONS = ["why are my loads not vectorized", "ttg.convert_layout inside my loop", "ub overflow on the NPU",
                 "which pass pipelines the K loop", "tl.sort on Ascend"]


def time_cli(index_dir: Path) -> dict:
    """Wall seconds of whole `ladder query` processes (interpreter start, imports, opening the index,
    the query, printing), each question once after one unmeasured run that warms the file cache."""
    command = [sys.executable, "-m", "ladder.diagnoser", "query", "--index-dir", str(index_dir), "--k", "5"]
    subprocess.run(command + ["warm up"], cwd=REPO, capture_output=True, check=True)
    seconds = []
    for question in CLI_QUESTIONS:
        started = time.monotonic()
        subprocess.run(command + [question], cwd=REPO, capture_output=True, check=True)
        seconds.append(time.monotonic() - started)
    return {"cli_query_process_s": [round(s, 2) for s in seconds],
            "cli_query_process_median_s": round(statistics.median(seconds), 2),
            "cli_load_average": round(os.getloadavg()[0], 2)}


def recall(expected: list, files: list[str]) -> float:
    """Fraction of expected entries found; an entry that is a list is met by any of its files."""
    groups = _groups(expected)
    return sum(any(f in files for f in group) for group in groups) / len(groups)


def reciprocal_rank(expected: list, files: list[str]) -> float:
    """1 / rank of the first file that meets an expected entry (0 when none is listed)."""
    wanted = {f for group in _groups(expected) for f in group}
    return next((1.0 / rank for rank, f in enumerate(files, 1) if f in wanted), 0.0)


def ask(questions: list[dict], tree: str, index_dir: Path, k: int) -> dict:
    """Each question asked as a user would (k results) and with DEEP results, to score ranks and stability."""
    from ladder import indexer

    load_before = os.getloadavg()[0]
    started = time.monotonic()
    indexer.search("warm up: load the model and the index", k=k, index_dir=str(index_dir))
    cold = time.monotonic() - started
    latencies, rows = [], []
    for question in questions:
        started = time.monotonic()
        hits = indexer.search(question["q"], k=k, index_dir=str(index_dir))
        latencies.append(time.monotonic() - started)
        deep = indexer.search(question["q"], k=DEEP, index_dir=str(index_dir))
        in_tree = indexer.search(question["q"], k=k, where={"tree": tree}, index_dir=str(index_dir))
        files = [h["path"] if h["tree"] == tree else f"{h['tree']}:{h['path']}" for h in hits]
        deep_files = [h["path"] if h["tree"] == tree else f"{h['tree']}:{h['path']}" for h in deep]
        scores = [h["score"] for h in deep]
        rows.append({
            "id": question["id"], "split": question.get("split", "all"), "q": question["q"],
            "expected": question["expected"],
            "recall": recall(question["expected"], files),
            "recall_in_tree": recall(question["expected"], [h["path"] for h in in_tree]),
            "reciprocal_rank": reciprocal_rank(question["expected"], deep_files),
            "all_in_top_deep": recall(question["expected"], deep_files) == 1.0,
            "k_stable": [h["path"] for h in deep[:k]] == [h["path"] for h in hits],
            "score_ordered": all(a >= b for a, b in zip(scores, scores[1:])),
            "top": [f"{h['tree']}:{h['path']}:{h['start']}-{h['end']} pass={h['pass']} score={h['score']}"
                    for h in deep],
        })
    return {
        "queries_load_average": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        "cold_first_query_s": round(cold, 3),
        "warm_query_p50_ms": round(1000 * statistics.median(latencies), 1),
        "warm_query_p95_ms": round(1000 * sorted(latencies)[int(0.95 * (len(latencies) - 1))], 1),
        **summary(rows),
        "by_split": {split: summary([r for r in rows if r["split"] == split])
                     for split in sorted({r["split"] for r in rows})},
        "questions": rows,
    }


def summary(rows: list[dict]) -> dict:
    return {
        "count": len(rows),
        "recall_at_k": round(statistics.mean(r["recall"] for r in rows), 3),
        "recall_at_k_in_tree": round(statistics.mean(r["recall_in_tree"] for r in rows), 3),
        "mrr_at_deep": round(statistics.mean(r["reciprocal_rank"] for r in rows), 3),
        "all_in_top_deep": round(statistics.mean(r["all_in_top_deep"] for r in rows), 3),
        "k_stable": round(statistics.mean(r["k_stable"] for r in rows), 3),
        "score_ordered": round(statistics.mean(r["score_ordered"] for r in rows), 3),
    }


def result_path(out_dir: Path, questions: Path, tree: str) -> Path:
    """index-<tree>.json for questions.yaml (the development set), index-<name>.json for questions-<name>.yaml."""
    name = questions.stem.removeprefix("questions").lstrip("-") or tree
    return out_dir / f"index-{name}.json"


def print_queries(label: str, queries: dict, k: int) -> None:
    print(f"{label}: warm query p50 / p95 {queries['warm_query_p50_ms']} / {queries['warm_query_p95_ms']} ms "
          f"(load average {queries['queries_load_average'][0]} -> {queries['queries_load_average'][1]})")
    for split, scores in queries["by_split"].items():
        print(f"  {split:<8} n={scores['count']:<3} recall@{k} {scores['recall_at_k']:.3f} "
              f"(in tree {scores['recall_at_k_in_tree']:.3f})  MRR@{DEEP} {scores['mrr_at_deep']:.3f}  "
              f"all in top {DEEP} {scores['all_in_top_deep']:.3f}  top {k} of k={DEEP} = k={k}: {scores['k_stable']:.3f}  "
              f"score-ordered {scores['score_ordered']:.3f}")
    for row in queries["questions"]:
        if row["recall"] < 1:
            print(f"  miss {row['split']:<8} {row['id']:<32} recall {row['recall']:.2f}  RR {row['reciprocal_rank']:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tree", required=True, help="compiler source tree (read only)")
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--questions", type=Path, action="append",
                        help="question set (repeatable; default: questions.yaml, questions-heldout.yaml, "
                             "questions-unseen.yaml)")
    parser.add_argument("--out-dir", type=Path, default=REPO / "bench" / "results",
                        help="where the result files go (default bench/results)")
    parser.add_argument("--workdir", help="keep the tree copy and the index here (default: a temporary folder)")
    parser.add_argument("--queries-only", action="store_true",
                        help="with --workdir: ask the questions of the index already there, build nothing")
    args = parser.parse_args()
    if args.queries_only and not args.workdir:
        parser.error("--queries-only needs --workdir")

    sets = [(path, yaml.safe_load(path.read_text())) for path in (args.questions or QUESTION_SETS)]
    tree_name = sets[0][1]["tree"]
    if any(spec["tree"] != tree_name for _, spec in sets):
        parser.error("all question sets must be about the same tree")
    args.out_dir.mkdir(parents=True, exist_ok=True)
    with contextlib.ExitStack() as stack:
        scratch = Path(args.workdir or stack.enter_context(tempfile.TemporaryDirectory(prefix="ladder-eval-")))
        index_dir = scratch / "index"
        if args.queries_only:
            # Build numbers of the last full run stay; query numbers are replaced.
            for path, spec in sets:
                queries = ask(spec["questions"], tree_name, index_dir, args.k)
                out = result_path(args.out_dir, path, tree_name)
                previous = json.loads(out.read_text()) if out.exists() else {}
                out.write_text(json.dumps({**previous, **queries, "questions_file": path.name, "queries_command": COMMAND},
                                          indent=1) + "\n")
                print_queries(path.name, queries, args.k)
            return
        copy = scratch / tree_name
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(args.tree, copy, symlinks=True, ignore=shutil.ignore_patterns(".git"))
        # The catalog is copied too: in the repository its version is the git commit, and a commit
        # landing mid-run would turn the "nothing changed" rebuild into a relabelling of kb/.
        catalog = scratch / "kb"
        shutil.rmtree(catalog, ignore_errors=True)
        shutil.copytree(REPO / "kb", catalog, ignore=shutil.ignore_patterns("__pycache__"))
        sources = [f"kb={catalog}", f"{tree_name}={copy}"]

        load_before = os.getloadavg()[0]
        full_s, full_cpu, full = run_build(index_dir, sources, "--rebuild")
        load_after_full = os.getloadavg()[0]
        same_s, same_cpu, same = run_build(index_dir, sources)
        changed = copy / CHANGED_FILE
        changed.chmod(0o644)
        changed.write_text(changed.read_text() + "\n// touched by the index benchmark\n")
        one_s, one_cpu, one = run_build(index_dir, sources)
        cli = time_cli(index_dir)
        answers = [(path, ask(spec["questions"], tree_name, index_dir, args.k)) for path, spec in sets]

    build = {
        "tree": tree_name, "source": args.tree, "k": args.k,
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform(),
                    "load_average_at_start": round(load_before, 2),
                    "load_average_after_full_build": round(load_after_full, 2),
                    "load_average_at_end": round(os.getloadavg()[0], 2)},
        "chunks": full["chunks"], "files": full["files"], "trees": full["trees"],
        "full_build_s": round(full_s, 1), "full_build_cpu_s": round(full_cpu, 1),
        "full_build_embedded": full["embedded_chunks"],
        "unchanged_rebuild_s": round(same_s, 1), "unchanged_rebuild_cpu_s": round(same_cpu, 1),
        "unchanged_up_to_date": same["up_to_date"],
        "one_file_rebuild_s": round(one_s, 1), "one_file_rebuild_cpu_s": round(one_cpu, 1),
        "one_file_changed_files": one["changed_files"],
        "one_file_embedded": one["embedded_chunks"],
        **cli,
    }
    print(f"{'tree':<28}{tree_name}")
    print(f"{'files / chunks':<28}{build['files']} / {build['chunks']}")
    print(f"{'load average':<28}{build['machine']['load_average_at_start']} at start, "
          f"{build['machine']['load_average_after_full_build']} after the full build, "
          f"{build['machine']['load_average_at_end']} at the end ({build['machine']['cpus']} CPUs)")
    print(f"{'full build':<28}{build['full_build_s']} s wall, {build['full_build_cpu_s']} s CPU "
          f"({build['full_build_embedded']} chunks embedded)")
    print(f"{'rebuild, nothing changed':<28}{build['unchanged_rebuild_s']} s wall, {build['unchanged_rebuild_cpu_s']} s CPU")
    print(f"{'rebuild, one file changed':<28}{build['one_file_rebuild_s']} s wall, {build['one_file_rebuild_cpu_s']} s CPU "
          f"({build['one_file_changed_files']} file, {build['one_file_embedded']} chunks embedded)")
    print(f"{'ladder query process':<28}median {build['cli_query_process_median_s']} s "
          f"({build['cli_query_process_s']}, load average {build['cli_load_average']})")
    for path, queries in answers:
        out = result_path(args.out_dir, path, tree_name)
        out.write_text(json.dumps({**build, "command": COMMAND, "queries_command": COMMAND, "questions_file": path.name,
                                  **queries}, indent=1) + "\n")
        print(f"{'first query (cold)':<28}{queries['cold_first_query_s']} s")
        print_queries(path.name, queries, args.k)
        print(f"details: {out}")


if __name__ == "__main__":
    main()
