"""One captured kernel, its stages parsed once, and the way facts about it are made."""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from ladder.diagnoser.evidence import FACT_KINDS, Fact
from ladder.diagnoser.ir import mlir, ptx, sass
from ladder.diagnoser.ir.locations import Frame
from ladder.runner.capture import CapturedKernel

EXCERPT_CHARS = 400


@dataclass
class Context:
    """What extractors need beyond one kernel: the device, and the capture's other kernels."""

    device: dict[str, Any] | None = None
    launches_per_case: dict[Any, int] = field(default_factory=dict)


class KernelView:
    def __init__(self, kernel: CapturedKernel) -> None:
        self.kernel = kernel

    def _module(self, stage: str) -> mlir.Module | None:
        text = self.kernel.stages.get(stage)
        return mlir.parse(text) if text else None

    @cached_property
    def ttir(self) -> mlir.Module | None:
        return self._module("ttir")

    @cached_property
    def ttgir(self) -> mlir.Module | None:
        return self._module("ttgir")

    @cached_property
    def ttadapter(self) -> mlir.Module | None:
        return self._module("ttadapter")

    @cached_property
    def ptx(self) -> ptx.Ptx | None:
        text = self.kernel.stages.get("ptx")
        return ptx.parse(text) if text else None

    @cached_property
    def sass(self) -> list[sass.SassInstruction]:
        text = self.kernel.stages.get("sass")
        return sass.parse(text) if text else []

    @property
    def definition(self) -> Frame | None:
        """Where the kernel's `def` is: the place for facts about the kernel as a whole."""
        return Frame(self.kernel.file, self.kernel.line or 0) if self.kernel.file else None

    def fact(self, kind: str, value: dict[str, Any], *, frame: Frame | None = None, stage: str = "",
             excerpt: str = "") -> Fact:
        if kind not in FACT_KINDS:
            raise KeyError(f"fact kind {kind!r} is not in diagnoser.evidence.FACT_KINDS")
        frame = frame or self.definition
        return Fact(kernel=self.kernel.label, kind=kind, value=value, file=frame.file if frame else None,
                    line=frame.line if frame else None, stage=stage, excerpt=excerpt[:EXCERPT_CHARS])
