"""Choose the reranker's weights (indexer.rerank.WEIGHTS) on tuning questions only.

    python bench/index/tune_rerank.py --index-dir DIR [--tree triton-ascend] [--refine]

Asks every tuning question once (the pool and the features of its chunks do not depend on the
weights), then scores every weighting of a grid by file-level recall@5 and MRR@10, the way
`ladder.indexer.search` ranks files. `--refine` instead starts from the current weights and moves
STEP of weight from one feature to another while recall@5 + MRR@10 improves (finer than the grid,
and seconds instead of the grid's many minutes), then prints the result per question set. Tuning
questions are the `split: tune` halves of questions-symptoms.yaml and questions-blind4.yaml to
questions-blind6.yaml, and the older development sets (questions.yaml, questions-heldout.yaml); the
held-out halves are never read. Prints the best weightings and the current one.
"""
from __future__ import annotations

import argparse
import itertools
import statistics
import sys
from pathlib import Path

import numpy as np
import yaml

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

TUNING = [("questions-symptoms.yaml", "tune"), ("questions-blind4.yaml", "tune"), ("questions-blind5.yaml", "tune"),
          ("questions-blind6.yaml", "tune"), ("questions.yaml", None), ("questions-heldout.yaml", None)]
GRID = np.round(np.arange(0.0, 0.61, 0.1), 2)
STEP = 0.05
# Questions about nothing the index holds: what the relevance threshold must leave unanswered.
OFF_TOPIC = ["how do I bake sourdough bread at home", "best hiking trails in the alps in summer",
             "what is the capital of france", "configure nginx as a reverse proxy with TLS",
             "recipe for vegetable lasagna", "how to train a puppy to sit", "stock market outlook for next year",
             "who won the football world cup", "javascript promise then catch example", "wedding dress shopping tips",
             "knitting a scarf for beginners", "explain the plot of hamlet"]


def tuning_questions() -> list[dict]:
    found = []
    for name, split in TUNING:
        for question in yaml.safe_load((Path(__file__).with_name(name)).read_text())["questions"]:
            if split is None or question.get("split") == split:
                found.append({**question, "set": name})
    return found


def asked(question: dict, opened, tree: str) -> dict:
    from ladder.indexer import rerank, retrieve

    query = retrieve.Query(question["q"], opened, None, 0.0)
    retrieve.pool(query)
    values = rerank.features(query.rows, query.dense, query.bm25, query.tokens, opened.records, opened.vocabulary,
                             rerank.backend_named(question["q"]), query.quoted)
    groups = [e if isinstance(e, list) else [e] for e in question["expected"]]
    return {"rows": query.rows, "values": values, "groups": groups, "tree": tree, "set": question["set"]}


def ranked_files(case: dict, weights: dict, opened) -> list[str]:
    """The first 10 files as `ladder.indexer.search` would answer with these weights."""
    from ladder.indexer import rerank, retrieve

    query = retrieve.Query("", opened, None, 0.0, rows=case["rows"])
    query.chunk_scores = dict(zip(case["rows"], rerank.combine(case["values"], weights).tolist()))
    for stage in retrieve.STAGES[retrieve.STAGES.index(retrieve.by_file):]:
        stage(query)
    return [opened.files[row][1] if opened.files[row][0] == case["tree"] else "-" for row, _ in query.files[:10]]


def score(cases: list[dict], weights: dict, opened) -> tuple[float, float]:
    recalls, ranks = [], []
    for case in cases:
        files = ranked_files(case, weights, opened)
        recalls.append(sum(any(f in files[:5] for f in g) for g in case["groups"]) / len(case["groups"]))
        wanted = {f for g in case["groups"] for f in g}
        ranks.append(next((1 / r for r, f in enumerate(files, 1) if f in wanted), 0.0))
    return statistics.mean(recalls), statistics.mean(ranks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--index-dir", required=True)
    parser.add_argument("--tree", default="triton-ascend")
    parser.add_argument("--refine", action="store_true", help="search near the current weights instead of the grid")
    args = parser.parse_args()
    from ladder.indexer import rerank, retrieve
    from ladder.indexer.store import Store

    store = Store(args.index_dir)
    opened = retrieve._open(str(store.root), store.current_id())
    cases = [asked(q, opened, args.tree) for q in tuning_questions()]
    if args.refine:
        refine(cases, opened)
        threshold(args.index_dir)
        return
    names = list(rerank.WEIGHTS)
    results = []
    for combination in itertools.product(GRID, repeat=len(names) - 1):
        last = round(1.0 - sum(combination), 2)
        if last < 0:
            continue
        weights = dict(zip(names, [*combination, last]))
        results.append((score(cases, weights, opened), weights))
    results.sort(key=lambda item: (-(item[0][0] + item[0][1]), str(item[1])))
    print(f"{len(cases)} tuning questions; best of {len(results)} weightings (recall@5, MRR@10):")
    for (recall, mrr), weights in results[:8]:
        print(f"  {recall:.3f} {mrr:.3f}  {weights}")
    recall, mrr = score(cases, rerank.WEIGHTS, opened)
    print(f"current {recall:.3f} {mrr:.3f}  {rerank.WEIGHTS}")
    threshold(args.index_dir)


def refine(cases: list[dict], opened) -> None:
    """Move STEP of weight between two features while recall@5 + MRR@10 over all cases improves."""
    from ladder.indexer import rerank

    weights, best = dict(rerank.WEIGHTS), sum(score(cases, rerank.WEIGHTS, opened))
    improved = True
    while improved:
        improved = False
        for source, target in itertools.permutations(weights, 2):
            if weights[source] < STEP - 1e-9:
                continue
            candidate = {**weights, source: round(weights[source] - STEP, 3), target: round(weights[target] + STEP, 3)}
            value = sum(score(cases, candidate, opened))
            if value > best + 1e-9:
                weights, best, improved = candidate, value, True
    print(f"{len(cases)} tuning questions; refined from the current weights (recall@5, MRR@10):")
    for name, split in TUNING:
        chosen = [c for c in cases if c["set"] == name]
        (now_recall, now_mrr), (recall, mrr) = score(chosen, rerank.WEIGHTS, opened), score(chosen, weights, opened)
        print(f"  {name:<24} {split or 'all':<5} n={len(chosen):<3} now {now_recall:.3f} {now_mrr:.3f}"
              f"  refined {recall:.3f} {mrr:.3f}")
    print(f"refined {weights}")


def threshold(index_dir: str) -> None:
    """How many right answers MIN_RELEVANCE drops, and how many off-topic questions it still answers."""
    from ladder import indexer
    from ladder.indexer import rerank

    right = []
    for question in tuning_questions():
        wanted = {f for e in question["expected"] for f in (e if isinstance(e, list) else [e])}
        right += [h["score"] for h in indexer.search(question["q"], k=10, index_dir=index_dir)
                  if h["path"] in wanted][:1]
    off = [indexer.search(q, k=1, index_dir=index_dir)[0]["score"] for q in OFF_TOPIC]
    print(f"MIN_RELEVANCE {rerank.MIN_RELEVANCE}: {sum(s < rerank.MIN_RELEVANCE for s in right)} of {len(right)} "
          f"right answers below it; {sum(s >= rerank.MIN_RELEVANCE for s in off)} of {len(off)} off-topic "
          f"questions answered above it")


if __name__ == "__main__":
    main()
