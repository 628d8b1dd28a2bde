"""Markdown by section: a chunk is one or more whole sections, named by their heading path.

A section too big for one chunk is cut at paragraph boundaries (never inside a fenced code block),
and every piece keeps the heading path as its symbol, so a hit in the middle of a long guide still
says which part of the guide it is.
"""
from __future__ import annotations

import re

from ladder.indexer.chunking.base import Chunk, Unit, pack

_HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^ {0,3}(```|~~~)")


def _headings(lines: list[str]) -> list[tuple[int, int, str]]:
    """(row, level, title) of every ATX heading outside fenced code blocks."""
    found, fence = [], None
    for row, line in enumerate(lines):
        marker = _FENCE.match(line)
        if marker:
            fence = None if fence == marker.group(1) else (fence or marker.group(1))
            continue
        if fence is None:
            heading = _HEADING.match(line)
            if heading:
                found.append((row, len(heading.group(1)), heading.group(2)))
    return found


def _paragraphs(start: int, end: int, lines: list[str], symbol: str) -> list[Unit]:
    """Blocks of lines separated by blank lines, with fenced code blocks kept whole."""
    units, block_start, fence = [], None, None
    for row in range(start, end + 1):
        line = lines[row]
        marker = _FENCE.match(line)
        if marker:
            fence = None if fence == marker.group(1) else (fence or marker.group(1))
        blank = not line.strip() and fence is None
        if blank:
            if block_start is not None:
                units.append(Unit(block_start, row - 1, symbol))
                block_start = None
        elif block_start is None:
            block_start = row
    if block_start is not None:
        units.append(Unit(block_start, end, symbol))
    return units


def chunk_markdown(text: str, kind: str = "doc") -> list[Chunk]:
    lines = text.split("\n")
    headings = _headings(lines)
    units: list[Unit] = []
    if not headings or headings[0][0] > 0:
        first = headings[0][0] - 1 if headings else len(lines) - 1
        units.append(Unit(0, first, "", lambda: _paragraphs(0, first, lines, "")))
    path: list[tuple[int, str]] = []
    for index, (row, level, title) in enumerate(headings):
        path = [(lvl, t) for lvl, t in path if lvl < level] + [(level, title)]
        end = headings[index + 1][0] - 1 if index + 1 < len(headings) else len(lines) - 1
        symbol = " > ".join(t for _, t in path)
        units.append(Unit(row, end, symbol,
                          lambda row=row, end=end, symbol=symbol: _paragraphs(row, end, lines, symbol)))
    # Trailing blank lines of a section are not part of its text.
    trimmed = []
    for unit in units:
        end = unit.end
        while end > unit.start and not lines[end].strip():
            end -= 1
        trimmed.append(Unit(unit.start, end, unit.symbol, unit.split))
    return pack(trimmed, lines, kind)
