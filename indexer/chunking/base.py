"""What every chunker produces, and the greedy packing they share.

A chunk is a run of whole lines of one file. Chunkers turn a file into *units* (a definition with
its leading comments, a Markdown section, a TableGen record) and `pack` groups neighbouring units
into chunks of at most `max_chars`, descending into a unit that is too big by itself. Keeping chunks
line-exact means `path:start-end` in a query result always points at exactly the text shown.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

# Large enough to hold a typical MLIR rewrite pattern or pass driver whole, small enough that the
# embedded text stays focused (the dense model reads the first few hundred tokens of each chunk).
MAX_CHARS = 1800


@dataclass(frozen=True)
class Chunk:
    start: int  # first line, 1-based
    end: int  # last line, inclusive
    text: str
    symbol: str = ""
    kind: str = "code"  # code | pass | op | doc | catalog
    backend: str = ""  # set where the text itself says (a catalog entry); else from the path
    related: str = ""  # files the text points at ("; "-separated): a catalog entry's compiler code


@dataclass
class Unit:
    """A candidate piece of a file: lines [start, end] (0-based, inclusive)."""

    start: int
    end: int
    symbol: str = ""
    # Finer units to use when this one is too big on its own; called lazily.
    split: Callable[[], list["Unit"]] | None = field(default=None, repr=False)
    # The symbol enclosing this unit when it has none of its own (a statement inside a function).
    scope: str = ""
    # A container that names nothing itself (a namespace, an #ifdef): always replaced by its
    # children, so that the definitions inside name the chunk.
    transparent: bool = False


def line_windows(start: int, end: int, lines: Sequence[str], max_chars: int, symbol: str) -> list[Unit]:
    """Cut lines [start, end] into consecutive windows of at most max_chars (at least one line each)."""
    units: list[Unit] = []
    window_start, size = start, 0
    for row in range(start, end + 1):
        line_size = len(lines[row]) + 1
        if size and size + line_size > max_chars:
            units.append(Unit(window_start, row - 1, symbol))
            window_start, size = row, 0
        size += line_size
    units.append(Unit(window_start, end, symbol))
    return units


def _size(unit: Unit, lines: Sequence[str]) -> int:
    return sum(len(lines[row]) + 1 for row in range(unit.start, unit.end + 1))


def _join_symbols(units: list[Unit]) -> str:
    named = list(dict.fromkeys(u.symbol or u.scope for u in units if u.symbol or u.scope))
    if len(named) > 3:
        return ", ".join(named[:3]) + f" (+{len(named) - 3})"
    return ", ".join(named)


def _finer(unit: Unit, lines: Sequence[str], max_chars: int) -> list[Unit]:
    """Smaller units covering `unit`, or [] when it cannot be cut (a single over-long line)."""
    def trivial(units: list[Unit]) -> bool:
        return not units or (len(units) == 1 and (units[0].start, units[0].end) == (unit.start, unit.end))

    finer = unit.split() if unit.split else []
    if trivial(finer):
        finer = line_windows(unit.start, unit.end, lines, max_chars, unit.symbol)
    return [] if trivial(finer) else finer


def _flatten(units: list[Unit], lines: Sequence[str], max_chars: int, scope: str) -> list[Unit]:
    """Replace every unit bigger than max_chars by its finer units, recursively, in place."""
    flat: list[Unit] = []
    for unit in units:
        inner_scope = unit.symbol or unit.scope or scope
        if unit.transparent and unit.split:
            finer = unit.split()
            if finer:
                flat.extend(_flatten(finer, lines, max_chars, inner_scope))
                continue
        if _size(unit, lines) > max_chars:
            finer = _finer(unit, lines, max_chars)
            if finer:
                flat.extend(_flatten(finer, lines, max_chars, inner_scope))
                continue
        unit.scope = inner_scope
        flat.append(unit)
    return flat


def pack(units: list[Unit], lines: Sequence[str], kind: str, max_chars: int = MAX_CHARS) -> list[Chunk]:
    """Group neighbouring units greedily into chunks of at most max_chars.

    A unit bigger than max_chars is first replaced by its finer units (or by line windows when it
    has none), so no chunk exceeds the budget unless a single line does, and the small pieces
    around a big definition (a namespace opening, a class header) join their neighbours.
    """
    chunks: list[Chunk] = []
    group: list[Unit] = []
    group_size = 0

    def flush() -> None:
        nonlocal group, group_size
        if group:
            start, end = group[0].start, group[-1].end
            text = "\n".join(lines[start:end + 1])
            if text.strip():
                chunks.append(Chunk(start + 1, end + 1, text, _join_symbols(group), kind))
        group, group_size = [], 0

    for unit in _flatten(units, lines, max_chars, ""):
        size = _size(unit, lines)
        # Units are contiguous in the file; the gap between them (blank lines) counts too.
        gap = sum(len(lines[row]) + 1 for row in range(group[-1].end + 1, unit.start)) if group else 0
        # A new definition starts a new chunk once the current one is half full, so chunks
        # rarely end with the first lines of an unrelated function.
        starts_definition = bool(unit.symbol) and group_size >= max_chars // 2
        if group and (group_size + gap + size > max_chars or starts_definition):
            flush()
            gap = 0
        group.append(unit)
        group_size += gap + size
    flush()
    return chunks
