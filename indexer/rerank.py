"""The second stage of retrieval: one relevance score per pooled chunk, from features that need no model.

No cross-encoder installs offline, so the reranker is lexical plus the dense similarity the pool
already computed. For a chunk and a question:

- `dense`: cosine similarity of their embeddings (what the chunk *means*);
- `coverage`: the share of the question's vocabulary the chunk contains, each word weighted by
  its inverse document frequency (a question's rare words, `tcgen05`, `multibuffer`, `histogram`,
  are what it is about; a word the index never saw counts as missing);
- `file_coverage`: the same share over the chunk's whole file (a pass's file names the ops it
  rewrites and the symptoms it fixes in different places than the chunk that matched best);
- `phrases`: the share of the question's consecutive word pairs ("program id", "logical block",
  "tail axis") that the chunk has side by side, each weighted by its words' rarity;
- `named`: the same share over the chunk's path, symbol and pass only (a question that names
  AutoBlockify or semantic.py is about the file of that name);
- `backend`: whether the chunk belongs to the backend the question names or to code only that
  backend's kind compiles through (1: TritonGPU for an NVIDIA question), to code shared by all
  backends (0.5) or to code the named backend never runs (0): "on the NPU" is not answered by the
  CUDA or the TritonGPU lowering; a question naming no backend gives every chunk 0.5;
- `quoted`: how much of what the question quotes (a pasted error message) the chunk holds word for
  word, in order (`ladder.indexer.quoted`);
- `fused`: reciprocal-rank fusion of its dense and BM25 ranks, scaled to [0, 1] (agreement of the
  two retrievers, whatever their score scales).

The score is their weighted sum (`WEIGHTS`, which add up to 1), so it lies in [0, 1] and means the
same from one question to the next: `MIN_RELEVANCE` is the score below which a result is noise.
The weights and the threshold were chosen on the tuning half of bench/index/questions-symptoms.yaml
and the older development sets (bench/index/tune_rerank.py: a grid, then `--refine` around it),
never on the held-out half; `quoted` came last, with the other weights scaled by 0.8 (and the
threshold with them), so a question that quotes nothing ranks as it did before.
"""
from __future__ import annotations

import math
import re

import numpy as np

from ladder.indexer.backends import runs
from ladder.indexer.text import keyword_text, keyword_tokens

WEIGHTS = {"dense": 0.08, "coverage": 0.04, "file_coverage": 0.04, "phrases": 0.16, "named": 0.24, "backend": 0.04,
           "fused": 0.2, "quoted": 0.2}
RRF_K = 10
# Below this a result shares neither meaning nor rare words with the question.
MIN_RELEVANCE = 0.216
HEADER_KEYS = ("path", "symbol", "pass")
# Words by which a question names its backend.
BACKEND_WORDS = {
    "ascend": re.compile(r"\b(npu|ascend|cann|hivm|hfusion|aiv|aic|910b?\w*|bishengir|ttadapter|cube cores?|"
                         r"vector cores?|unified buffer|ub)\b", re.I),
    "nvidia": re.compile(r"\b(cuda|nvidia|ptx|ptxas|sass|hopper|blackwell|ampere|[abh]100|h200|b200|sm_?\d\d\w?|"
                         r"wgmma|tcgen05|cp\.async|tma)\b", re.I),
}


def backend_named(question: str) -> str | None:
    """The one backend a question names, if it names exactly one."""
    named = [backend for backend, words in BACKEND_WORDS.items() if words.search(question)]
    return named[0] if len(named) == 1 else None


