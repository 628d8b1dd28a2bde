"""A reader for the PTX Triton emits (with `-lineinfo`-style `.loc` directives).

Every instruction gets the source frames of the `.loc` before it (the inlining chain comes from
the `@[ file:line:col ]` comment LLVM appends) and its loop depth. Loops are found the way LLVM
marks them: a label commented `Loop Header: Depth=N` and the last branch back to it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import PurePosixPath

from ladder.diagnoser.ir.locations import Frame, user_frame

_FILE = re.compile(r'^\.file\s+(\d+)\s+"([^"]*)"(?:\s*,\s*\d+\s*,\s*\d+)?(?:\s+"([^"]*)")?')
_LOC = re.compile(r"^\.loc\s+(\d+)\s+(\d+)\s+(\d+)")
_CHAIN = re.compile(r"([^\s@\[\]]+):(\d+):(\d+)")
_LABEL = re.compile(r"^(\$?[\w.$]+):(.*)$")
_BRANCH = re.compile(r"\bbra(?:\.uni)?\s+(\$?[\w.$]+)\s*;")


@dataclass
class Instruction:
    index: int
    line_no: int                    # 1-based line in the PTX text
    text: str                       # stripped, without the trailing comment
    opcode: str                     # ld.global.v4.b32, bar.sync, wgmma.mma_async...
    frames: tuple[Frame, ...] = ()
    loops: tuple[int, ...] = ()     # indices (into Ptx.loops) of the loops around it

    @property
    def frame(self) -> Frame | None:
        return user_frame(self.frames)

    @property
    def in_loop(self) -> bool:
        return bool(self.loops)


@dataclass
class Loop:
    label: str
    start: int                      # first instruction index in the loop
    end: int                        # index of the branch back to the header
    depth: int
    frames: tuple[Frame, ...] = ()  # where the header's first instruction came from


@dataclass
class Ptx:
    instructions: list[Instruction]
    loops: list[Loop]
    files: dict[int, str] = field(default_factory=dict)

    def at(self, file: str, line: int, col: int | None = None) -> list[Instruction]:
        """Instructions whose innermost user frame is this source position."""
        return [instruction for instruction in self._by_line.get((file, line), ())
                if col is None or instruction.frame.col == col]

    @cached_property
    def _by_line(self) -> dict[tuple[str, int], list[Instruction]]:
        """Instructions by their user frame's (file, line), in order: rules ask `at` for every source
        position they check, and a scan of a GEMM's ten thousand instructions each time added up to
        seconds per kernel."""
        found: dict[tuple[str, int], list[Instruction]] = {}
        for instruction in self.instructions:
            if frame := instruction.frame:
                found.setdefault((frame.file, frame.line), []).append(instruction)
        return found


def _opcode(text: str) -> str:
    text = re.sub(r"^@!?%\w+\s+", "", text)
    return text.split(None, 1)[0].rstrip(";") if text else ""


def parse(text: str) -> Ptx:
    lines = text.splitlines()
    files: dict[int, str] = {}
    for line in lines:
        if match := _FILE.match(line.strip()):
            directory, name = match.group(2), match.group(3)
            files[int(match.group(1))] = str(PurePosixPath(directory) / name) if name else directory
    by_basename: dict[str, str] = {}
    for path in files.values():
        by_basename.setdefault(PurePosixPath(path).name, path)

    instructions: list[Instruction] = []
    labels: dict[str, tuple[int, int | None]] = {}  # label -> (next instruction index, loop depth)
    frames: tuple[Frame, ...] = ()
    for line_no, raw in enumerate(lines, start=1):
        line = raw.strip()
        code, _, comment = line.partition("//")
        code = code.strip()
        if line.startswith(".loc"):
            if match := _LOC.match(line):
                file = files.get(int(match.group(1)), match.group(1))
                innermost = Frame(file, int(match.group(2)), int(match.group(3)))
                callers = _CHAIN.findall(comment.split("@[", 1)[1]) if "@[" in comment else []
                frames = (innermost, *(Frame(by_basename.get(name, name), int(row), int(col))
                                       for name, row, col in callers))
            continue
        if not code or code.startswith((".", "{", "}", "(", ")")):
            continue
        if match := _LABEL.match(code):
            depth = re.search(r"Loop Header: Depth=(\d+)", comment)
            labels[match.group(1)] = (len(instructions), int(depth.group(1)) if depth else None)
            continue
        instructions.append(Instruction(index=len(instructions), line_no=line_no, text=code,
                                        opcode=_opcode(code), frames=frames))

    loops: list[Loop] = []
    for label, (start, depth) in labels.items():
        if depth is None:
            continue
        back_edges = [ins.index for ins in instructions if ins.index >= start and
                      (branch := _BRANCH.search(ins.text)) and branch.group(1) == label]
        if back_edges:
            header = instructions[start] if start < len(instructions) else None
            loops.append(Loop(label, start, max(back_edges), depth, header.frames if header else ()))
    for instruction in instructions:
        instruction.loops = tuple(number for number, loop in enumerate(loops)
                                  if loop.start <= instruction.index <= loop.end)
    return Ptx(instructions=instructions, loops=loops, files=files)


# ---------------------------------------------------------------------------------------------
# What an instruction moves
# ---------------------------------------------------------------------------------------------

_GLOBAL = re.compile(r"^(ld|st|red|atom)\.global((?:\.[\w:]+)*)$")


def global_access_bits(opcode: str) -> tuple[str, int] | None:
    """(`load`|`store`|`atomic`, bits per access) of ld/st/red/atom.global, else None."""
    match = _GLOBAL.match(opcode)
    if not match:
        return None
    kind = {"ld": "load", "st": "store"}.get(match.group(1), "atomic")
    parts = match.group(2).split(".")
    vector = next((int(part[1:]) for part in parts if re.fullmatch(r"v\d", part)), 1)
    width = next((int(m.group(1)) for part in reversed(parts) if (m := re.fullmatch(r"[bufs](\d+)", part))), None)
    return (kind, vector * width) if width else None


def async_copy_bits(instruction: Instruction) -> int | None:
    """Bits per cp.async (global -> shared) from its copy size operand, else None."""
    if not instruction.opcode.startswith("cp.async.") or ".shared.global" not in instruction.opcode:
        return None
    match = re.search(r"\],\s*(0x[0-9a-fA-F]+|\d+)", instruction.text)
    return int(match.group(1), 0) * 8 if match else None
