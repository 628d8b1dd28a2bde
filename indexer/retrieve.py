"""Querying: dense (chroma) and keyword (BM25) retrieval fused by llama-index's fusion retriever.

Identifiers and IR op names (`ttg.convert_layout`, `ld.global.b32`, `wgmma`) are what BM25 is
good at; paraphrases of symptoms ("layout conversion inside my loop") are what the dense model is
good at. Reciprocal-rank fusion needs no score calibration between the two.

The opened index (vectors, BM25, the embedding model) is cached per build, so that the second and
later queries in a process cost only the query itself; a new build is picked up on the next call.
"""
from __future__ import annotations

from functools import lru_cache

import chromadb
from chromadb.config import Settings
from llama_index.core import VectorStoreIndex
from llama_index.core.llms import MockLLM
from llama_index.core.retrievers import QueryFusionRetriever
from llama_index.core.schema import QueryBundle
from llama_index.core.vector_stores import FilterOperator, MetadataFilter, MetadataFilters
from llama_index.retrievers.bm25 import BM25Retriever
from llama_index.vector_stores.chroma import ChromaVectorStore

from indexer import embedding
from indexer.errors import IndexCorrupt
from indexer.records import identifier_words, result
from indexer.store import COLLECTION, Build, Store

# How many candidates each retriever contributes to the fusion, at least.
MIN_DEPTH = 40
FILTER_KEYS = ("backend", "tree", "language", "kind", "pass", "path")


class KeywordRetriever(BM25Retriever):
    """BM25 over the same words as the index: identifiers in the query are split like the chunks'.

    A query pasting `ttg.convert_layout` or `DescriptorLoadOp` then meets C++ that spells
    `ConvertLayoutOp` or `descriptor_load`. Only chunks sharing a word with the query come back:
    bm25s fills its top-k with zero-score chunks (also chunks masked out by a filter) when fewer
    match, and in a rank fusion those would still earn credit for their rank.
    """

    def _retrieve(self, query_bundle):
        expanded = QueryBundle(f"{query_bundle.query_str} {identifier_words(query_bundle.query_str)}")
        return [hit for hit in super()._retrieve(expanded) if (hit.score or 0.0) > 0.0]


@lru_cache(maxsize=2)
def _model(spec: str):
    return embedding.load(spec)


class _Opened:
    """One build, opened for querying."""

    def __init__(self, build: Build):
        try:
            client = chromadb.PersistentClient(path=str(build.chroma_path),
                                               settings=Settings(anonymized_telemetry=False))
            collection = client.get_collection(COLLECTION)
            self.keyword_base = BM25Retriever.from_persist_dir(str(build.bm25_path), show_progress=False)
        except Exception as error:  # chromadb and bm25s raise many types for damaged files
            raise IndexCorrupt(f"index at {build.path} is unreadable ({type(error).__name__}: {error}); "
                               "rebuild it with `ladder index build --rebuild`") from None
        self.size = collection.count()
        self.index = VectorStoreIndex.from_vector_store(ChromaVectorStore(chroma_collection=collection),
                                                        embed_model=_model(build.manifest["embed"]))

    def retriever(self, depth: int, filters):
        depth = min(depth, self.size)
        retrievers = [self.index.as_retriever(similarity_top_k=depth, filters=filters)]
        try:
            retrievers.append(KeywordRetriever(existing_bm25=self.keyword_base.bm25, similarity_top_k=depth,
                                               filters=filters))
        except ValueError:  # every chunk filtered out: nothing for BM25 to rank
            pass
        # num_queries=1: no query rewriting, so the (mock) LLM is never called.
        return QueryFusionRetriever(retrievers, llm=MockLLM(), mode="reciprocal_rerank", num_queries=1,
                                    use_async=False, similarity_top_k=depth)


@lru_cache(maxsize=2)
def _open(root: str, build_id: str) -> _Opened:
    return _Opened(Store(root).open(build_id))


def _filters(where: dict | None):
    """MetadataFilters from {"backend": "nvidia", "language": ["cpp", "python"], ...}.

    A backend filter also admits code shared by all backends (backend "common").
    """
    if not where:
        return None
    filters = []
    for key, value in where.items():
        if key not in FILTER_KEYS:
            raise ValueError(f"cannot filter on {key!r}: use one of {', '.join(FILTER_KEYS)}")
        values = [value] if isinstance(value, str) else list(value)
        if key == "backend" and "common" not in values:
            values.append("common")
        if len(values) == 1:
            filters.append(MetadataFilter(key=key, value=values[0], operator=FilterOperator.EQ))
        else:
            filters.append(MetadataFilter(key=key, value=values, operator=FilterOperator.IN))
    return MetadataFilters(filters=filters)


def search(query: str, k: int = 5, where: dict | None = None, index_dir: str | None = None) -> list[dict]:
    """The k chunks that best answer `query`, best first.

    Each result: path (relative to its tree), start, end (lines, 1-based inclusive), pass (CLI name
    of the pass the code implements, or None), score, text, tree, language, symbol, backend, kind.
    One chunk per file (five places tell more than five pieces of one file, and measured better on
    bench/index/questions.yaml); a catalog entry or pass description is followed by its code.
    `where` filters on backend / tree / language / kind / pass / path (a value or a list of values).
    """
    if not query.strip():
        raise ValueError("empty query")
    if k < 1:
        raise ValueError("k must be at least 1")
    store = Store(index_dir)
    build_id = store.current_id()
    if build_id is None:
        store.current()  # raises IndexMissing with the message to show
    opened = _open(str(store.root), build_id)
    filters = _filters(where)
    hits = opened.retriever(max(MIN_DEPTH, 4 * k), filters).retrieve(query)
    return [result(hit) for hit in _answer([h for h in hits if _matches(h.node.metadata, filters)], k)]


def _answer(candidates: list, k: int) -> list:
    """The best k candidates, one per file, each followed by the code it points at.

    A catalog entry or a pass description names the files that implement it (`related`); when one
    of those files is among the candidates, its best chunk comes right after the entry instead of
    wherever it ranked on its own: the entry says why, the code says how.
    """
    chosen, files = [], set()

    def take(hit) -> None:
        chosen.append(hit)
        files.add((hit.node.metadata.get("tree"), hit.node.metadata.get("path")))

    def unused(hit) -> bool:
        return (hit.node.metadata.get("tree"), hit.node.metadata.get("path")) not in files

    for hit in candidates:
        if len(chosen) >= k:
            break
        if not unused(hit):
            continue
        take(hit)
        for path in hit.node.metadata.get("related", "").split("; "):
            follower = next((c for c in candidates if c.node.metadata.get("path") == path and unused(c)), None)
            if follower is not None and len(chosen) < k:
                take(follower)
    return chosen


def _matches(metadata: dict, filters) -> bool:
    if filters is None:
        return True
    return all(metadata.get(f.key) in (f.value if isinstance(f.value, list) else [f.value]) for f in filters.filters)
