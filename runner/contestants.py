"""Starting, watching and ending the contestants of one evaluation.

A contestant runs one solution, or the problem's reference for timing (``ladder.runner.contestant``).
``start`` gives it a process of its own: a fresh working directory, its log, two private pipes for
the protocol, the limits of ``ladder.runner.sandbox`` watched from here, and the environment its backend
needs before Triton is imported. ``local`` answers the same requests in this process (trusted code
only: the suite's own solutions, the reference). Either way the judge holds a ``Handle``.
"""
from __future__ import annotations

import os
import signal
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ladder.runner import sandbox
from ladder.runner.channel import LocalChannel, PipeChannel
from ladder.runner.errors import last_error_line
from ladder.runner.own_builtins import BUILTINS as __builtins__  # noqa: F401  (see that module)
from ladder.runner.paths import child_pythonpath, kernel_cache

LOG_TAIL = 200


@dataclass
class Handle:
    name: str
    channel: Any
    process: Any = None
    watch: sandbox.Watch | None = None
    log: Path | None = None
    folder: Path | None = None
    stopped: bool = field(default=False)

    def death(self) -> str:
        """One line: why the contestant's process is gone (a limit, a signal, its last error)."""
        if self.watch is not None and self.watch.reason:
            return self.watch.reason
        code = None
        if self.process is not None:
            try:
                code = self.process.wait(timeout=2.0)  # the pipe closes a moment before the process ends
            except Exception:
                code = self.process.poll()
        if code is None:
            how = "the contestant stopped answering"
        elif code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            how = f"the contestant's process was killed by {name}" + (" (out of host memory?)" if name == "SIGKILL" else "")
        else:
            how = f"the contestant's process exited with status {code}"
        last = last_error_line(_tail(self.log))
        return f"{how}: {last}" if last else how

    def stop(self, token: str | None) -> None:
        if self.stopped:
            return
        self.stopped = True
        if self.process is not None:
            if self.watch is not None:
                self.watch.stop()
            sandbox.kill_evaluation(self.process.pid, None)
            sandbox.reap(self.process)
            self.channel.close()


def start(name: str, backend: Any, exchange: Path, limits: sandbox.Limits, token: str,
          solution: Path | None = None) -> Handle:
    """A contestant in a process of its own (see the module docstring). With ``solution`` (candidate
    code), it also gets a Triton kernel cache and a temporary folder of its own (``private_folders``)."""
    folder = Path(tempfile.mkdtemp(prefix=f"contestant-{name}-", dir=exchange))
    log = folder / "log.txt"
    to_child_read, to_child_write = os.pipe()
    from_child_read, from_child_write = os.pipe()
    env = dict(os.environ)
    env["PYTHONPATH"] = child_pythonpath(env.get("PYTHONPATH"))
    env.update(backend.env)
    if solution is not None:
        env.update(private_folders(solution, folder))
    env.update({"PYTHONUNBUFFERED": "1", "LADDER_BACKEND": getattr(backend, "spec", backend.name), "LADDER_CONTESTANT": name,
                sandbox.EVALUATION_ENV: token})
    with open(log, "w") as output:
        process = sandbox.spawn([sys.executable, "-m", "ladder.runner.contestant", str(to_child_read), str(from_child_write)],
                                env=env, cwd=folder, pass_fds=(to_child_read, from_child_write),
                                stdout=output, stderr=output)
    os.close(to_child_read)
    os.close(from_child_write)
    handle = Handle(name, None, process=process, log=log, folder=folder)
    handle.channel = PipeChannel(process, to_child_write, from_child_read, handle.death)
    handle.watch = sandbox.Watch(process.pid, limits).start()
    return handle


def private_folders(solution: Path, folder: Path) -> dict[str, str]:
    """``TRITON_CACHE_DIR`` and ``TMPDIR`` for a contestant running ``solution``.

    Contestants shared one kernel cache, and Triton's cache manager writes wherever it is told, so
    candidate code could put entries under any key, the best's kernels' included, and have the best
    load slower kernels than it compiled. Each solution now compiles into a cache of its own, named
    by its source's hash (the best and the initial version keep theirs from round to round, and what
    a candidate compiles lands only in its own), and its temporary files (the compilers' inputs)
    go to a folder of its own; the sentinel allows Triton's writes in those two places only."""
    cache, scratch = kernel_cache(solution), folder / "tmp"
    for path in (cache, scratch):
        path.mkdir(parents=True, exist_ok=True)
    return {"TRITON_CACHE_DIR": str(cache), "TMPDIR": str(scratch)}


def local(name: str, backend: Any, tracer: Any) -> Handle:
    from ladder.runner.contestant import Contestant

    return Handle(name, LocalChannel(Contestant(name, sandboxed=False, backend=backend, tracer=tracer).handle))


def _tail(log: Path | None) -> list[str]:
    if log is None or not log.is_file():
        return []
    try:
        return log.read_text(errors="replace").splitlines()[-LOG_TAIL:]
    except OSError:
        return []
