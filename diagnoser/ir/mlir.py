"""A reader for the textual MLIR Triton prints (TTIR, TTGIR, Triton-Ascend's ttadapter).

Not a full MLIR parser: each op is one line (MLIR's printer puts ops on their own lines); an op
whose line ends in `{` owns a region that the matching `}` line closes, and that closing line
carries the op's trailing types and location (`} loc(#loc69)`, `}) : (tensor<..>) -> f32 loc(..)`).
That is enough to know, for every op, its name, results, operands, types, source frames and the
loops (`scf.for`, `scf.while`) around it, which is what the fact extractors need.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ladder.diagnoser.ir.locations import Frame, MlirLocations, trailing_loc, user_frame

LOOP_OPS = ("scf.for", "scf.while", "scf.parallel")

_RESULTS = re.compile(r"^((?:%[\w.$-]+(?::\d+)?\s*,\s*)*%[\w.$-]+(?::\d+)?)\s*=\s*")
_NAME = re.compile(r'^"?([A-Za-z_][\w.$]*)"?')
_VALUE = re.compile(r"%[\w.$-]+")


@dataclass
class Op:
    index: int                       # position in Module.ops
    name: str                        # tt.load, scf.for, "tt.reduce" -> tt.reduce, ...
    results: tuple[str, ...]
    text: str                        # the op's line, stripped
    line_no: int                     # 1-based line in the IR text
    loops: tuple[int, ...] = ()      # indices of the enclosing loop ops, outermost first
    parents: tuple[int, ...] = ()    # indices of all enclosing region-owning ops
    tail: str = ""                   # the line that closes the op's regions (types, loc)
    frames: tuple[Frame, ...] = field(default_factory=tuple)

    @property
    def in_loop(self) -> bool:
        return bool(self.loops)

    @property
    def frame(self) -> Frame | None:
        return user_frame(self.frames)

    @property
    def full_text(self) -> str:
        return f"{self.text} ... {self.tail}" if self.tail else self.text

    def operands(self) -> list[str]:
        """SSA values the op uses, in order (`%x#1` -> `%x`), excluding its results."""
        body = self.text[_RESULTS.match(self.text).end():] if _RESULTS.match(self.text) else self.text
        body = body.split(" loc(")[0]
        return [value for value in _VALUE.findall(body)]

    def attribute(self, name: str) -> str | None:
        """The value of `name = value` in the op's attribute dict, as text."""
        match = re.search(rf"\b{re.escape(name)} = ([^,}}>\s]+)", self.text + " " + self.tail)
        return match.group(1).strip() if match else None


@dataclass
class Module:
    text: str
    ops: list[Op]
    aliases: dict[str, str]          # "#blocked" -> "#ttg.blocked<{...}>"
    locations: MlirLocations
    defs: dict[str, Op]              # "%x" -> the op defining it

    def find(self, *names: str) -> list[Op]:
        return [op for op in self.ops if op.name in names]

    def loop_of(self, op: Op) -> Op | None:
        return self.ops[op.loops[-1]] if op.loops else None

    def inside(self, region_op: Op) -> list[Op]:
        return [op for op in self.ops if region_op.index in op.parents]

    def definition(self, value: str) -> Op | None:
        return self.defs.get(value.split("#")[0])

    def resolve_alias(self, text: str) -> str:
        """`#blocked1` -> its definition; anything else unchanged."""
        return self.aliases.get(text.strip(), text.strip())


