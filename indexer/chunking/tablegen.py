"""TableGen (.td) files: one chunk per record, and the pass definitions as first-class documents.

`def X : Pass<"cli-name", ...> { let summary ...; let description = [{ ... }]; }` is the only
place where a pass says in prose what it does, so every pass record is kept whole as one `pass`
chunk. Op records (`def TTG_ConvertLayoutOp : TTG_Op<"convert_layout", ...>`) become `op` chunks:
they are where an op pasted from an IR dump is described.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ladder.indexer.chunking.base import Chunk, Unit, pack

_RECORD_START = re.compile(r"(def|class|multiclass|defm|defvar|defset|let|foreach)\b")
_HEADER = re.compile(r"\s*(?:def|class|multiclass|defm)\s+(\w+)\s*(?:<[^:{;]*?>)?\s*:?\s*([\w:]+)?\s*(?:<\s*(?:/\*.*?\*/\s*)?\"([^\"]*)\")?")
_PASS_BASES = {"Pass", "InterfacePass"}


@dataclass(frozen=True)
class Record:
    start: int  # 0-based first line
    end: int  # 0-based last line, inclusive
    name: str  # def name, "" for anonymous `let ... in {}` blocks
    base: str  # first parent class: Pass, TTG_Op, ...
    mnemonic: str  # first string template argument: the pass CLI name or the op mnemonic

    @property
    def is_pass(self) -> bool:
        return self.base in _PASS_BASES


def _record_ends(text: str) -> list[tuple[int, int]]:
    """(start offset, end offset) of every top-level record, skipping comments, strings and [{ }]."""
    spans: list[tuple[int, int]] = []
    depth, start, i, n = 0, None, 0, len(text)
    at_line_start = True
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            i = text.find("\n", i)
            i = n if i < 0 else i
            continue
        if text.startswith("/*", i):
            close = text.find("*/", i + 2)
            i = n if close < 0 else close + 2
            continue
        if c == '"':
            close = text.find('"', i + 1)
            i = n if close < 0 else close + 1
            continue
        if text.startswith("[{", i):
            close = text.find("}]", i + 2)
            i = n if close < 0 else close + 2
            continue
        if start is None and depth == 0 and (at_line_start or text[i - 1] in " \t;}"):
            if _RECORD_START.match(text, i) and (i == 0 or not text[i - 1].isalnum()):
                start = i
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0 and start is not None:
                # A record ends at its closing brace, or at a `;` right after it (`};`).
                end = i + 1
                rest = text[end:end + 2].lstrip(" \t")
                if rest.startswith(";"):
                    end = text.index(";", end) + 1
                spans.append((start, end))
                start, i = None, end
                continue
        elif c == ";" and depth == 0 and start is not None:
            spans.append((start, i + 1))
            start = None
        at_line_start = c == "\n" or (at_line_start and c in " \t")
        i += 1
    if start is not None:
        spans.append((start, n))
    return spans


def records(text: str) -> list[Record]:
    """The top-level records of a TableGen file, with their line ranges."""
    result = []
    for start, end in _record_ends(text):
        first = text.count("\n", 0, start)
        last = text.count("\n", 0, max(start, end - 1))
        header = _HEADER.match(text, start)
        name, base, mnemonic = (header.group(1), header.group(2) or "", header.group(3) or "") if header else ("", "", "")
        result.append(Record(first, last, name, base.split("::")[-1], mnemonic))
    return result


def _units(text: str, lines: list[str]) -> list[tuple[Unit, Record | None]]:
    """Units covering the file: each record (with the comments just above it) and the lines between."""
    units: list[tuple[Unit, Record | None]] = []
    row = 0
    comment_start: int | None = None
    for rec in records(text):
        for gap_row in range(row, rec.start):
            if lines[gap_row].strip().startswith("//"):
                comment_start = gap_row if comment_start is None else comment_start
                continue
            if comment_start is not None:
                units.append((Unit(comment_start, gap_row - 1), None))
                comment_start = None
            units.append((Unit(gap_row, gap_row), None))
        start = rec.start if comment_start is None else comment_start
        comment_start = None
        symbol = rec.name + (f" ({rec.mnemonic})" if rec.mnemonic else "")
        units.append((Unit(start, rec.end, symbol), rec))
        row = rec.end + 1
    if row < len(lines):
        units.append((Unit(comment_start if comment_start is not None else row, len(lines) - 1), None))
    return units


def chunk_tablegen(text: str) -> list[Chunk]:
    """Pass records whole (one document per pass), op records one each, the rest packed like code."""
    lines = text.split("\n")
    chunks: list[Chunk] = []
    pending: list[Unit] = []

    def flush() -> None:
        chunks.extend(pack(pending, lines, "code"))
        pending.clear()

    for unit, record in _units(text, lines):
        if record is not None and record.is_pass:
            flush()
            text_of = "\n".join(lines[unit.start:unit.end + 1])
            chunks.append(Chunk(unit.start + 1, unit.end + 1, text_of, record.name, "pass"))
        elif record is not None and record.base.endswith("Op") and record.mnemonic:
            flush()
            chunks.extend(pack([unit], lines, "op"))
        else:
            pending.append(unit)
    flush()
    return chunks
