"""Tensors between a contestant and the judge: files the judge names, read back without running code.

A contestant writes a forward's outputs with ``save_outputs`` to a path the judge chose at random
for that one request; the judge reads them with ``load_outputs``. The format is ours and plain: a
length-prefixed JSON header (per output: a dtype from ``DTYPES``, a shape and the device type it was
returned on, or a plain value) followed by each tensor's raw bytes. Nothing in it is unpickled, so
a hostile file can only be wrong, never run code in the judge; a header that does not match the
bytes is an error. It writes at memory speed: a 512 MB output costs a tenth of a second, not the
seconds a zip archive would.
"""
from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import numpy
import torch

from ladder.runner.compare import flatten_outputs

DTYPES = {str(dtype).removeprefix("torch."): dtype for dtype in (
    torch.float64, torch.float32, torch.float16, torch.bfloat16, torch.float8_e4m3fn, torch.float8_e5m2,
    torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8, torch.bool, torch.complex64, torch.complex128)}
PLAIN = (int, float, bool, str, type(None))


def save_outputs(output: Any, path: str) -> None:
    """A forward's outputs as a file ``load_outputs`` reads (see the module docstring)."""
    items, blobs = [], []
    for value in flatten_outputs(output):
        if isinstance(value, torch.Tensor):
            data = value.detach().to("cpu").contiguous()
            items.append({"dtype": str(data.dtype).removeprefix("torch."), "shape": list(data.shape),
                          "device": value.device.type})
            blobs.append(data.view(-1).view(torch.uint8).numpy() if data.numel() else b"")
        else:
            items.append({"value": value if isinstance(value, PLAIN) else f"<a {type(value).__name__}>"})
    header = json.dumps(items).encode()
    temporary = f"{path}.part"
    with open(temporary, "wb") as handle:
        handle.write(len(header).to_bytes(8, "little"))
        handle.write(header)
        for blob in blobs:
            handle.write(memoryview(blob) if not isinstance(blob, bytes) else blob)
    os.replace(temporary, path)


def load_outputs(path: str | Path, device: Any) -> list[Any]:
    """What ``save_outputs`` wrote, tensors back on ``device`` when they were on its type."""
    total = os.path.getsize(path)
    outputs = []
    with open(path, "rb") as handle:
        size = int.from_bytes(handle.read(8), "little")
        items = json.loads(handle.read(size))
        if not isinstance(items, list):
            raise ValueError("not an outputs file")
        offset = 8 + size
        for item in items:
            if not isinstance(item, dict):
                raise ValueError("not an outputs file")
            if "value" in item:
                outputs.append(item["value"])
                continue
            dtype, shape = DTYPES[item["dtype"]], [int(n) for n in item["shape"]]
            count = math.prod(shape) * torch.empty((), dtype=dtype).element_size()
            if offset + count > total:
                raise ValueError("the outputs file is shorter than its header says")
            if count:
                data = torch.from_numpy(numpy.fromfile(handle, dtype=numpy.uint8, count=count))
                tensor = data.view(dtype).reshape(shape)
            else:
                tensor = torch.empty(shape, dtype=dtype)
            offset += count
            outputs.append(tensor.to(device) if item.get("device") == getattr(device, "type", device) else tensor)
    if offset != total:
        raise ValueError("the outputs file holds more than its header says")
    return outputs


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
