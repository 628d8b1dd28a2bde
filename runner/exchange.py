"""Tensors between a contestant and the judge: files the judge names, read back without running code.

A contestant writes a forward's outputs with ``save_outputs`` to a path the judge chose at random
for that one request; the judge reads them with ``load_outputs``. The format is ours and plain: a
length-prefixed JSON header (per output: a dtype from ``DTYPES``, a shape and the device type it was
returned on, or a plain value) followed by each tensor's raw bytes. Nothing in it is unpickled, so
a hostile file can only be wrong, never run code in the judge; a header that does not match the
bytes is an error.

Large outputs are the cost (a 1.6 GB softmax output, verified a few times per case): fresh memory
is what is slow, not copying (first-touch page faults run at a fraction of memcpy speed). So every
byte is copied once on each side, with no fresh memory in between: the contestant copies each
tensor, from its device, straight into a memory-mapped file (``OutputsFile``) that it keeps from one
request to the next and hard-links to the judge's path; the judge reads each tensor out of that
file, into a tensor of its own or, a piece at a time through a small warm buffer, to its device.
"""
from __future__ import annotations

import json
import math
import mmap
import os
from pathlib import Path
from typing import Any

import torch

from ladder.runner.compare import flatten_outputs
from ladder.runner.own_builtins import BUILTINS as __builtins__  # noqa: F401  (see that module)

DTYPES = {str(dtype).removeprefix("torch."): dtype for dtype in (
    torch.float64, torch.float32, torch.float16, torch.bfloat16, torch.float8_e4m3fn, torch.float8_e5m2,
    torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8, torch.bool, torch.complex64, torch.complex128)}
PLAIN = (int, float, bool, str, type(None))


class OutputsFile:
    """One contestant's outputs file, kept mapped between requests so that its memory is warm.

    ``save`` fills it and hard-links it to the judge's path (the judge unlinks that path once read).
    While the last link is still there (not read yet), the next ``save`` starts a new file instead of
    writing over outputs the judge has still to read.
    """

    def __init__(self, path: str | Path):
        self.path = str(path)
        self.memory: mmap.mmap | None = None

    def save(self, output: Any, path: str) -> None:
        header, tensors, size = encoded(output)
        fill(self._memory(size), header, tensors)
        try:
            os.link(self.path, path)
        except OSError:  # a filesystem without hard links: this one request's file, written once
            save_outputs(output, path)

    def _memory(self, size: int) -> mmap.mmap:
        try:
            links = os.stat(self.path).st_nlink
        except FileNotFoundError:
            links = 0
        if self.memory is not None and links != 1:  # the judge has not read the last one yet, or it is gone
            self.close()
            if links > 1:
                os.unlink(self.path)
        if self.memory is not None and len(self.memory) == size:
            return self.memory
        self.close()
        descriptor = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            os.ftruncate(descriptor, size)
            self.memory = mmap.mmap(descriptor, size)
        finally:
            os.close(descriptor)
        return self.memory

    def close(self) -> None:
        if self.memory is not None:
            self.memory.close()
            self.memory = None


