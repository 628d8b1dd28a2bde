"""A chunk as stored (a plain dict) and as llama-index sees it (a TextNode).

The stored record is `{"id", "text", "metadata"}`. Two node views are made from it with the same
id, text and metadata (so llama-index's fusion recognises them as one node):
- for the dense model, the text is preceded by `path`, `symbol`, `pass` and `related` lines;
- for BM25, also by `terms`: the words inside identifiers (`ConvertLayoutOp` -> convert layout
  op), so that a query saying "convert_layout" or "layout conversion" finds C++ that only spells
  `ConvertLayoutOp`, and pass documents are found by their Python name (`add_coalesce`).
"""
from __future__ import annotations

import hashlib
import re

# Metadata every record carries; keys with an empty value are left out of the record.
KEYS = ("tree", "path", "start", "end", "language", "symbol", "kind", "pass", "backend", "version",
        "related", "terms", "embed_hash")
_EMBEDDED = ("path", "symbol", "pass", "related")
_KEYWORDS = _EMBEDDED + ("terms",)

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def identifier_words(text: str) -> str:
    """Lower-case words inside compound identifiers (snake_case, CamelCase), each once."""
    words: dict[str, None] = {}
    for identifier in set(_IDENTIFIER.findall(text)):
        parts = _PART.findall(identifier)
        if len(parts) > 1:
            for part in parts:
                if len(part) > 1:
                    words[part.lower()] = None
    return " ".join(sorted(words))


def make_record(chunk_id: str, text: str, metadata: dict) -> dict:
    metadata = {k: v for k, v in metadata.items() if v not in ("", None)}
    embedded = "\n".join(f"{k}: {metadata[k]}" for k in _EMBEDDED if k in metadata) + "\n\n" + text
    metadata["embed_hash"] = hashlib.sha256(embedded.encode("utf-8")).hexdigest()[:24]
    return {"id": chunk_id, "text": text, "metadata": metadata}


def to_node(record: dict, keywords: bool = False):
    """The TextNode for a record: the dense view, or (keywords=True) the BM25 view."""
    from llama_index.core.schema import TextNode

    shown = _KEYWORDS if keywords else _EMBEDDED
    hidden = [k for k in KEYS if k not in shown]
    return TextNode(id_=record["id"], text=record["text"], metadata=dict(record["metadata"]),
                    excluded_embed_metadata_keys=hidden, excluded_llm_metadata_keys=hidden)


def result(node_with_score) -> dict:
    """What `search` and `ladder query --json` return for one hit."""
    metadata = node_with_score.node.metadata
    return {
        "path": metadata.get("path", ""),
        "start": int(metadata.get("start", 0)),
        "end": int(metadata.get("end", 0)),
        "pass": metadata.get("pass") or None,
        "score": round(float(node_with_score.score or 0.0), 6),
        "text": node_with_score.node.get_content(),
        "tree": metadata.get("tree", ""),
        "language": metadata.get("language", ""),
        "symbol": metadata.get("symbol", ""),
        "backend": metadata.get("backend", ""),
        "kind": metadata.get("kind", ""),
    }
