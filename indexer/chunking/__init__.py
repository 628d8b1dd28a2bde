"""Turn one source file into line-exact chunks, by language.

`LANGUAGES` decides which files are indexed at all (by suffix); `chunk` dispatches to the chunker
for the language. Chunks with no content worth finding (a lone `}` or `#endif`) are dropped.
"""
from __future__ import annotations

import re

from ladder.indexer.chunking.base import Chunk

LANGUAGES = {
    ".cpp": "cpp", ".cc": "cpp", ".cxx": "cpp", ".h": "cpp", ".hpp": "cpp", ".c": "c",
    ".py": "python",
    ".td": "tablegen",
    ".md": "markdown",
    ".yaml": "yaml", ".yml": "yaml",
}
_WORD = re.compile(r"[A-Za-z_]\w+")


def chunk(text: str, language: str) -> list[Chunk]:
    if language in ("cpp", "c", "python"):
        from ladder.indexer.chunking.code import chunk_code

        chunks = chunk_code(text, "python" if language == "python" else "cpp")
    elif language == "tablegen":
        from ladder.indexer.chunking.tablegen import chunk_tablegen

        chunks = chunk_tablegen(text)
    elif language == "markdown":
        from ladder.indexer.chunking.markdown import chunk_markdown

        chunks = chunk_markdown(text)
    elif language == "yaml":
        from ladder.indexer.chunking.catalog import chunk_catalog

        chunks = chunk_catalog(text)
    else:
        raise ValueError(f"no chunker for language {language!r}")
    return [c for c in chunks if len(_WORD.findall(c.text)) >= 3]


__all__ = ["Chunk", "LANGUAGES", "chunk"]
