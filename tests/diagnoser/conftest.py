"""Fixtures for the ladder's tests."""
from __future__ import annotations

from pathlib import Path

import pytest

from ladder.diagnoser.subject import Subject

COMPILER = Path(__file__).parent / "data" / "compiler"


@pytest.fixture
def gpu_subject() -> Subject:
    return Subject("solution.py", "problem.py", backend="cuda", device="NVIDIA H200")


@pytest.fixture
def cpu_subject() -> Subject:
    return Subject("solution.py", "problem.py", backend="aot", device=None)


@pytest.fixture(scope="session")
def fixture_index_dir(tmp_path_factory) -> str:
    """A real index (dense vectors + BM25, the bundled embedding model) over the fixture compiler tree."""
    from ladder.indexer.build import build

    where = tmp_path_factory.mktemp("index")
    build(sources=[f"compiler={COMPILER}"], index_dir=str(where))
    return str(where)
