"""Standard output carries ladder's result and nothing else; everything else goes to standard error.

While a command works, the program it diagnoses works too: a script captured in this process, a
solution's forward, Triton's compiler, ptxas, a worker process. Their prints, torch's and
Triton's warnings and whatever C code writes to file descriptor 1 would land in the middle of
ladder's `--json`. `quarantine()` points descriptor 1 and `sys.stdout` at standard error for the
whole of a command's work, and keeps a private copy of the real standard output that only
`echo` writes to. Descriptors are what children inherit and what C code writes to, so moving
`sys.stdout` alone would not be enough.
"""
from __future__ import annotations

import contextlib
import ctypes
import os
import sys
from collections.abc import Iterator
from typing import IO

import click

_results: list[IO[str]] = []  # ladder's own standard output while a command is quarantined


def echo(message: str = "", nl: bool = True) -> None:
    """Write part of the command's result to the real standard output."""
    click.echo(message, file=_results[-1] if _results else None, nl=nl)


@contextlib.contextmanager
def quarantine() -> Iterator[None]:
    """Send descriptor 1 and `sys.stdout` to standard error until the block ends (re-entrant)."""
    if _results:
        yield
        return
    stdout = sys.stdout
    _flush(stdout, sys.stderr)
    saved = _dup(1)
    results = stdout  # a stream that is not descriptor 1 (a test's captured output) stays where it is
    if saved is not None and _fileno(stdout) == 1:
        results = os.fdopen(saved, "w", encoding=getattr(stdout, "encoding", None) or "utf-8",
                            errors="replace", closefd=False)
    if saved is not None:
        os.dup2(2, 1)
    _results.append(results)
    sys.stdout = sys.stderr
    try:
        yield
    finally:
        _flush(sys.stderr)
        _libc_flush()
        sys.stdout = stdout
        _results.pop()
        if results is not stdout:
            results.close()
        if saved is not None:
            os.dup2(saved, 1)
            os.close(saved)


def _dup(fd: int) -> int | None:
    try:
        return os.dup(fd)
    except OSError:  # no such descriptor (a daemon without standard output)
        return None


def _fileno(stream: IO[str]) -> int | None:
    try:
        return stream.fileno()
    except (AttributeError, OSError, ValueError):
        return None


def _flush(*streams: IO[str]) -> None:
    for stream in streams:
        with contextlib.suppress(Exception):
            stream.flush()


def _libc_flush() -> None:
    """C code's buffered writes to stdout go out now, to standard error, not after the result."""
    with contextlib.suppress(Exception):
        ctypes.CDLL(None).fflush(None)