class Vocabulary:
    """Inverse document frequencies and the rows holding each token, read off the BM25 index."""

    def __init__(self, keywords, files: list):
        scores = keywords.scores
        numbers: dict = {}
        self.file_of_row = np.array([numbers.setdefault(f, len(numbers)) for f in files], dtype=np.int64)
        self.ids = keywords.vocab_dict
        self.indptr, self.indices = scores["indptr"], scores["indices"]
        documents = max(int(scores["num_docs"]), 1)
        frequency = np.diff(self.indptr).astype(np.float64)
        self.idf = np.log1p((documents - frequency + 0.5) / (frequency + 0.5))
        # A word no chunk contains weighs as much as the rarest one.
        self.unseen_idf = float(math.log1p((documents + 0.5) / 0.5))
        self._headers: dict[int, frozenset[str]] = {}
        self._pairs: dict[int, frozenset[tuple[str, str]]] = {}

    def weight(self, token: str) -> float:
        index = self.ids.get(token)
        return self.unseen_idf if index is None else float(self.idf[index])

    def rows_with(self, token: str) -> np.ndarray:
        index = self.ids.get(token)
        if index is None:
            return np.zeros(0, dtype=np.int64)
        return self.indices[self.indptr[index]:self.indptr[index + 1]]

    def files_with(self, token: str) -> np.ndarray:
        return np.unique(self.file_of_row[self.rows_with(token)])

    def pairs(self, row: int, record: dict) -> frozenset[tuple[str, str]]:
        """The consecutive token pairs of what BM25 reads of the chunk (tokenised once per process)."""
        if row not in self._pairs:
            tokens = keyword_tokens(keyword_text(record["metadata"], record["text"]))
            self._pairs[row] = frozenset(zip(tokens, tokens[1:]))
        return self._pairs[row]

    def header(self, row: int, record: dict) -> frozenset[str]:
        if row not in self._headers:
            metadata = record["metadata"]
            self._headers[row] = frozenset(keyword_tokens(" ".join(str(metadata.get(k, "")) for k in HEADER_KEYS)))
        return self._headers[row]


def features(rows: list[int], dense: np.ndarray, bm25: np.ndarray, tokens: list[str], records: list[dict],
             vocabulary: Vocabulary, backend: str | None = None,
             quoted: dict[int, float] | None = None) -> dict[str, np.ndarray]:
    """Each feature for each pooled row, in [0, 1]; `backend` is the one the question names, `quoted`
    the rows holding what it quotes (`ladder.indexer.quoted`)."""
    rows_array = np.asarray(rows, dtype=np.int64)
    distinct = list(dict.fromkeys(tokens))
    weights = np.array([vocabulary.weight(t) for t in distinct]) if distinct else np.zeros(0)
    total = float(weights.sum()) or 1.0
    coverage, file_coverage = np.zeros(len(rows)), np.zeros(len(rows))
    files_array = vocabulary.file_of_row[rows_array]
    for token, weight in zip(distinct, weights):
        coverage += weight * np.isin(rows_array, vocabulary.rows_with(token))
        file_coverage += weight * np.isin(files_array, vocabulary.files_with(token))
    named = np.array([sum(w for t, w in zip(distinct, weights) if t in vocabulary.header(row, records[row]))
                      for row in rows])
    pairs = list(dict.fromkeys((a, b) for a, b in zip(tokens, tokens[1:]) if a != b))
    pair_weights = [vocabulary.weight(a) + vocabulary.weight(b) for a, b in pairs]
    phrases = np.array([sum(w for pair, w in zip(pairs, pair_weights) if pair in vocabulary.pairs(row, records[row]))
                        for row in rows]) / (sum(pair_weights) or 1.0)
    fused = np.zeros(len(rows))
    for scores in (dense, bm25):
        order = sorted(range(len(rows)), key=lambda i: (-scores[rows[i]], rows[i]))
        for rank, i in enumerate(order):
            if scores[rows[i]] > 0:
                fused[i] += 1.0 / (RRF_K + rank)
    backends = [records[row]["metadata"].get("backend", "common") for row in rows]
    same = np.array([0.5 if backend is None or b == "common" else float(runs(backend, b)) for b in backends])
    return {"dense": np.clip(dense[rows_array], 0.0, 1.0) if rows else np.zeros(0), "backend": same,
            "coverage": coverage / total, "file_coverage": file_coverage / total, "phrases": phrases,
            "named": named / total, "fused": fused * RRF_K / 2,
            "quoted": np.array([(quoted or {}).get(row, 0.0) for row in rows])}


def combine(values: dict[str, np.ndarray], weights: dict[str, float] = WEIGHTS) -> np.ndarray:
    return sum(weights[name] * values[name] for name in weights)


def scores(rows: list[int], dense: np.ndarray, bm25: np.ndarray, tokens: list[str], records: list[dict],
           vocabulary: Vocabulary, backend: str | None = None,
           quoted: dict[int, float] | None = None) -> dict[int, float]:
    """Row -> relevance in [0, 1] for every pooled row."""
    if not rows:
        return {}
    combined = combine(features(rows, dense, bm25, tokens, records, vocabulary, backend, quoted))
    return {row: float(value) for row, value in zip(rows, combined)}
