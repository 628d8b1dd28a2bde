"""A reader for SASS as `nvdisasm -g` prints it: instructions with the source line above them.

SASS line info carries no inlining chain, so code inlined from triton's library (tl.sum's
combine function) is attributed to the library file; facts read from SASS (HGMMA vs HMMA, STL/LDL
spills) are about user-level ops and land on user lines in practice.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ladder.diagnoser.ir.locations import Frame

_FILE = re.compile(r'//## File "([^"]+)", line (\d+)')
_INSTRUCTION = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
_LABEL = re.compile(r"^(\.L_[\w]+):")
_BRANCH = re.compile(r"\bBRA\b.*?`?\(?(\.L_[\w]+)\)?")


@dataclass
class SassInstruction:
    index: int
    address: int
    text: str
    opcode: str                      # LDG.E.128, HGMMA.64x128x16.F32, STL, BAR.SYNC...
    frame: Frame | None
    in_loop: bool = False


def _opcode(text: str) -> str:
    text = re.sub(r"^@!?U?P\w+\s+", "", text)
    return text.split(None, 1)[0] if text else ""


def parse(text: str) -> list[SassInstruction]:
    instructions: list[SassInstruction] = []
    labels: dict[str, int] = {}
    frame: Frame | None = None
    for line in text.splitlines():
        stripped = line.strip()
        if match := _FILE.search(stripped):
            frame = Frame(match.group(1), int(match.group(2)))
            continue
        if match := _LABEL.match(stripped):
            labels[match.group(1)] = len(instructions)
            continue
        if match := _INSTRUCTION.search(stripped):
            body = match.group(2)
            instructions.append(SassInstruction(len(instructions), int(match.group(1), 16), body, _opcode(body), frame))
    for instruction in instructions:
        if instruction.opcode.startswith("BRA") and (branch := _BRANCH.search(instruction.text)):
            target = labels.get(branch.group(1))
            if target is not None and target <= instruction.index:
                for inside in instructions[target:instruction.index + 1]:
                    inside.in_loop = True
    return instructions
