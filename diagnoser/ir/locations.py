"""Source positions in compiler output, and the one a user should be pointed at.

Triton records where every op came from: MLIR `loc(...)` attributes in TTIR/TTGIR/ttadapter
(file:line:col, wrapped in name locations and call sites when a helper was inlined), `.loc`
directives in PTX (with the inlining chain in a trailing comment), `//## File` lines in SASS.
Each becomes a chain of `Frame`s, innermost first; `user_frame` picks the innermost frame that is
not inside triton's own library (`tl.sum` lives in triton/language/standard.py, but the user wants
the line that called it).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

# Triton's own library; Triton-Ascend patches parts of it under triton/triton_patch/.
LIBRARY_MARKERS = ("/triton/language/", "/triton/runtime/", "/triton/experimental/", "/triton/compiler/",
                   "/triton/triton_patch/")


@dataclass(frozen=True)
class Frame:
    file: str
    line: int
    col: int = 0

    @property
    def is_library(self) -> bool:
        return any(marker in self.file for marker in LIBRARY_MARKERS)


def user_frame(frames: list[Frame] | tuple[Frame, ...]) -> Frame | None:
    """The innermost frame outside triton's library (the innermost one if all are inside)."""
    for frame in frames:
        if not frame.is_library:
            return frame
    return frames[0] if frames else None


_FILE_LINE_COL = re.compile(r'^"((?:[^"\\]|\\.)*)":(\d+):(\d+)')


class MlirLocations:
    """Resolves MLIR location expressions of one module, following `#locN` aliases."""

    def __init__(self, aliases: dict[str, str]) -> None:
        self._aliases = aliases  # "#loc12" -> the expression inside loc(...)
        self._cache: dict[str, tuple[Frame, ...]] = {}

    def frames(self, expression: str) -> tuple[Frame, ...]:
        """Innermost-first frames of a location expression (the text inside `loc(...)`)."""
        expression = expression.strip()
        if expression in self._cache:
            return self._cache[expression]
        self._cache[expression] = ()  # guards against alias cycles
        result = self._resolve(expression)
        self._cache[expression] = result
        return result

    def _resolve(self, expression: str) -> tuple[Frame, ...]:
        if expression.startswith("#loc"):
            return self.frames(self._aliases.get(expression, "unknown"))
        if expression.startswith("loc(") and expression.endswith(")"):
            return self.frames(expression[4:-1])
        if match := _FILE_LINE_COL.match(expression):
            return (Frame(match.group(1), int(match.group(2)), int(match.group(3))),)
        if expression.startswith("callsite("):
            callee, caller = _split_callsite(expression[len("callsite("):-1])
            return self.frames(callee) + self.frames(caller)
        if expression.startswith("fused"):
            inner = expression[expression.index("[") + 1:expression.rindex("]")]
            for part in _split_top_level(inner, ","):
                if frames := self.frames(part):
                    return frames
            return ()
        if expression.startswith('"'):  # a name location: "name"(inner)
            end = _closing_quote(expression)
            rest = expression[end + 1:].strip()
            return self.frames(rest[1:-1]) if rest.startswith("(") else ()
        return ()  # unknown


def _closing_quote(text: str) -> int:
    index = 1
    while index < len(text):
        if text[index] == "\\":
            index += 2
            continue
        if text[index] == '"':
            return index
        index += 1
    return len(text) - 1


def _split_top_level(text: str, separator: str) -> list[str]:
    parts, depth, start, in_string = [], 0, 0, False
    for index, char in enumerate(text):
        if char == '"' and (index == 0 or text[index - 1] != "\\"):
            in_string = not in_string
        elif not in_string and char in "([<{":
            depth += 1
        elif not in_string and char in ")]>}":
            depth -= 1
        elif not in_string and depth == 0 and text.startswith(separator, index):
            parts.append(text[start:index])
            start = index + len(separator)
    parts.append(text[start:])
    return [part.strip() for part in parts]


def _split_callsite(text: str) -> tuple[str, str]:
    parts = _split_top_level(text, " at ")
    return parts[0], " at ".join(parts[1:])


def trailing_loc(line: str) -> str | None:
    """The expression of the `loc(...)` that ends an MLIR line, if any."""
    stripped = line.rstrip()
    if not stripped.endswith(")"):
        return None
    depth, in_string = 0, False
    for index in range(len(stripped) - 1, -1, -1):
        char = stripped[index]
        if char == '"' and (index == 0 or stripped[index - 1] != "\\"):
            in_string = not in_string
        elif in_string:
            continue
        elif char == ")":
            depth += 1
        elif char == "(":
            depth -= 1
            if depth == 0:
                return stripped[index + 1:-1] if stripped[:index].endswith("loc") else None
    return None
