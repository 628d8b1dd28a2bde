"""Process hygiene for code that runs candidates: nothing outlives the evaluation, nothing grows unbounded.

Every process of one evaluation carries a marker in its environment (``EVALUATION_ENV``: the judge,
its contestants and whatever they start, including a ``setsid`` double-fork that left the process
tree). Ending an evaluation kills the tree under its root and every marked process, and repeats
until none is left, so an escapee that was mid-fork is caught on the next pass.

- ``spawn``: a child that dies with its parent (``PR_SET_PDEATHSIG``), in its own session, with the
  marker, its own working directory and only the file descriptors it is given.
- ``become_subreaper``: orphans of this process's descendants are re-parented to it rather than
  to init, so they stay in its tree (Linux ``PR_SET_CHILD_SUBREAPER``).
- ``Watch``: a process tree's resident memory and process count, polled (one thread and one scan
  of /proc for every tree of this process), and the tree killed, with a one-line reason, when
  either passes its limit.
- ``kill_evaluation``: the final sweep.

Linux only where it matters (``/proc``, ``prctl``); elsewhere the calls degrade to a process-group
kill and no limits.
"""
from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ladder.runner.own_builtins import BUILTINS as __builtins__  # noqa: F401  (see that module)
from ladder.runner.signals import interrupts_kept

EVALUATION_ENV = "LADDER_EVALUATION"
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_CHILD_SUBREAPER = 1, 4, 36
PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
PROC = Path("/proc")


def _prctl(option: int, value: int) -> bool:
    try:
        return ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def become_subreaper() -> bool:
    return _prctl(PR_SET_CHILD_SUBREAPER, 1)


def become_undumpable() -> bool:
    """Other processes of the same user can no longer open this one's /proc files (its pipes)."""
    return _prctl(PR_SET_DUMPABLE, 0)


def _child_setup(parent: int) -> Callable[[], None]:
    def setup() -> None:
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:  # the parent died before the line above took effect
            os._exit(1)
    return setup


def spawn(argv: list[str], *, env: dict[str, str], cwd: str | Path, pass_fds: tuple[int, ...] = (),
          stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) -> subprocess.Popen:
    """Start ``argv`` as a child that dies with this process, in a session of its own.

    A Ctrl-C during the fork is raised here, not dropped by Python's at-fork hooks (see
    ``signals.interrupts_kept``), and the child it interrupted is killed before it is."""
    process = None
    try:
        with interrupts_kept():
            process = subprocess.Popen(argv, env=env, cwd=str(cwd), pass_fds=pass_fds, stdin=stdin,
                                       stdout=stdout, stderr=stderr, start_new_session=True,
                                       preexec_fn=_child_setup(os.getpid()), text=True, errors="replace")
    except BaseException:
        if process is not None:
            process.kill()
            reap(process)
        raise
    return process


# ------------------------------------------------------------------------------ reading /proc


def _parents() -> dict[int, int]:
    """pid -> parent pid of every process visible in /proc."""
    parents = {}
    for entry in PROC.iterdir() if PROC.is_dir() else ():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # The command name is parenthesised and may hold spaces: the fields after it are fixed.
        fields = stat[stat.rfind(")") + 2:].split()
        parents[int(entry.name)] = int(fields[1])
    return parents


def descendants(root: int, parents: dict[int, int] | None = None) -> set[int]:
    children: dict[int, list[int]] = {}
    for pid, parent in (parents if parents is not None else _parents()).items():
        children.setdefault(parent, []).append(pid)
    found, pending = set(), [root]
    while pending:
        for child in children.get(pending.pop(), []):
            if child not in found:
                found.add(child)
                pending.append(child)
    return found


def marked(token: str) -> set[int]:
    """Processes whose environment carries this evaluation's marker."""
    needle = f"{EVALUATION_ENV}={token}".encode()
    found = set()
    for entry in PROC.iterdir() if PROC.is_dir() else ():
        if entry.name.isdigit():
            try:
                if needle in (entry / "environ").read_bytes().split(b"\0"):
                    found.add(int(entry.name))
            except OSError:
                continue
    return found


def resident_bytes(pids: set[int]) -> int:
    total = 0
    for pid in pids:
        try:
            total += int((PROC / str(pid) / "statm").read_text().split()[1]) * PAGE
        except (OSError, IndexError, ValueError):
            continue
    return total


