"""Shared test configuration: a private Triton cache; Ctrl-C heard by the processes tests start; GPU-only
tests skip cleanly without CUDA."""
from __future__ import annotations

import atexit
import os
import shutil
import signal
import tempfile

import pytest

# Triton's disk cache keys on kernel source, not on the file, so a warm cache from another checkout
# leaks that checkout's paths into IR. Each test session compiles into its own cache.
if "TRITON_CACHE_DIR" not in os.environ:
    os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="ladder-tests-triton-")
    atexit.register(shutil.rmtree, os.environ["TRITON_CACHE_DIR"], ignore_errors=True)

# A shell starts a background job (`pytest ... &`) with SIGINT ignored, and an ignored signal stays
# ignored through exec, so every process a test starts would be deaf to the Ctrl-C the tests send as a
# user at a terminal does (ladder keeps an ignored SIGINT ignored, as a program started by nohup
# should). The session takes Python's own Ctrl-C handler back, and its children start with SIGINT on.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


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
