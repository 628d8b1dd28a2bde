"""Querying: exact dense search and BM25, fused by reciprocal rank, then ranked by file.

Identifiers and IR op names (`ttg.convert_layout`, `ld.global.b32`, `wgmma`) are what BM25 is
good at; paraphrases of symptoms ("layout conversion inside my loop") are what the dense model is
good at (see indexer.text for what each reads). Each contributes its best `depth` chunks;
reciprocal-rank fusion (1 / (RRF_K + rank)) needs no score calibration between them. A small
RRF_K makes the first ranks count: one retriever's first chunk (1/10) outweighs a chunk both
rank twelfth (2/21), where the usual 60 would rank it below one both rank 60th.

The answer is a list of *files*, each shown by its best chunk: a file's score is its best chunk's
plus OTHER_CHUNKS_WEIGHT times the rest of its chunks among the candidates, so a file that
answers in several places outranks one that matches by accident once. Measured on the question
sets of bench/index over one build, against ranking files by their best chunk alone: held-out
recall@5 0.81 -> 0.93 and mean reciprocal rank of the expected files 0.55 -> 0.68; development
set recall@5 unchanged (0.91), reciprocal rank 0.57 -> 0.60.

Dense search is exact (a matrix product over the vectors chromadb stores, read once per build):
chromadb's approximate HNSW search returned different neighbours in different processes over the
same index (38 of the exact 40 on average), which made answers change from run to run. Exact
search over tens of thousands of 384-dimensional vectors costs a few milliseconds.

The opened index (records, vectors, BM25, the embedding model) is cached per build, so that the
second and later queries in a process cost only the query itself; a new build is picked up on
the next call.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from indexer import embedding
from indexer.errors import IndexCorrupt
from indexer.records import result
from indexer.store import COLLECTION, Build, Store
from indexer.text import dense_query, keyword_tokens

# How many candidates each retriever contributes, at least.
MIN_DEPTH = 80
RRF_K = 10
OTHER_CHUNKS_WEIGHT = 0.3
FILTER_KEYS = ("backend", "tree", "language", "kind", "pass", "path")


@lru_cache(maxsize=2)
def _model(spec: str):
    return embedding.load(spec)


class _Opened:
    """One build, opened for querying: its records, their unit vectors and the BM25 index, row by row."""

    def __init__(self, build: Build):
        import bm25s
        import chromadb
        from chromadb.config import Settings

        self.records = list(build.records())
        try:
            client = chromadb.PersistentClient(path=str(build.chroma_path),
                                               settings=Settings(anonymized_telemetry=False))
            stored = client.get_collection(COLLECTION).get(include=["embeddings"])
            self.keywords = bm25s.BM25.load(str(build.bm25_path))
            by_id = dict(zip(stored["ids"], stored["embeddings"]))
            vectors = np.array([by_id[r["id"]] for r in self.records], dtype=np.float32)
        except Exception as error:  # chromadb and bm25s raise many types for damaged files
            raise IndexCorrupt(f"index at {build.path} is unreadable ({type(error).__name__}: {error}); "
                               "rebuild it with `ladder index build --rebuild`") from None
        if vectors.ndim != 2 or self.keywords.scores["num_docs"] != len(self.records):
            raise IndexCorrupt(f"index at {build.path} is inconsistent (vectors, keywords and chunks differ); "
                               "rebuild it with `ladder index build --rebuild`")
        self.vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        self.model = _model(build.manifest["embed"])
        self.files = [(r["metadata"].get("tree"), r["metadata"].get("path")) for r in self.records]

    def mask(self, where: dict | None) -> np.ndarray | None:
        """Which rows pass the filters (None: all of them)."""
        if not where:
            return None
        keep = np.ones(len(self.records), dtype=bool)
        for key, values in where.items():
            keep &= np.array([r["metadata"].get(key) in values for r in self.records])
        return keep

    def dense(self, query: str, depth: int, mask: np.ndarray | None) -> list[int]:
        vector = np.asarray(self.model.get_query_embedding(dense_query(query)), dtype=np.float32)
        scores = self.vectors @ (vector / max(float(np.linalg.norm(vector)), 1e-12))
        if mask is not None:
            scores = np.where(mask, scores, -np.inf)
        return _top(scores, depth)

    def keyword(self, query: str, depth: int, mask: np.ndarray | None) -> list[int]:
        tokens = [t for t in keyword_tokens(query) if t in self.keywords.vocab_dict]
        if not tokens:
            return []
        scores = self.keywords.get_scores(tokens, weight_mask=None if mask is None else mask.astype(np.float32))
        # Only chunks sharing a word with the query: a zero score says nothing.
        return [row for row in _top(scores, depth) if scores[row] > 0]


def _top(scores: np.ndarray, depth: int) -> list[int]:
    depth = min(depth, len(scores))
    rows = np.argpartition(-scores, depth - 1)[:depth]
    rows = rows[np.isfinite(scores[rows])]
    # Ties broken by row, so that the same index always answers the same way.
    return sorted(rows.tolist(), key=lambda row: (-scores[row], row))


@lru_cache(maxsize=2)
def _open(root: str, build_id: str) -> _Opened:
    return _Opened(Store(root).open(build_id))


def _where(where: dict | None) -> dict[str, list] | None:
    """{"backend": "nvidia", "language": ["cpp", "python"], ...} as key -> accepted values.

    A backend filter also admits code shared by all backends (backend "common").
    """
    if not where:
        return None
    accepted = {}
    for key, value in where.items():
        if key not in FILTER_KEYS:
            raise ValueError(f"cannot filter on {key!r}: use one of {', '.join(FILTER_KEYS)}")
        values = [value] if isinstance(value, str) else list(value)
        if key == "backend" and "common" not in values:
            values.append("common")
        accepted[key] = values
    return accepted


def search(query: str, k: int = 5, where: dict | None = None, index_dir: str | None = None) -> list[dict]:
    """The k chunks that best answer `query`, best first, one per file.

    Each result: path (relative to its tree), start, end (lines, 1-based inclusive), pass (CLI name
    of the pass the code implements, or None), score (of the file), text, tree, language, symbol,
    backend, kind. One chunk per file (five places tell more than five pieces of one file); a
    catalog entry or pass description is followed by its code. `where` filters on backend / tree /
    language / kind / pass / path (a value or a list of values).
    """
    if not query.strip():
        raise ValueError("empty query")
    if k < 1:
        raise ValueError("k must be at least 1")
    accepted = _where(where)
    store = Store(index_dir)
    build_id = store.current_id()
    if build_id is None:
        store.current()  # raises IndexMissing with the message to show
    opened = _open(str(store.root), build_id)
    mask = opened.mask(accepted)
    depth = max(MIN_DEPTH, 16 * k)
    fused = fuse([opened.dense(query, depth, mask), opened.keyword(query, depth, mask)])
    files = rank_files(fused, opened.files)
    return [result(opened.records[row], score) for row, score in _answer(files, fused, opened, k)]


def fuse(rankings: list[list[int]], k: float = RRF_K) -> dict[int, float]:
    """Reciprocal-rank fusion: row -> sum over rankings of 1 / (k + rank), rank from 0; best first."""
    scores: dict[int, float] = {}
    for ranking in rankings:
        for rank, row in enumerate(ranking):
            scores[row] = scores.get(row, 0.0) + 1.0 / (k + rank)
    return dict(sorted(scores.items(), key=lambda item: (-item[1], item[0])))


def rank_files(fused: dict[int, float], file_of: list, others: float = OTHER_CHUNKS_WEIGHT) -> list[tuple[int, float]]:
    """(best row of the file, file score) per file, best first: the best chunk plus `others` times the rest."""
    best: dict = {}
    score: dict = {}
    for row, value in fused.items():  # best first
        key = file_of[row]
        if key in best:
            score[key] += others * value
        else:
            best[key], score[key] = row, value
    return sorted(((best[key], score[key]) for key in best), key=lambda item: (-item[1], item[0]))


def _answer(files: list[tuple[int, float]], fused: dict[int, float], opened: _Opened, k: int) -> list[tuple[int, float]]:
    """The best k files, each followed by the code it points at.

    A catalog entry or a pass description names the files that implement it (`related`); when one
    of those files is among the candidates, its best chunk comes right after the entry instead of
    wherever it ranked on its own: the entry says why, the code says how.
    """
    file_score = {opened.files[row]: score for row, score in files}
    chosen: list[tuple[int, float]] = []
    used: set = set()

    def take(row: int) -> None:
        chosen.append((row, file_score[opened.files[row]]))
        used.add(opened.files[row])

    for row, _ in files:
        if len(chosen) >= k:
            break
        if opened.files[row] in used:
            continue
        take(row)
        for path in filter(None, opened.records[row]["metadata"].get("related", "").split("; ")):
            follower = next((r for r in fused if opened.records[r]["metadata"].get("path") == path
                             and opened.files[r] not in used), None)
            if follower is not None and len(chosen) < k:
                take(follower)
    return chosen
