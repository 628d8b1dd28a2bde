"""Static checks of a solution's source: a listable set of named rules over Python's ``ast``.

Every rule answers one question about the source and returns violations with a line number. The
rules guard against the known ways a candidate can look fast or correct without doing the work in
Triton (measuring.md). Rules with severity ``error`` reject the solution before it runs; ``warning``
rules are reported. Runtime guards (``ladder.runner.guards``) back up what source analysis cannot see.

The **hot path** is ``ModelNew.forward`` plus every function, ``ModelNew`` method or class (all its
methods) it calls or merely refers to (transitively) in the same file, and the arguments of every
Triton decorator (heuristics, autotune hooks, prune and perf-model functions, config pre-hooks),
which Triton calls on the candidate's behalf; Triton kernels themselves (``@triton.jit`` and
friends) are not: their bodies are Triton language, where ``tl.dot`` is the point. In the hot path
the candidate may allocate (``torch.empty*``, constant fills), reshape and view tensors, ask about
shapes, strides and devices, and launch Triton kernels; nothing else that computes.

A solution may import modules from files beside it (``check_solution``): each is checked with the
same rules, every function and method in it counting as hot path (it exists to be called from the
solution).

The rules live in ``compute`` (computing outside Triton) and ``escape`` (escaping the judge), over the
parsed file of ``source``; ``rules`` lists them in order. ``python -m ladder.runner.static_check`` lists the rules; ``python -m ladder.runner.static_check FILE`` checks one
(and the files beside it that it imports).
"""
from __future__ import annotations

from pathlib import Path

from ladder.runner.static_check.rule import ERROR, WARNING, Rule, Violation
from ladder.runner.static_check.rules import RULES
from ladder.runner.static_check.source import Source, local_imports

__all__ = ["ERROR", "RULES", "WARNING", "Rule", "Violation", "check_solution", "check_source", "describe_rules"]


def check_source(text: str, filename: str = "solution.py",
                 rules: dict[str, Rule] | None = None, helper: bool = False) -> list[Violation]:
    """Run the rules over a solution's source (or, ``helper``, a module it imports). Raises
    ``SyntaxError`` for unparsable source."""
    return _check(Source(text, filename, helper), rules)


def _check(source: Source, rules: dict[str, Rule] | None = None) -> list[Violation]:
    found: set[tuple[str, int, str]] = set()
    violations = []
    for rule in (rules or RULES).values():
        for line, message in rule.check(source):
            if (rule.name, line, message) not in found:
                found.add((rule.name, line, message))
                violations.append(Violation(rule.name, rule.severity, line, message))
    return sorted(violations, key=lambda v: (v.severity != ERROR, v.line, v.rule))


def check_solution(path: str | Path) -> list[Violation]:
    """The rules over a solution file and over every module beside it that it imports (their
    violations name their file). Raises ``OSError`` or ``SyntaxError`` (with ``filename`` set)."""
    path = Path(path).resolve()
    pending, seen, violations = [(path, False)], {path}, []
    while pending:
        file, helper = pending.pop(0)
        # As UTF-8 whatever it declares: a file that declares another encoding is rejected by a rule.
        source = Source(file.read_bytes().decode("utf-8", errors="replace"), str(file), helper)
        for violation in _check(source):
            violations.append(violation if file == path else Violation(
                violation.rule, violation.severity, violation.line, f"{file.name}: {violation.message}"))
        for imported in local_imports(source, path.parent):
            if imported not in seen:
                seen.add(imported)
                pending.append((imported, True))
    return sorted(violations, key=lambda v: v.severity != ERROR)  # stable: the solution's own come first


def describe_rules() -> str:
    width = max(len(name) for name in RULES)
    return "\n".join(f"{rule.name:<{width}}  {rule.severity:<7}  {rule.description}"
                     for rule in RULES.values())
