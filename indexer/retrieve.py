"""Querying: a candidate pool from dense search and BM25, reranked, then answered by file.

Identifiers and IR op names (`ttg.convert_layout`, `ld.global.b32`, `wgmma`) are what BM25 is
good at; paraphrases of symptoms ("layout conversion inside my loop") are what the dense model is
good at (see indexer.text for what each reads). The stages, in order (`STAGES`):

1. `pool`: each retriever contributes its best POOL chunks, a number that does not depend on k, so
   asking for 10 results gives the 5 of `--k 5` first (the pool used to grow with k and reorder
   the first results);
2. `score_chunks` (indexer.rerank): every pooled chunk gets one relevance score in [0, 1] from its
   dense similarity, how much of the question's vocabulary and word pairs it covers, whether its
   path, symbol or pass is named by the question, its backend, and the two retrievers' ranks;
3. `by_file`: the answer is a list of *files*, each shown by its best chunk and scored by it plus a
   little for its other pooled chunks (a file that answers in several places outranks one that
   matches by accident once); a doc and its translation (docs/en/X.md, docs/zh/X.md) are one
   answer, shown in the language that matched better;
4. `related`: a catalog entry or pass description that answers names the files that implement
   it (`related`), and a C++ header is implemented by the source file of the same name; each of
   them gains RELATED_WEIGHT of the namer's score (the entry or declaration says what, the code
   says how), whether or not its own words matched;
5. `relevant`: files below `min_score` are dropped, so that a caller can say "nothing found"
   instead of citing noise;
6. the best k, in the order of their final score.

Dense search is exact (a matrix product over vectors.npy, read once per build): approximate search
returned different neighbours in different processes over the same index. The opened index
(records, vectors, BM25, the embedding model) is cached per build, so that the second and later
queries in a process cost only the query itself; a new build is picked up on the next call.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from ladder.indexer import embedding, quoted, rerank
from ladder.indexer.backends import ALSO_RUNS
from ladder.indexer.errors import IndexCorrupt
from ladder.indexer.records import result
from ladder.indexer.store import Build, Store
from ladder.indexer.text import dense_query, keyword_query

# Candidates each retriever contributes, whatever k is.
POOL = 150
# What a file's other pooled chunks add to its best chunk's score, each.
OTHER_CHUNKS_WEIGHT = 0.05
OTHER_CHUNKS_COUNTED = 3
# What a file named by a matching catalog entry or pass description gains of that entry's score,
# and how many of the best files may lend it.
RELATED_WEIGHT = 0.5
RELATED_FROM = 10
FILTER_KEYS = ("backend", "tree", "language", "kind", "pass", "path")
# docs/<language>/<path>: the same page in another language.
_TRANSLATED_DOC = re.compile(r"^(.*\bdocs)/(?:en|zh|zh[-_]cn|ja|ko)/(.*)$", re.IGNORECASE)


def answer_key(tree: str, path: str) -> tuple[str, str]:
    """What makes two chunks part of the same answer: their file, or the page they translate."""
    twin = _TRANSLATED_DOC.match(path or "")
    return (tree, f"{twin.group(1)}/*/{twin.group(2)}") if twin else (tree, path)


@lru_cache(maxsize=2)
def _model(spec: str, models: str):
    return embedding.load(spec, Store(models).models, for_queries=True)


class _Opened:
    """One build, opened for querying: its records, their unit vectors and the BM25 index, row by row."""

    def __init__(self, build: Build, root: str):
        import bm25s

        self.records = list(build.records())
        try:
            self.keywords = bm25s.BM25.load(str(build.bm25_path))
            self.vectors = np.load(build.vectors_path, mmap_mode="r")
        except Exception as error:  # bm25s and numpy raise many types for damaged files
            raise IndexCorrupt(f"index at {build.path} is unreadable ({type(error).__name__}: {error}); "
                               "rebuild it with `ladder index build --rebuild`") from None
        if (self.vectors.ndim != 2 or self.vectors.shape[0] != len(self.records)
                or self.keywords.scores["num_docs"] != len(self.records)):
            raise IndexCorrupt(f"index at {build.path} is inconsistent (vectors, keywords and chunks differ); "
                               "rebuild it with `ladder index build --rebuild`")
        self.spec, self.root = build.manifest["embed"], root
        self.files = [(r["metadata"].get("tree"), r["metadata"].get("path")) for r in self.records]
        self.answers = [answer_key(*f) for f in self.files]
        self._first_rows: dict[str, dict[str, int]] = {}
        for row, (tree, path) in enumerate(self.files):
            self._first_rows.setdefault(path, {}).setdefault(tree, row)
        self.implementations = implementations([path for _, path in self.files])
        self.vocabulary = rerank.Vocabulary(self.keywords, self.files)
        self.quotes = quoted.QuoteMatcher(self.records, self.vocabulary)

    def row_of(self, path: str, tree: str) -> int | None:
        """The first chunk of `path`, in `tree` when that tree has it (a catalog entry names files of others)."""
        rows = self._first_rows.get(path)
        if not rows:
            return None
        return rows.get(tree, next(iter(rows.values())))

    @property
    def model(self):
        return _model(self.spec, self.root)

    def mask(self, where: dict | None) -> np.ndarray | None:
        """Which rows pass the filters (None: all of them)."""
        if not where:
            return None
        keep = np.ones(len(self.records), dtype=bool)
        for key, values in where.items():
            keep &= np.array([r["metadata"].get(key) in values for r in self.records])
        return keep

    def dense_scores(self, query: str) -> np.ndarray:
        return np.asarray(self.vectors @ self.model.query(dense_query(query)), dtype=np.float32)

    def keyword_scores(self, tokens: list[str], mask: np.ndarray | None) -> np.ndarray:
        known = [t for t in tokens if t in self.keywords.vocab_dict]
        if not known:
            return np.zeros(len(self.records), dtype=np.float32)
        return self.keywords.get_scores(known, weight_mask=None if mask is None else mask.astype(np.float32))


_HEADER = re.compile(r"\.(h|hpp|hh)$")
_SOURCE = re.compile(r"\.(cpp|cc|cxx|c)$")


def implementations(paths: list[str]) -> dict[str, list[str]]:
    """C++ header -> the source files of the same name (include/X/Y.h -> lib/X/Y.cpp, or beside it)."""
    sources: dict[str, list[str]] = {}
    for path in dict.fromkeys(paths):
        if path and _SOURCE.search(path):
            sources.setdefault(_SOURCE.sub("", path.rsplit("/", 1)[-1]), []).append(path)
    found = {}
    for path in dict.fromkeys(paths):
        if path and _HEADER.search(path):
            same = sources.get(_HEADER.sub("", path.rsplit("/", 1)[-1]), [])
            # Only a name that few files share says which one implements it.
            if 0 < len(same) <= 2:
                found[path] = same
    return found


def top(scores: np.ndarray, depth: int, mask: np.ndarray | None = None) -> list[int]:
    """The rows of the `depth` best scores among those the mask admits, best first, ties by row."""
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    depth = min(depth, len(scores))
    if depth <= 0:
        return []
    rows = np.argpartition(-scores, depth - 1)[:depth]
    rows = rows[np.isfinite(scores[rows])]
    return sorted(rows.tolist(), key=lambda row: (-scores[row], row))


@lru_cache(maxsize=2)
def _open(root: str, build_id: str) -> _Opened:
    return _Opened(Store(root).open(build_id), root)


def _where(where: dict | None) -> dict[str, list] | None:
    """{"backend": "nvidia", "language": ["cpp", "python"], ...} as key -> accepted values.

    A backend filter also admits the code that backend compiles through (backends.ALSO_RUNS: code
    shared by all backends, and TritonGPU for the GPU backends).
    """
    if not where:
        return None
    accepted = {}
    for key, value in where.items():
        if key not in FILTER_KEYS:
            raise ValueError(f"cannot filter on {key!r}: use one of {', '.join(FILTER_KEYS)}")
        values = [value] if isinstance(value, str) else list(value)
        if key == "backend":
            values = list(dict.fromkeys(values + [label for value in values for label in ALSO_RUNS.get(value, ("common",))]))
        accepted[key] = values
    return accepted


@dataclass
class Query:
    """One question on its way through the stages."""

    text: str
    opened: _Opened
    mask: np.ndarray | None
    min_score: float
    tokens: list[str] = field(default_factory=list)
    dense: np.ndarray | None = None
    bm25: np.ndarray | None = None
    rows: list[int] = field(default_factory=list)  # pooled chunks
    quoted: dict[int, float] = field(default_factory=dict)  # rows holding what the question quotes
    chunk_scores: dict[int, float] = field(default_factory=dict)
    files: list[tuple[int, float]] = field(default_factory=list)  # (best row, file score), best first


def pool(query: Query) -> None:
    query.tokens = keyword_query(query.text)
    query.dense = query.opened.dense_scores(query.text)
    query.bm25 = query.opened.keyword_scores(query.tokens, query.mask)
    lexical = [row for row in top(query.bm25, POOL, query.mask) if query.bm25[row] > 0]
    query.quoted = {row: share for row, share in query.opened.quotes.shares(quoted.spans(query.text)).items()
                    if query.mask is None or query.mask[row]}
    query.rows = list(dict.fromkeys(top(query.dense, POOL, query.mask) + lexical + sorted(query.quoted)))


def score_chunks(query: Query) -> None:
    query.chunk_scores = rerank.scores(query.rows, query.dense, query.bm25, query.tokens, query.opened.records,
                                       query.opened.vocabulary, rerank.backend_named(query.text), query.quoted)


def by_file(query: Query) -> None:
    query.files = rank_files(query.chunk_scores, query.opened.answers)


def related(query: Query) -> None:
    query.files = with_related(query.files, query.opened, query.mask)


def with_related(files: list[tuple[int, float]], opened: _Opened, mask: np.ndarray | None = None,
                 weight: float = RELATED_WEIGHT) -> list[tuple[int, float]]:
    """`files` with the files that the best ones name as `related`, and the implementations of the
    best headers, raised by `weight` of the namer's score."""
    scores = {opened.answers[row]: [row, score] for row, score in files}
    for row, score in files[:RELATED_FROM]:
        tree, path = opened.files[row]
        named = [p for p in opened.records[row]["metadata"].get("related", "").split("; ") if p]
        for target_path in named + opened.implementations.get(path, []):
            target = opened.row_of(target_path, tree)
            if target is None or (mask is not None and not mask[target]) or opened.answers[target] == opened.answers[row]:
                continue
            entry = scores.setdefault(opened.answers[target], [target, 0.0])
            entry[1] += weight * score
    return sorted(((row, score) for row, score in scores.values()), key=lambda item: (-item[1], item[0]))


