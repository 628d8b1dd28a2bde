"""Tensors between a contestant and the judge: files the judge names, read back without unpickling code.

A contestant writes a forward's outputs with ``save_outputs`` to a path the judge chose at random
for that one request; the judge reads them with ``load_outputs``, which uses
``torch.load(weights_only=True)``: only tensors and plain values come back, never objects whose
loading would run code in the judge.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import torch

from runner.compare import flatten_outputs


def save_outputs(output: Any, path: str) -> None:
    """A forward's outputs as a file the judge reads with ``torch.load(weights_only=True)``: plain
    CPU tensors and numbers only, each tensor with the device type it was returned on."""
    items, devices = [], []
    for value in flatten_outputs(output):
        if isinstance(value, torch.Tensor):
            items.append(value.detach().to("cpu", copy=True).contiguous())
            devices.append(value.device.type)
        else:
            items.append(value if isinstance(value, (int, float, bool, str, type(None))) else
                         f"<a {type(value).__name__}>")
            devices.append(None)
    temporary = f"{path}.part"
    torch.save({"items": items, "devices": devices}, temporary)
    os.replace(temporary, path)


def load_outputs(path: str | Path, device: Any) -> list[Any]:
    """What ``save_outputs`` wrote, tensors back on ``device`` when they were on its type."""
    data = torch.load(path, map_location="cpu", weights_only=True)
    items = []
    for value, kind in zip(data["items"], data["devices"]):
        if isinstance(value, torch.Tensor) and kind == getattr(device, "type", device):
            value = value.to(device)
        items.append(value)
    return items


def input_digest(inputs: list) -> list:
    """A cheap fingerprint of the inputs, so the judge can tell its inputs from the contestant's."""
    return [[list(x.shape), str(x.dtype), float(x.detach().double().sum())] if isinstance(x, torch.Tensor)
            else repr(x) for x in inputs]


def same_inputs(ours: list, theirs: Any) -> bool:
    """Whether two digests describe the same inputs (sums may differ in their last bits)."""
    if not isinstance(theirs, list) or len(ours) != len(theirs):
        return False
    for mine, other in zip(ours, theirs):
        if isinstance(mine, list):
            if not (isinstance(other, list) and len(other) == 3 and mine[:2] == other[:2]
                    and isinstance(other[2], float)):
                return False
            if not (mine[2] == other[2] or (mine[2] != mine[2] and other[2] != other[2])
                    or abs(mine[2] - other[2]) <= 1e-9 * max(abs(mine[2]), abs(other[2]))):
                return False
        elif mine != other:
            return False
    return True
