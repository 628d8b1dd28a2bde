"""Inputs for one case and seed, on the backend's device, and the copies the checks need."""
from __future__ import annotations

import random
import sys
from typing import Any

import torch

from ladder.runner.own_builtins import BUILTINS as __builtins__  # noqa: F401  (see that module)
from ladder.runner.problem import Problem

# Bound when the runner is imported, before any candidate code: `changed` decides in the contestant's
# process whether a solution wrote to its inputs, and a candidate that replaced `torch.equal` (through
# `torch.__dict__`, which no attribute assignment shows) would otherwise decide it.
_equal = torch.equal


def seed_everything(seed: int) -> None:
    """Seed every generator a problem's ``get_inputs`` might use (torch on all devices, random, numpy)."""
    torch.manual_seed(seed)
    random.seed(seed)
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed(seed % 2**32)


def make_inputs(problem: Problem, case: dict, seed: int, device: torch.device) -> list:
    """``get_inputs()`` for the case, seeded, created directly on the device where the file allows.

    Factory calls run under ``torch.device(device)`` so that fresh inputs for every timed repetition
    cost a few device kernels instead of a host-to-device copy; a file that cannot run that way
    (numpy, explicit CPU tensors) is run on the host and its tensors are moved.
    """
    with problem.applied(case):
        seed_everything(seed)
        try:
            with device:
                inputs = problem.get_inputs()
        except Exception:
            seed_everything(seed)
            inputs = problem.get_inputs()
    return [to_device(value, device) for value in inputs]


def make_init_inputs(problem: Problem, case: dict, seed: int, device: torch.device) -> list:
    with problem.applied(case):
        seed_everything(seed)
        return [to_device(value, device) for value in problem.get_init_inputs()]


def to_device(value: Any, device: torch.device) -> Any:
    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, (list, tuple)):
        return type(value)(to_device(item, device) for item in value)
    return value


def clone(values: list) -> list:
    return [value.clone() if isinstance(value, torch.Tensor) else value for value in values]


def as_float64(values: list) -> list:
    return [value.to(torch.float64) if isinstance(value, torch.Tensor) and value.is_floating_point()
            else value for value in values]


def changed(before: list, after: list) -> list[int]:
    """Indexes of tensor arguments whose values differ between two copies of the inputs."""
    return [index for index, (a, b) in enumerate(zip(before, after))
            if isinstance(a, torch.Tensor) and not _equal(a, b)]


def tensor_bytes(values: Any) -> int:
    """Bytes of every tensor in a (nested) value: what reading or writing it once moves."""
    if isinstance(values, torch.Tensor):
        return values.numel() * values.element_size()
    if isinstance(values, (list, tuple)):
        return sum(tensor_bytes(value) for value in values)
    return 0