def parse(text: str) -> Module:
    """Read a module's ops, region nesting, attribute aliases and locations."""
    ops: list[Op] = []
    attribute_aliases: dict[str, str] = {}
    loc_aliases: dict[str, str] = {}
    stack: list[Op] = []
    for line_no, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("//"):
            continue
        if line.startswith("#"):
            name, _, definition = line.partition(" = ")
            if name.startswith("#loc"):
                loc_aliases[name] = definition[4:-1] if definition.startswith("loc(") else definition
            else:
                attribute_aliases[name] = definition
            continue
        if line.startswith("^"):  # a block label
            continue
        if line.startswith("}"):
            if stack:
                closed = stack.pop()
                closed.tail = line
                if line.endswith("{"):  # } else {
                    stack.append(closed)
            continue
        results_match = _RESULTS.match(line)
        rest = line[results_match.end():] if results_match else line
        name_match = _NAME.match(rest)
        if not name_match:
            continue
        results = tuple(value.strip().split(":")[0] for value in results_match.group(1).split(",")) \
            if results_match else ()
        op = Op(index=len(ops), name=name_match.group(1), results=results, text=line, line_no=line_no,
                loops=tuple(parent.index for parent in stack if parent.name in LOOP_OPS),
                parents=tuple(parent.index for parent in stack))
        ops.append(op)
        if line.endswith("{"):
            stack.append(op)
    locations = MlirLocations(loc_aliases)
    for op in ops:
        expression = trailing_loc(op.text) or (trailing_loc(op.tail) if op.tail else None)
        op.frames = locations.frames(expression) if expression else ()
    defs = {result: op for op in ops for result in op.results}
    return Module(text=text, ops=ops, aliases=attribute_aliases, locations=locations, defs=defs)


# ---------------------------------------------------------------------------------------------
# Types
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class TensorType:
    shape: tuple[int, ...]
    element: str                     # f32, i64, !tt.ptr<f16>, ...
    encoding: str | None             # "#blocked1", "#ttg.slice<{...}>", None in TTIR

    @property
    def pointee(self) -> str | None:
        match = re.fullmatch(r"!tt\.ptr<([^,>]+)(?:,\s*\d+)?>", self.element)
        return match.group(1) if match else None

    @property
    def numel(self) -> int:
        count = 1
        for size in self.shape:
            count *= size
        return count


def _balanced(text: str, start: int) -> int:
    """Index just past the `>` that closes the `<` at `start`."""
    depth = 0
    for index in range(start, len(text)):
        if text[index] == "<":
            depth += 1
        elif text[index] == ">" and (index == 0 or text[index - 1] != "-"):
            depth -= 1
            if depth == 0:
                return index + 1
    return len(text)


def tensor_types(text: str) -> list[TensorType]:
    """Every `tensor<...>` (and `!ttg.memdesc<...>`) type in a piece of IR, in order."""
    found = []
    for match in re.finditer(r"(?<![\w!])(tensor|!ttg\.memdesc)<", text):
        end = _balanced(text, match.end() - 1)
        found.append(_parse_shaped(text[match.end():end - 1]))
    return found


def _parse_shaped(body: str) -> TensorType:
    dims, rest = [], body
    while match := re.match(r"(\d+|\?)x", rest):
        dims.append(int(match.group(1)) if match.group(1) != "?" else -1)
        rest = rest[match.end():]
    depth, cut = 0, len(rest)
    for index, char in enumerate(rest):
        if char in "<({[":
            depth += 1
        elif char in ">)}]" and not (char == ">" and index and rest[index - 1] == "-"):
            depth -= 1
        elif char == "," and depth == 0:
            cut = index
            break
    element = rest[:cut].strip()
    encoding = rest[cut + 1:].split(",")[0].strip() if cut < len(rest) else None
    return TensorType(tuple(dims), element, encoding or None)


def scalar_type(text: str) -> str | None:
    """The type after the last ` : ` of an op line (before its location), e.g. `i32`."""
    body = text.split(" loc(")[0]
    if " : " not in body:
        return None
    return body.rsplit(" : ", 1)[1].strip()


def element_bits(element: str) -> int | None:
    """Bit width of an MLIR element type name (f16 -> 16, i64 -> 64, f8E4M3FN -> 8)."""
    if element.startswith("!tt.ptr"):
        return 64
    match = re.match(r"^(?:[iuf]|bf|si|ui)(\d+)", element)
    return int(match.group(1)) if match else None
