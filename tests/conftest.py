"""Shared test configuration: a private Triton cache; GPU-only tests skip cleanly without CUDA."""
from __future__ import annotations

import atexit
import os
import shutil
import tempfile

import pytest

# Triton's disk cache keys on kernel source, not on the file, so a warm cache from another checkout
# leaks that checkout's paths into IR. Each test session compiles into its own cache.
if "TRITON_CACHE_DIR" not in os.environ:
    os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="ladder-tests-triton-")
    atexit.register(shutil.rmtree, os.environ["TRITON_CACHE_DIR"], ignore_errors=True)


def _has_cuda() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if _has_cuda():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
