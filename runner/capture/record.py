"""The `CapturedKernel` record: one compiled specialization of one Triton kernel, as plain JSON.

Every capture (the JIT's hooks on a GPU, the aot backend, Triton-Ascend's child process) fills the
same record, so that rung 3 reads kernels captured on another machine or in another Python
environment through one loader (`load`). Standard library only: Triton-Ascend's environment
writes it too.
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ladder.runner.own_builtins import BUILTINS as __builtins__  # noqa: F401  (see that module)

# Stages in pipeline order; any other stage a backend produces follows them.
STAGE_ORDER = ("ttir", "ttgir", "ttadapter", "llir", "ptx", "sass")


@dataclass
class CapturedKernel:
    """One compiled specialization of one Triton kernel, with everything rung 3 reads."""

    name: str                       # the @triton.jit function's name
    function: str                   # module.qualname
    file: str | None                # source file of the function
    line: int | None                # line of its `def`
    backend: str                    # how it was captured: cuda | aot | ascend
    target: str                     # cuda:90, npu:Ascend910B3, ...
    signature: dict[str, str]       # argument -> type, or "constexpr"
    constexprs: dict[str, Any]      # argument -> value it was specialized on (incl. value-1 ints)
    attrs: dict[str, list]          # argument -> [["tt.divisibility", 16], ...]
    metadata: dict[str, Any]        # num_warps, num_stages, shared, hash, ...
    stages: dict[str, str]          # stage -> text (SASS as text, never cubin bytes)
    resources: dict[str, Any]       # registers, spills, local/shared bytes, ...
    launches: list[dict[str, Any]] = field(default_factory=list)  # {"case": i, "grid": [x, y, z]}
    config: dict[str, Any] | None = None  # autotuning config: {"index", "kwargs", "default", ...}
    label: str = ""                 # unique within a capture: name, or name[what differs]
    error: str | None = None        # compile error, when a stage failed

    def __post_init__(self) -> None:
        self.label = self.label or self.name

    @property
    def cases(self) -> list[int | None]:
        return sorted({launch["case"] for launch in self.launches}, key=lambda case: (case is None, case))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "CapturedKernel":
        return cls(**data)


def jsonable(value: Any) -> Any:
    """A JSON-safe rendering of a specialization value (dtypes, constexprs, callables become text)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [jsonable(item) for item in value]
    if isinstance(value, dict):
        return {str(key): jsonable(item) for key, item in value.items()}
    inner = getattr(value, "value", None)  # tl.constexpr
    if inner is not None and type(value).__name__ == "constexpr":
        return jsonable(inner)
    return str(value)


def argument_name(arg_names: list[str], path: tuple[int, ...]) -> str:
    """Triton keys specializations by argument path ((i,) or (i, j) inside a tuple argument)."""
    return arg_names[path[0]] + "".join(f"[{index}]" for index in path[1:])


def source_position(jit_fn: Any) -> tuple[str | None, int | None]:
    """File and line of a kernel's `def` (after its decorators)."""
    import inspect

    fn = getattr(jit_fn, "fn", jit_fn)
    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        return None, None
    offset = next((index for index, text in enumerate(lines) if re.match(r"\s*def\s", text)), 0)
    return inspect.getsourcefile(fn), first + offset


def save(kernels: list[CapturedKernel], path: str | Path) -> None:
    import json

    Path(path).write_text(json.dumps([kernel.to_dict() for kernel in kernels], indent=1))


def load(path: str | Path) -> list[CapturedKernel]:
    import json

    return [CapturedKernel.from_dict(item) for item in json.loads(Path(path).read_text())]
