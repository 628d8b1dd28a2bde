"""Run the worker in a subprocess with a wall-clock timeout; the caller survives whatever happens.

``run_worker(request, timeout)`` starts ``python -m runner.worker`` with this interpreter, the
repository on ``PYTHONPATH`` and its own process group, relays its progress events, and kills the
whole group at the timeout (and after a normal exit, so nothing it started lingers). It returns
``WorkerOutcome``: the worker's result when it wrote one, otherwise a one-line reason (timeout,
signal, the last error line of its output) and the last progress event, which names the solution
and stage that were running.
"""
from __future__ import annotations

import collections
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from runner.worker import EVENT_PREFIX

REPOSITORY = Path(__file__).resolve().parent.parent
TAIL_LINES = 60


@dataclass
class WorkerOutcome:
    result: dict[str, Any] | None  # the worker's result file, when it wrote one
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
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPOSITORY), env.get("PYTHONPATH")]))
    env.setdefault("PYTHONUNBUFFERED", "1")
    env.update(extra or {})
    return env


def run_worker(request: dict[str, Any], timeout: float,
               on_event: Callable[[dict], None] = lambda event: None,
               env: dict[str, str] | None = None) -> WorkerOutcome:
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="ladder-worker-") as folder:
        request_path, result_path = Path(folder) / "request.json", Path(folder) / "result.json"
        request_path.write_text(json.dumps(request))
        process = subprocess.Popen(
            [sys.executable, "-m", "runner.worker", str(request_path), str(result_path)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
            env=worker_environment(env), start_new_session=True, text=True, errors="replace")
        events: list[dict] = []
        tail: collections.deque[str] = collections.deque(maxlen=TAIL_LINES)

        def read(stream, parse_events: bool) -> None:
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

        readers = [threading.Thread(target=read, args=(process.stdout, False), daemon=True),
                   threading.Thread(target=read, args=(process.stderr, True), daemon=True)]
        for reader in readers:
            reader.start()
        timed_out = not _wait_unreaped(process, timeout)
        _kill_group(process)  # also whatever the candidate or torch.compile left running
        for reader in readers:
            reader.join(timeout=5)
        elapsed = time.monotonic() - started
        result = None
        if result_path.is_file():
            try:
                result = json.loads(result_path.read_text())
            except json.JSONDecodeError:
                result = None
    outcome = WorkerOutcome(result=result, status="ok", events=events, log_tail=list(tail),
                            elapsed_s=elapsed)
    if timed_out:
        outcome.status, outcome.reason = "timeout", f"timed out after {timeout:g} s (killed)"
    elif result is None:
        outcome.status, outcome.reason = "crash", _crash_reason(process.returncode, outcome.log_tail)
    return outcome


def _wait_unreaped(process: subprocess.Popen, timeout: float) -> bool:
    """Wait until the worker exits (True) or the timeout passes (False), without reaping it: while
    it is an unreaped zombie its pid, which names its process group, cannot be reused."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
            return True
        time.sleep(0.05)
    return False


def _kill_group(process: subprocess.Popen) -> None:
    """SIGKILL the worker's process group (the worker leads it), then reap the worker."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    process.wait()


def _crash_reason(returncode: int, tail: list[str]) -> str:
    if returncode is not None and returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        how = f"the worker was killed by {name}"
        if name == "SIGKILL":
            how += " (out of host memory?)"
    else:
        how = f"the worker exited with status {returncode} without a result"
    last = _last_error_line(tail)
    return f"{how}: {last}" if last else how


def _last_error_line(tail: list[str]) -> str | None:
    for line in reversed(tail):
        text = line.strip()
        if text and ("Error" in text or "error" in text or "Fatal" in text or "Aborted" in text):
            return text[:300]
    return None