def _alive(pid: int) -> bool:
    try:
        state = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return False
    return state[state.rfind(")") + 2:state.rfind(")") + 3] != "Z"


def kill_evaluation(root: int | None, token: str | None, *, rounds: int = 50) -> int:
    """SIGKILL the tree under ``root`` and every process marked with ``token`` (never this process
    or its ancestors), until none is left alive. Returns how many processes were signalled."""
    keep = {os.getpid()}
    pid = os.getpid()
    parents = _parents()
    while pid in parents and pid not in (0, 1):
        pid = parents[pid]
        keep.add(pid)
    signalled: set[int] = set()
    for _ in range(rounds):
        targets = set()
        if root is not None:
            targets |= descendants(root) | ({root} if _alive(root) else set())
        if token:
            targets |= marked(token)
        targets = {pid for pid in targets - keep if _alive(pid)}
        if not targets:
            break
        for target in targets:
            try:
                os.kill(target, signal.SIGKILL)
                signalled.add(target)
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(0.02)
    return len(signalled)


REAP_S = 30.0


def reap(process: subprocess.Popen, timeout_s: float = REAP_S) -> bool:
    """Wait for a process just killed, but not forever: False if it is still there after
    ``timeout_s`` (stuck in the kernel, as a process can be while a device driver tears its context
    down). The caller goes on; the evaluation's last ``kill_evaluation`` tries it again."""
    try:
        process.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return False
    return True


# ------------------------------------------------------------------------------ limits


@dataclass
class Limits:
    memory_bytes: int | None = None  # resident memory of the whole tree
    processes: int | None = None  # processes in the tree besides its root


def default_memory_limit() -> int:
    """Half the machine's memory, at most 64 GiB: a runaway candidate never takes the machine down."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        total = 16 << 30
    return min(total // 2, 64 << 30)


@dataclass(eq=False)
class Watch:
    """One process tree held to its limits; ``reason`` says why it was killed, if it was."""

    root: int
    limits: Limits
    reason: str | None = None
    peak_bytes: int = 0

    def start(self) -> "Watch":
        _PATROL.add(self)
        return self

    def stop(self) -> None:
        _PATROL.remove(self)

    def check(self, parents: dict[int, int]) -> bool:
        """Kill the tree if it passed a limit; False once there is nothing left to watch."""
        if not _alive(self.root):
            return False
        tree = descendants(self.root, parents)
        used = resident_bytes(tree | {self.root})
        self.peak_bytes = max(self.peak_bytes, used)
        if self.limits.memory_bytes and used > self.limits.memory_bytes:
            self._kill(f"exceeded the host memory limit of {_gib(self.limits.memory_bytes)} "
                       f"({_gib(used)} resident)", tree)
            return False
        if self.limits.processes is not None and len(tree) > self.limits.processes:
            self._kill(f"exceeded the process limit ({len(tree)} processes started, at most "
                       f"{self.limits.processes})", tree)
            return False
        return True

    def _kill(self, reason: str, tree: set[int]) -> None:
        self.reason = reason
        for pid in tree | {self.root}:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass


class _Patrol:
    """One thread checking every started ``Watch`` of this process: a single scan of /proc per round,
    however many contestants run (a thread and a scan each would hold the judge's interpreter, and
    delay its clock, in proportion to their number)."""

    interval_s = 0.05

    def __init__(self) -> None:
        self.watches: set[Watch] = set()
        self.lock = threading.Lock()
        self.thread: threading.Thread | None = None

    def add(self, watch: Watch) -> None:
        with self.lock:
            self.watches.add(watch)
            if self.thread is None:
                self.thread = threading.Thread(target=self._run, daemon=True, name="sandbox-patrol")
                self.thread.start()

    def remove(self, watch: Watch) -> None:
        with self.lock:
            self.watches.discard(watch)

    def _run(self) -> None:
        while True:
            time.sleep(self.interval_s)
            with self.lock:
                watches = list(self.watches)
                if not watches:
                    self.thread = None
                    return
            parents = _parents()
            for watch in watches:
                if not watch.check(parents):
                    self.remove(watch)


_PATROL = _Patrol()


def _gib(count: int) -> str:
    return f"{count / (1 << 30):.1f} GiB"
