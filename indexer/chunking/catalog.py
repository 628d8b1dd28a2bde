"""Catalog entries (`kb/patterns/*.yaml`): one chunk per entry, whether a file holds one or many.

An entry is a mapping with an `id`; its `backend` field travels with the chunk so that
`--backend nvidia` finds NVIDIA patterns even though the path does not say so, and the files its
`compiler` list names travel as `related`, so that a query answered by the entry can bring the
compiler code behind it. A file that is not
valid YAML (an entry being edited) is still indexed, as plain text.
"""
from __future__ import annotations

import yaml

from ladder.indexer.chunking.base import Chunk, Unit, line_windows, pack

# Entries are documents: keep one whole unless it is very long.
ENTRY_MAX_CHARS = 6000


def _entries(node) -> list:
    """The shallowest mapping nodes that have an `id` key."""
    if isinstance(node, yaml.MappingNode):
        keys = {k.value for k, _ in node.value if isinstance(k, yaml.ScalarNode)}
        if "id" in keys:
            return [node]
        return [entry for _, value in node.value for entry in _entries(value)]
    if isinstance(node, yaml.SequenceNode):
        return [entry for item in node.value for entry in _entries(item)]
    return []


def _compiler_paths(node) -> str:
    """The files named by an entry's `compiler` list (`- path: lib/...cpp` or plain strings)."""
    paths = []
    for key, value in node.value:
        if isinstance(key, yaml.ScalarNode) and key.value == "compiler" and isinstance(value, yaml.SequenceNode):
            for item in value.value:
                if isinstance(item, yaml.ScalarNode):
                    paths.append(item.value)
                elif isinstance(item, yaml.MappingNode):
                    paths.extend(v.value for k, v in item.value
                                 if isinstance(v, yaml.ScalarNode) and getattr(k, "value", "") == "path")
    return "; ".join(dict.fromkeys(p for p in paths if "/" in p or "." in p))


def _field(node, name: str) -> str:
    for key, value in node.value:
        if isinstance(key, yaml.ScalarNode) and key.value == name and isinstance(value, yaml.ScalarNode):
            return str(value.value)
    return ""


def chunk_catalog(text: str) -> list[Chunk]:
    lines = text.split("\n")
    try:
        entries = [entry for document in yaml.compose_all(text) for entry in _entries(document)]
    except yaml.YAMLError:
        entries = []
    if not entries:
        return pack(line_windows(0, len(lines) - 1, lines, ENTRY_MAX_CHARS, ""), lines, "catalog",
                    max_chars=ENTRY_MAX_CHARS)
    chunks = []
    for entry in entries:
        start, end = entry.start_mark.line, entry.end_mark.line
        # end_mark sits after the entry's last line break (column 0 of the next line).
        if entry.end_mark.column == 0 and end > start:
            end -= 1
        while end > start and not lines[end].strip():
            end -= 1
        # A list item's `- ` belongs to the entry's first line.
        entry_id, backend, related = _field(entry, "id"), _field(entry, "backend"), _compiler_paths(entry)
        for chunk in pack([Unit(start, end, entry_id)], lines, "catalog", max_chars=ENTRY_MAX_CHARS):
            chunks.append(Chunk(chunk.start, chunk.end, chunk.text, chunk.symbol, "catalog", backend, related))
    return chunks
