"""Backends: where candidate code runs, behind one small interface.

A backend tells the runner how to reach a device from PyTorch and Triton: the torch device type,
how to synchronize, make timing events, name the current stream, and which environment the worker
process needs before Triton is imported. Everything else (inputs, correctness, timing loops) is the
same code for every backend.

=============  ============================================================================
``cuda``       NVIDIA GPUs: torch.cuda events and streams, Triton launch hooks.
``npu``        Ascend NPUs through torch_npu + Triton-Ascend (torch.npu mirrors torch.cuda);
               written to their documented APIs, untested on hardware.
``interpret``  CPU, ``TRITON_INTERPRET=1``: correctness only (no timing).
``aot``        compile-only for a target with no device (``ladder.runner.backends.aot.capture``);
               it captures IR, it does not run kernels, so ``ladder bench`` does not offer it.
=============  ============================================================================

Backends are imported on use so that ``import runner`` pulls in neither torch_npu nor the compiler.
"""
from __future__ import annotations

import importlib
from types import ModuleType

from ladder.runner.backends.base import Backend
from ladder.runner.own_builtins import BUILTINS as __builtins__  # noqa: F401  (see that module)

# name -> "module:attribute" of a Backend instance, or "module" for a module-level API (aot).
BACKENDS = {
    "cuda": "ladder.runner.backends.cuda:backend",
    "npu": "ladder.runner.backends.npu:backend",
    "interpret": "ladder.runner.backends.interpret:backend",
    "aot": "ladder.runner.backends.aot",
}

# The backends that run kernels (what `ladder bench --backend` accepts), in auto-selection order.
RUNNING_BACKENDS = ("cuda", "npu", "interpret")


class BackendError(Exception):
    """An unknown or unavailable backend (the message is one line)."""


def load_backend(name: str) -> Backend | ModuleType:
    """The backend called ``name``: a ``Backend`` for the running ones, the module for ``aot``.

    ``package.module:attribute`` names a ``Backend`` instance of one's own (a device ladder does not
    ship, or a stand-in such as the tests' host clock)."""
    target = BACKENDS.get(name) or (name if ":" in name else None)
    if target is None:
        raise BackendError(f"unknown backend {name!r} (choose from {', '.join(BACKENDS)})")
    module_name, _, attribute = target.partition(":")
    module = importlib.import_module(module_name)
    return getattr(module, attribute) if attribute else module


def select_backend(name: str | None = None) -> Backend:
    """The named running backend, checked for availability; with no name the best one present:
    cuda if a CUDA device is visible, else npu if torch_npu sees a device, else interpret."""
    if name is not None:
        if name not in RUNNING_BACKENDS and ":" not in name:
            raise BackendError(f"backend {name!r} does not run kernels (choose from "
                               f"{', '.join(RUNNING_BACKENDS)})")
        backend = load_backend(name)
        if not backend.is_available():
            raise BackendError(f"backend {name!r} is not available here: {backend.unavailable_reason()}")
        return backend
    for candidate in ("cuda", "npu"):
        backend = load_backend(candidate)
        if backend.is_available():
            return backend
    return load_backend("interpret")


def detect(requested: str = "auto") -> tuple[str, str | None]:
    """(backend, device name or None) for diagnosing: ``auto`` picks cuda, then npu, else the
    compile-only ``aot``. A named device backend that is not available here comes back with no
    device (its rung 2 is then skipped and says why); ``aot`` and ``interpret`` have none."""
    for name in ("cuda", "npu"):
        if requested not in ("auto", name):
            continue
        backend = load_backend(name)
        if backend.is_available():
            return name, backend.device_name()
        if requested == name:
            return name, None
    return "aot", None


__all__ = ["BACKENDS", "RUNNING_BACKENDS", "Backend", "BackendError", "detect", "load_backend",
           "select_backend"]
