"""A chunk as stored (a plain dict) and as a result.

The stored record is `{"id", "text", "metadata"}`; chunks.jsonl holds them in the order of the
rows of the keyword index. Its `embed_hash` is the hash of what the dense model reads of it
(`ladder.indexer.text.dense_text`), so a rebuild re-embeds a chunk only when that text changed.
"""
from __future__ import annotations

import hashlib

from ladder.indexer.text import dense_text

# Metadata every record carries; keys with an empty value are left out of the record.
# `summary` is the one-line summary of the pass in `pass`, for the dense text.
KEYS = ("tree", "path", "start", "end", "language", "symbol", "kind", "pass", "summary", "backend", "version",
        "related", "embed_hash")


def make_record(chunk_id: str, text: str, metadata: dict) -> dict:
    metadata = {k: v for k, v in metadata.items() if v not in ("", None)}
    metadata["embed_hash"] = hashlib.sha256(dense_text(metadata, text).encode("utf-8")).hexdigest()[:24]
    return {"id": chunk_id, "text": text, "metadata": metadata}


def result(record: dict, score: float) -> dict:
    """What `search` and `ladder query --json` return for one hit."""
    metadata = record["metadata"]
    return {
        "path": metadata.get("path", ""),
        "start": int(metadata.get("start", 0)),
        "end": int(metadata.get("end", 0)),
        "pass": metadata.get("pass") or None,
        "score": round(float(score), 6),
        "text": record["text"],
        "tree": metadata.get("tree", ""),
        "language": metadata.get("language", ""),
        "symbol": metadata.get("symbol", ""),
        "backend": metadata.get("backend", ""),
        "kind": metadata.get("kind", ""),
    }
