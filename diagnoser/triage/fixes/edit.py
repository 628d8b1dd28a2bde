"""Text edits located by `ast` nodes, applied to the original source so that everything a fix does
not touch (comments, spacing, line breaks) stays exactly as the user wrote it."""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Iterable, Optional


class NotApplicable(Exception):
    """The fix does not apply to this kernel as written (the message says why, in one line)."""


@dataclass(frozen=True)
class Edit:
    start: int          # character offsets into the source
    end: int
    text: str


def line_offsets(source: str) -> list[int]:
    offsets, total = [0], 0
    for line in source.splitlines(keepends=True):
        total += len(line)
        offsets.append(total)
    return offsets


def position(source: str, line: int, col_bytes: int, offsets: Optional[list[int]] = None) -> int:
    """Character offset of (1-based line, UTF-8 byte column), as `ast` reports positions."""
    offsets = offsets or line_offsets(source)
    text = source.splitlines(keepends=True)[line - 1] if line - 1 < len(source.splitlines()) else ""
    col = len(text.encode("utf-8")[:col_bytes].decode("utf-8", errors="ignore"))
    return offsets[line - 1] + col


def span(source: str, node: ast.AST) -> tuple[int, int]:
    offsets = line_offsets(source)
    return (position(source, node.lineno, node.col_offset, offsets),
            position(source, node.end_lineno, node.end_col_offset, offsets))


def replace(source: str, node: ast.AST, text: str) -> Edit:
    start, end = span(source, node)
    return Edit(start, end, text)


def insert_before_line(source: str, line: int, text: str) -> Edit:
    offset = line_offsets(source)[line - 1]
    return Edit(offset, offset, text)


def remove_statement(source: str, node: ast.stmt) -> Edit:
    """Remove a whole-line statement including its newline."""
    offsets = line_offsets(source)
    return Edit(offsets[node.lineno - 1], offsets[node.end_lineno], "")


def apply(source: str, edits: Iterable[Edit]) -> str:
    ordered = sorted(set(edits), key=lambda e: (e.start, e.end))
    for before, after in zip(ordered, ordered[1:]):
        if after.start < before.end:
            raise NotApplicable("overlapping edits")
    result = source
    for edit in reversed(ordered):
        result = result[:edit.start] + edit.text + result[edit.end:]
    try:
        ast.parse(result)
    except SyntaxError as error:  # a bug in a fix, never the user's fault: keep the source unchanged
        raise NotApplicable(f"rewrite would not parse (line {error.lineno}): {error.msg}") from None
    return result


def indentation(source: str, line: int) -> str:
    text = source.splitlines()[line - 1]
    return text[: len(text) - len(text.lstrip())]


def segment(source: str, node: ast.AST) -> str:
    return ast.get_source_segment(source, node) or ""


def method_call(source: str, node: ast.AST, method: str) -> str:
    """`node.method`, as source text: parenthesised unless `node` is a name, attribute, call or subscript."""
    text = segment(source, node)
    atom = isinstance(node, (ast.Name, ast.Attribute, ast.Call, ast.Subscript))
    return f"{text}.{method}" if atom else f"({text}).{method}"
