"""Fixtures for the ladder's tests."""
from __future__ import annotations

import pytest

from diagnoser.ladder import Subject


@pytest.fixture
def gpu_subject() -> Subject:
    return Subject("solution.py", "problem.py", backend="cuda", device="NVIDIA H200")


@pytest.fixture
def cpu_subject() -> Subject:
    return Subject("solution.py", "problem.py", backend="aot", device=None)
