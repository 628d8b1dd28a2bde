"""What a rule is and what it finds: a named check over a parsed solution, and its violations with a
line number and a severity (an ``error`` rejects the solution before it runs)."""
from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ladder.runner.static_check.source import Source

ERROR, WARNING = "error", "warning"


@dataclass(frozen=True)
class Violation:
    rule: str
    severity: str
    line: int
    message: str

    def to_dict(self) -> dict:
        return asdict(self)

    def __str__(self) -> str:
        return f"line {self.line}: {self.message} [{self.rule}]"


@dataclass(frozen=True)
class Rule:
    name: str
    severity: str
    description: str
    check: Callable[[Source], Iterator[tuple[int, str]]]
