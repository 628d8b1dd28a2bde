"""Kernels compiled once per test session through the aot backend (sm_90, no GPU needed)."""
from __future__ import annotations

import functools

import pytest


@functools.lru_cache(maxsize=None)
def _captured(case: str) -> tuple:
    from . import ir_kernels

    from ladder.diagnoser.ir import extract_facts
    from ladder.runner.backends.aot import AotCapture, parse_target

    with AotCapture(parse_target("sm90")) as session:
        ir_kernels.LAUNCHES[case]()
    kernels = session.kernels()
    return tuple(kernels), tuple(extract_facts(kernels))


@pytest.fixture
def captured():
    """captured("copy_aligned") -> (kernels, facts) for that launch case, compiled once."""
    return _captured


@pytest.fixture
def facts():
    """facts("copy_aligned", "global_access") -> that case's facts of that kind."""
    def select(case: str, kind: str) -> list:
        return [fact for fact in _captured(case)[1] if fact.kind == kind]

    return select
