"""Call a function in a child process under a wall-clock limit: what hangs is stopped, not waited on.

A compile can hang inside C++ with the interpreter's lock held, where no signal handler runs and
no thread gets a word in; only a process can be stopped whatever it is doing. ``call(function,
args, timeout)`` runs ``function(*args)`` in a fresh interpreter (this one, with the repository on
``PYTHONPATH``, in the caller's working directory and environment) and returns its value, which
must be JSON. The function travels by reference (a module-level function) and its arguments by
pickle; the value comes back as JSON, so nothing the child runs can hand the caller an object.

At the limit, on Ctrl-C or SIGTERM in the caller, and after the function returns, every process of
the call is killed: its tree and anything carrying its marker, as the judge's processes are
(``ladder.runner.sandbox``); a child past the host memory limit is killed too. Its output, both streams,
is relayed line by line to the caller's standard error, never to its standard output.

Exceptions come back by kind: one of the classes the caller names in ``expected`` is raised again
as itself, message kept; any other is ``Failed`` (its one-line reason and type); a child that dies
without answering is ``Crashed``; one past its limit, ``TimedOut``.
"""
from __future__ import annotations

import base64
import collections
import json
import math
import os
import pickle
import random
import subprocess
import sys
import threading
import traceback
from collections.abc import Callable
from typing import Any

from ladder.runner import sandbox
from ladder.runner.isolation import crash_reason, wait_unreaped, worker_environment
from ladder.runner.own_builtins import BUILTINS as __builtins__  # noqa: F401  (see that module)
from ladder.runner.signals import interrupts_kept

TAIL_LINES = 40


class TimedOut(Exception):
    """The call ran past its limit and was killed."""

    def __init__(self, seconds: float):
        super().__init__(f"timed out after {seconds:g} s (stopped)")
        self.seconds = seconds


class Failed(Exception):
    """The function raised an exception the caller did not name; `kind` is its type's name."""

    def __init__(self, message: str, kind: str, detail: str = ""):
        super().__init__(message)
        self.kind, self.detail = kind, detail


class Crashed(Exception):
    """The child died without answering (a signal, an exit from C code, the memory limit)."""


def call(function: Callable[..., Any], args: tuple = (), *, timeout: float | None,
         expected: tuple[type[BaseException], ...] = ()) -> Any:
    """``function(*args)`` in a child process, within ``timeout`` seconds (None: no limit)."""
    try:
        request = base64.b64encode(pickle.dumps((function, args, expected))).decode()
    except (pickle.PicklingError, AttributeError, TypeError) as error:
        raise TypeError(f"{function!r} cannot run in a child process (a module-level function is needed): "
                        f"{error}") from None
    token = f"call-{random.SystemRandom().getrandbits(64):016x}"
    answer_read, answer_write = os.pipe()
    chunks: list[bytes] = []
    tail: collections.deque[str] = collections.deque(maxlen=TAIL_LINES)
    readers: list[threading.Thread] = []
    process = watch = None
    try:
        with interrupts_kept() as raise_dropped:
            process = sandbox.spawn([sys.executable, "-m", "ladder.runner.timelimit", str(answer_write)],
                                    env=worker_environment({sandbox.EVALUATION_ENV: token}), cwd=os.getcwd(),
                                    pass_fds=(answer_write,), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT)
            os.close(answer_write)
            answer_write = None
            watch = sandbox.Watch(process.pid, sandbox.Limits(memory_bytes=sandbox.default_memory_limit())).start()
            readers = [threading.Thread(target=_relay, args=(process.stdout, sys.stderr, tail), daemon=True),
                       threading.Thread(target=_collect, args=(answer_read, chunks), daemon=True)]
            for reader in readers:
                reader.start()
            threading.Thread(target=_send, args=(process, request), daemon=True).start()
            finished = wait_unreaped(process, math.inf if timeout is None else timeout, raise_dropped)
    finally:
        if answer_write is not None:
            os.close(answer_write)
        if watch is not None:
            watch.stop()
        sandbox.kill_evaluation(process.pid if process else None, token)
        if process is not None:
            sandbox.reap(process)
        for reader in readers:
            reader.join(timeout=5)
        os.close(answer_read)
    if not finished:
        raise TimedOut(timeout)
    return _answer(chunks, expected, watch.reason or crash_reason(process.returncode, list(tail)))


def _answer(chunks: list[bytes], expected: tuple[type[BaseException], ...], died: str) -> Any:
    try:
        answer = json.loads(b"".join(chunks))
    except json.JSONDecodeError:
        raise Crashed(died) from None
    if "value" in answer:
        return answer["value"]
    if answer.get("expected") is not None:
        raise expected[answer["expected"]](answer["message"])
    raise Failed(answer["message"], answer["kind"], answer.get("detail", ""))


def _send(process: subprocess.Popen, request: str) -> None:
    try:
        process.stdin.write(request)
        process.stdin.close()
    except (BrokenPipeError, OSError, ValueError):
        pass


def _relay(stream, sink, tail: collections.deque) -> None:
    for line in stream:
        tail.append(line.rstrip("\n"))
        try:
            sink.write(line)
            sink.flush()
        except (OSError, ValueError):  # the caller's stream is gone: keep draining the pipe
            pass


def _collect(fd: int, chunks: list[bytes]) -> None:
    while chunk := os.read(fd, 1 << 16):
        chunks.append(chunk)


def main(argv: list[str]) -> None:
    """The child: the request on standard input, the answer on the descriptor ``argv[0]``."""
    answer_fd = int(argv[0])
    sandbox.become_subreaper()
    try:
        function, args, expected = pickle.loads(base64.b64decode(sys.stdin.read()))
        try:
            answer: dict[str, Any] = {"value": function(*args)}
        except BaseException as error:  # noqa: BLE001 - every exception goes back, by kind
            answer = _raised(error, expected)
        with os.fdopen(answer_fd, "w") as channel:
            channel.write(json.dumps(answer, default=str))
    finally:
        sandbox.kill_evaluation(os.getpid(), os.environ.get(sandbox.EVALUATION_ENV))
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        # Skip interpreter teardown: after a device error it can hang, and the answer is written.
        os._exit(0)


def _raised(error: BaseException, expected: tuple[type[BaseException], ...]) -> dict[str, Any]:
    from ladder.runner.errors import one_line

    for index, kind in enumerate(expected):
        if isinstance(error, kind):
            return {"expected": index, "message": str(error)}
    return {"message": one_line(error), "kind": type(error).__name__, "detail": traceback.format_exc()[-4000:]}


if __name__ == "__main__":
    main(sys.argv[1:])
