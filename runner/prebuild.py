"""A candidate's kernels compiled on any machine, in the judge's sandbox, and carried to the GPU that
times it.

The judge compiles every contestant's kernels ahead of time (``precompile``) before it checks and
times them, and on a cluster that compile is CPU work done while a GPU is leased. Here the same
request runs in a contestant of its own on a machine with no device: the candidate is imported
under the sentinel, its kernels compile for the target (``ladder.runner.precompile``) into the
candidate's private kernel cache (``contestants.private_folders``, named by its source's hash),
and the cache comes back as an archive. ``install`` unpacks it into the same private cache on the
GPU's machine, so the judge's own precompile there finds every kernel and compiles nothing.

Nothing here decides anything: the GPU's judge still runs every check. A cache holds only what the
candidate's own compile wrote to its own cache, which is what the judge would have used anyway.
"""
from __future__ import annotations

import io
import random
import shutil
import tarfile
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ladder.runner import contestants, sandbox
from ladder.runner.backends.base import Backend
from ladder.runner.channel import ContestantLost
from ladder.runner.options import Options
from ladder.runner.own_builtins import BUILTINS as __builtins__  # noqa: F401  (see that module)
from ladder.runner.paths import kernel_cache

MAX_ARCHIVE = 512 << 20  # a kernel cache larger than this is not carried (the GPU compiles it itself)


class CompileOnlyBackend(Backend):
    """A contestant's backend for compiling only: no device, and not the interpreter (which would
    change what ``@triton.jit`` makes, and so what lands in the cache)."""

    name = "compile-only"
    spec = "ladder.runner.prebuild:backend"


backend = CompileOnlyBackend()


@dataclass
class Prebuilt:
    """What compiling one candidate gave: its cache as an archive, or why there is none."""

    digest: str
    kernels: int = 0
    archive: bytes = b""
    rejected: dict[str, str] | None = None
    error: str | None = None
    seconds: float = 0.0
    finished_at: float = 0.0  # wall clock, for a scheduler's record of what ran when


def prebuild(solution: Path, problem: Path, target: str = "sm90", *, timeout_s: float = 300.0,
             limits: sandbox.Limits | None = None) -> Prebuilt:
    """Compile ``solution``'s kernels for ``target`` in a sandboxed contestant; its cache as an archive."""
    started = time.monotonic()
    cache = cache_folder(solution)
    result = Prebuilt(digest=cache.name)
    token = f"prebuild-{random.SystemRandom().getrandbits(64):016x}"
    exchange = Path(tempfile.mkdtemp(prefix="ladder-prebuild-"))
    handle = None
    try:
        handle = contestants.start("candidate", backend, exchange, limits or sandbox.Limits(
            memory_bytes=sandbox.default_memory_limit(), processes=Options().process_limit), token,
            solution=solution)
        request = {"solution": str(solution), "problem": str(problem)}
        for command in ({"op": "load", "kind": "solution", "exchange": str(exchange), **request},
                        {"op": "precompile", "target": target, **request}):
            reply = handle.channel.request(command, timeout_s)
            if reply.get("rejected") or "error" in reply:
                result.rejected, result.error = reply.get("rejected"), reply.get("error")
                return result
        result.kernels = int(reply.get("kernels") or 0)
        result.archive = archive(cache)
    except ContestantLost as lost:
        result.error = f"{lost} (compiling ahead of time)"
    finally:
        if handle is not None:
            handle.stop(token)
        sandbox.kill_evaluation(None, token)
        shutil.rmtree(exchange, ignore_errors=True)
        result.seconds, result.finished_at = round(time.monotonic() - started, 2), time.time()
    return result


def cache_folder(solution: Path) -> Path:
    """The candidate's private kernel cache on this machine (what its contestants compile into)."""
    cache = kernel_cache(solution)
    cache.mkdir(parents=True, exist_ok=True)
    return cache


def archive(folder: Path) -> bytes:
    """The folder as a gzipped tar (empty bytes when it is too large to be worth carrying)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        tar.add(folder, arcname=".")
    data = buffer.getvalue()
    return data if len(data) <= MAX_ARCHIVE else b""


def install(solution: Path, prebuilt: Prebuilt | dict[str, Any]) -> int:
    """Unpack a prebuilt cache into ``solution``'s private cache here; how many files it added.

    Only when the archive was made from this very source (the digest names it), and only plain files
    inside the cache folder (tarfile's ``data`` filter refuses links, devices and paths that leave it).
    """
    found = prebuilt if isinstance(prebuilt, dict) else prebuilt.__dict__
    cache = cache_folder(solution)
    if not found.get("archive") or found.get("digest") != cache.name:
        return 0
    before = sum(1 for path in cache.rglob("*") if path.is_file())
    with tarfile.open(fileobj=io.BytesIO(found["archive"]), mode="r:gz") as tar:
        tar.extractall(cache, filter="data")
    return sum(1 for path in cache.rglob("*") if path.is_file()) - before