def relevant(query: Query) -> None:
    query.files = [(row, score) for row, score in query.files if score >= query.min_score]


STAGES = (pool, score_chunks, by_file, related, relevant)


def rank_files(chunk_scores: dict[int, float], file_of: list, others: float = OTHER_CHUNKS_WEIGHT,
               counted: int = OTHER_CHUNKS_COUNTED) -> list[tuple[int, float]]:
    """(best row of the file, file score) per file, best first: the best chunk's score plus `others`
    times each of its next `counted` chunks' scores. Ties go to the lower row, so answers are stable."""
    chunks_of: dict = {}
    for row, value in sorted(chunk_scores.items(), key=lambda item: (-item[1], item[0])):
        chunks_of.setdefault(file_of[row], []).append((row, value))
    files = [(chunks[0][0], chunks[0][1] + others * sum(v for _, v in chunks[1:1 + counted]))
             for chunks in chunks_of.values()]
    return sorted(files, key=lambda item: (-item[1], item[0]))


def search(query: str, k: int = 5, where: dict | None = None, index_dir: str | None = None,
           min_score: float = 0.0) -> list[dict]:
    """The k files that best answer `query`, each shown by its best chunk, best first.

    Each result: path (relative to its tree), start, end (lines, 1-based inclusive), pass (CLI name
    of the pass the code implements, or None), score (of the file, in [0, 1]: higher is more
    relevant; results are in descending order of it), text, tree, language, symbol, backend, kind.
    `where` filters on backend / tree / language / kind / pass / path (a value or a list of
    values); files scoring below `min_score` are left out (see rerank.MIN_RELEVANCE).
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
    asked = Query(query, opened, opened.mask(accepted), min_score)
    for stage in STAGES:
        stage(asked)
    return [result(opened.records[row], score) for row, score in asked.files[:k]]
