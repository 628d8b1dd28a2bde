"""The knowledge index: compiler source, pass descriptions, docs and the catalog, on local disk.

Importing this package is cheap; the index and the embedding model load on first use.

    from ladder import indexer
    hits = indexer.search("why is there a ttg.convert_layout in my loop", k=5,
                          where={"backend": "nvidia"}, min_score=indexer.MIN_RELEVANCE)
    # [{"path", "start", "end", "pass", "score", "text", "tree", "language", "symbol", ...}, ...]
"""
from __future__ import annotations


def __getattr__(name: str):
    """`ladder.indexer.MIN_RELEVANCE`: the score below which a result is noise (indexer.rerank), loaded lazily."""
    if name == "MIN_RELEVANCE":
        from ladder.indexer.rerank import MIN_RELEVANCE

        return MIN_RELEVANCE
    raise AttributeError(name)


def search(query: str, k: int = 5, where: dict | None = None, index_dir: str | None = None,
           min_score: float = 0.0) -> list[dict]:
    """The k files of the index that best answer `query`, best first (see indexer.retrieve.search)."""
    from ladder.indexer.retrieve import search as _search

    return _search(query, k=k, where=where, index_dir=index_dir, min_score=min_score)


__all__ = ["MIN_RELEVANCE", "search"]
