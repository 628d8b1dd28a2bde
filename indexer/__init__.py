"""The knowledge index: compiler source, pass descriptions and the catalog, in a local chromadb.

Importing this package is cheap; llama-index, chromadb and the embedding model load on first use.

    import indexer
    hits = indexer.search("why is there a ttg.convert_layout in my loop", k=5,
                          where={"backend": "nvidia"})
    # [{"path", "start", "end", "pass", "score", "text", "tree", "language", "symbol", ...}, ...]
"""
from __future__ import annotations


def search(query: str, k: int = 5, where: dict | None = None, index_dir: str | None = None) -> list[dict]:
    """The k chunks of the index that best answer `query`, best first (see indexer.retrieve.search)."""
    from indexer.retrieve import search as _search

    return _search(query, k=k, where=where, index_dir=index_dir)


__all__ = ["search"]
