"""Run the judge in a subprocess with a wall-clock timeout; the caller survives whatever happens.

``run_worker(request, timeout)`` starts ``python -m ladder.runner.worker`` (the judge) with this
interpreter, the repository on ``PYTHONPATH``, a fresh working directory and an evaluation marker
in its environment (``ladder.runner.sandbox``); it sends the request on the judge's standard input, relays
its progress events and reads the verdict from a pipe of their own. At the timeout, after a normal
exit, and when the caller is interrupted (Ctrl-C or SIGTERM), every process of the evaluation is
killed: the judge's tree and anything that carries the marker, a candidate's ``setsid`` escapee
included. It returns ``WorkerOutcome``: the judge's result when it wrote one, otherwise a one-line
reason (timeout, signal, the last error line of its output) and the last progress event, which
names the solution and stage that were running.
"""
from __future__ import annotations

import collections
import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ladder.runner import sandbox
from ladder.runner.errors import last_error_line
from ladder.runner.own_builtins import BUILTINS as __builtins__  # noqa: F401  (see that module)
from ladder.runner.paths import child_pythonpath
from ladder.runner.signals import interrupts_kept, terminate_as_interrupt
from ladder.runner.worker import EVENT_PREFIX

TAIL_LINES = 60


@dataclass
class WorkerOutcome:
    result: dict[str, Any] | None  # the judge's verdict, when it wrote one
    status: str  # "ok" | "timeout" | "crash"
    reason: str | None = None  # one line, when status is not "ok"
    events: list[dict] = field(default_factory=list)
    log_tail: list[str] = field(default_factory=list)
    elapsed_s: float = 0.0

    @property
    def last_event(self) -> dict | None:
        for event in reversed(self.events):
            if event.get("event") == "progress":
                return event
        return None


def worker_environment(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = child_pythonpath(env.get("PYTHONPATH"))
    env.setdefault("PYTHONUNBUFFERED", "1")
    env.update(extra or {})
    return env


def run_worker(request: dict[str, Any], timeout: float,
               on_event: Callable[[dict], None] = lambda event: None,
               env: dict[str, str] | None = None) -> WorkerOutcome:
    started = time.monotonic()
    token = f"eval-{random.SystemRandom().getrandbits(64):016x}"
    folder = tempfile.mkdtemp(prefix="ladder-judge-")
    result_read, result_write = os.pipe()
    chunks: list[bytes] = []
    events: list[dict] = []
    tail: collections.deque[str] = collections.deque(maxlen=TAIL_LINES)
    process = None
    try:
        with terminate_as_interrupt(), interrupts_kept() as raise_dropped:
            process = sandbox.spawn([sys.executable, "-m", "ladder.runner.worker", str(result_write)],
                                    env=worker_environment({**(env or {}), sandbox.EVALUATION_ENV: token}),
                                    cwd=folder, pass_fds=(result_write,), stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            os.close(result_write)
            readers = _start_readers(process, result_read, chunks, events, tail, on_event)
            _send(process, request)
            timed_out = not wait_unreaped(process, timeout, raise_dropped)
    finally:
        if process is None:
            os.close(result_write)
        sandbox.kill_evaluation(process.pid if process else None, token)
        if process is not None:
            sandbox.reap(process)
        shutil.rmtree(folder, ignore_errors=True)
    for reader in readers:
        reader.join(timeout=5)
    os.close(result_read)
    result = None
    if chunks:
        try:
            result = json.loads(b"".join(chunks))
        except json.JSONDecodeError:
            result = None
    outcome = WorkerOutcome(result=result, status="ok", events=events, log_tail=list(tail),
                            elapsed_s=time.monotonic() - started)
    if timed_out:
        outcome.status, outcome.reason = "timeout", f"timed out after {timeout:g} s (killed)"
    elif result is None:
        outcome.status, outcome.reason = "crash", crash_reason(process.returncode, outcome.log_tail)
    return outcome


def _send(process: Any, request: dict[str, Any]) -> None:
    """The request on the judge's standard input (a thread: a large request must not block us)."""
    def write() -> None:
        with contextlib.suppress(BrokenPipeError, OSError, ValueError):
            process.stdin.write(json.dumps(request))
            process.stdin.close()

    threading.Thread(target=write, daemon=True).start()


def _start_readers(process: Any, result_fd: int, chunks: list[bytes], events: list[dict],
                   tail: collections.deque, on_event: Callable[[dict], None]) -> list[threading.Thread]:
    def read_lines(stream, parse_events: bool) -> None:
        for line in stream:
            if parse_events and line.startswith(EVENT_PREFIX):
                try:
                    event = json.loads(line[len(EVENT_PREFIX):])
                except json.JSONDecodeError:
                    continue
                events.append(event)
                on_event(event)
            else:
                tail.append(line.rstrip("\n"))

    def read_result() -> None:
        while True:
            chunk = os.read(result_fd, 1 << 16)
            if not chunk:
                return
            chunks.append(chunk)

    readers = [threading.Thread(target=read_lines, args=(process.stdout, False), daemon=True),
               threading.Thread(target=read_lines, args=(process.stderr, True), daemon=True),
               threading.Thread(target=read_result, daemon=True)]
    for reader in readers:
        reader.start()
    return readers


def wait_unreaped(process: subprocess.Popen, timeout: float,
                  raise_dropped: Callable[[], None] = lambda: None) -> bool:
    """Wait until the worker exits (True) or the timeout passes (False), without reaping it: while
    it is an unreaped zombie its pid, which names its process group, cannot be reused. Each poll
    first raises a Ctrl-C that Python dropped (``signals.interrupts_kept``)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        raise_dropped()
        if os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
            return True
        time.sleep(0.05)
    return False


def crash_reason(returncode: int | None, tail: list[str]) -> str:
    if returncode is None:
        how = f"the worker was still not gone {sandbox.REAP_S:g} s after it was killed (stuck in the kernel?)"
    elif returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        how = f"the worker was killed by {name}"
        if name == "SIGKILL":
            how += " (out of host memory?)"
    else:
        how = f"the worker exited with status {returncode} without a result"
    last = last_error_line(tail)
    return f"{how}: {last}" if last else how