def save_outputs(output: Any, path: str) -> None:
    """A forward's outputs as a file ``load_outputs`` reads, written once (see the module docstring)."""
    header, tensors, size = encoded(output)
    temporary = f"{path}.part"
    descriptor = os.open(temporary, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.ftruncate(descriptor, size)
        with mmap.mmap(descriptor, size) as memory:
            fill(memory, header, tensors)
    finally:
        os.close(descriptor)
    os.replace(temporary, path)


def encoded(output: Any) -> tuple[bytes, list[torch.Tensor], int]:
    """An output's header, its tensors (contiguous, where they were returned) and the file's size."""
    items, tensors = [], []
    for value in flatten_outputs(output):
        if isinstance(value, torch.Tensor):
            data = value.detach().contiguous()
            items.append({"dtype": str(data.dtype).removeprefix("torch."), "shape": list(data.shape),
                          "device": value.device.type})
            tensors.append(data)
        else:
            items.append({"value": value if isinstance(value, PLAIN) else f"<a {type(value).__name__}>"})
    header = json.dumps(items).encode()
    return header, tensors, 8 + len(header) + sum(tensor_bytes(tensor) for tensor in tensors)


def tensor_bytes(tensor: torch.Tensor) -> int:
    return tensor.numel() * tensor.element_size()


def fill(memory: mmap.mmap, header: bytes, tensors: list[torch.Tensor]) -> None:
    """Header, then each tensor's bytes, copied from its device straight into the mapping."""
    memory[:8] = len(header).to_bytes(8, "little")
    memory[8:8 + len(header)] = header
    offset = 8 + len(header)
    for tensor in tensors:
        count = tensor_bytes(tensor)
        if count:
            window = torch.frombuffer(memory, dtype=torch.uint8, count=count, offset=offset)
            window.copy_(tensor.reshape(-1).view(torch.uint8))
            del window  # the mapping cannot be closed or resized while a tensor views it
        offset += count


def load_outputs(path: str | Path, device: Any) -> list[Any]:
    """What ``save_outputs`` or ``OutputsFile.save`` wrote: tensors of the judge's own, read out of
    the file, on ``device`` when they were returned on its type.

    Read, never mapped: the contestant that wrote the file can still truncate it, and a mapping read
    past its end kills the reader (SIGBUS); a read only comes back short, which is an error here.
    """
    with open(path, "rb") as handle:
        total = os.fstat(handle.fileno()).st_size
        size = int.from_bytes(exactly(handle, 8), "little") if total >= 8 else -1
        if not 0 <= size <= total - 8:
            raise ValueError("not an outputs file, or shorter than its header says")
        items = json.loads(exactly(handle, size))
        if not isinstance(items, list):
            raise ValueError("not an outputs file")
        offset, outputs = 8 + size, []
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
            on_device = item.get("device") == getattr(device, "type", device)
            outputs.append(read_tensor(handle, count, dtype, shape, device if on_device else "cpu"))
            offset += count
        if offset != total or handle.read(1):
            raise ValueError("the outputs file holds more than its header says")
    return outputs


def exactly(handle: Any, count: int) -> bytes:
    data = handle.read(count)
    if len(data) != count:
        raise ValueError("the outputs file is shorter than its header says")
    return data


# Host memory a device tensor is read through, a piece at a time: kept, so it is warm after the first
# piece, and small, so the judge never holds a second copy of a large output on the host.
STAGING_BYTES = 64 << 20
_staging: dict[str, torch.Tensor] = {}


def read_tensor(handle: Any, count: int, dtype: torch.dtype, shape: list[int], device: Any) -> torch.Tensor:
    result = torch.empty(count, dtype=torch.uint8, device=device)
    if result.device.type == "cpu":
        read_into(handle, result)
    else:
        read_staged(handle, result)
    return result.view(dtype).reshape(shape)


def read_staged(handle: Any, result: torch.Tensor) -> None:
    """Fill ``result`` (bytes, on a device) from the file, through the staging buffer."""
    size = min(STAGING_BYTES, result.numel())
    staging = _staging.get("buffer")
    if staging is None or staging.numel() < size:
        staging = _staging["buffer"] = torch.empty(size, dtype=torch.uint8)
    for start in range(0, result.numel(), size):
        piece = min(size, result.numel() - start)
        read_into(handle, staging[:piece])
        result[start:start + piece].copy_(staging[:piece])  # from pageable memory: done on return


def read_into(handle: Any, target: torch.Tensor) -> None:
    view, done = memoryview(target.numpy()), 0
    while done < len(view):
        got = handle.readinto(view[done:])
        if not got:
            raise ValueError("the outputs file is shorter than its header says")
        done += got


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
