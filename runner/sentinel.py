"""Tampering by candidate code, caught in the process it runs in.

The contestant process (``ladder.runner.contestant``) arms a ``Sentinel`` before the solution is imported.
What it does, each a named protection in ``PROTECTIONS``:

- ``timing``: the timing primitives (device events, synchronize, the host clock) are bound now and
  the runner calls only the bound ones; ``timing_intact()`` reports any that were replaced since.
- ``audit``: a CPython audit hook (PEP 578), which nothing can remove once added. It refuses, from
  candidate code: writing or changing files (Triton may write for it only in the contestant's own
  kernel cache and temporary folder), reading the judge's exchange folder or another
  process's /proc files, starting processes, sending signals, taking frames (``sys._getframe``, a
  traceback's or a generator's frame, ``sys._current_frames``), walking the garbage collector,
  installing trace, profile or audit functions, ctypes, and running code it compiled itself (exec,
  eval, compile, new code objects; text handed to ``timeit``, ``doctest``, ``pickle`` or typing's
  forward references counts as compiled by whoever handed it, see ``asks_itself``). CPython raises
  these events in the primitives themselves, so they hold whatever name the primitive is reached by
  (``posix``, an alias, a wrapper's original).
- ``threads``: starting threads (no audit event covers them): work on another thread escapes the
  timed region and the recorders, whose modes are per thread.
- ``descriptors``: writing to file descriptors (``os.write``...): the protocol's pipes are the runner's.
- ``signal-handlers``: signal handlers and timers, whose code runs whenever the signal comes,
  after forward returned and outside the recorders.
- ``compilers``: TorchScript, tracing, ``torch.compile`` and ``torch.export``; ``ladder.runner.compiled``
  finds such callables a model already holds.
- ``recorder-switches``: the torch entry points that pop, disable or hand out the recorders' modes
  (the stacks are also checked after every call).
- ``graphs``: capturing or replaying CUDA graphs, whose kernels bypass Triton's launcher.
- ``triton-ops``: operators registered with ``torch.library.triton_op`` are remembered (the
  recorder allows calling them), and every kernel registered for them (their body, or one
  registered over it) runs under recorders of its own; candidate code registers kernels for no
  other operator.
- ``harness``: candidate code cannot import ladder's own packages; the loaded ones (and the
  contestant's ``__main__``) leave ``sys.modules``; their classes and globals, and the problem's
  module, are snapshotted (``ladder.runner.snapshots``): ``intact()`` reports any change.
- ``libraries``: so are torch's, ``torch.Tensor``'s and the random generators' namespaces, with
  which the inputs are built, as far as the names they had when armed.
- and the instances the guards decide by (the contestant, the launch tracer, this sentinel, the
  tally of torch calls) are sealed once armed (``ladder.runner.seal``), also checked by ``intact()``.

Who is asking is decided by walking the stack outward from the request (``acting_for_candidate``):
a frame of the solution's file or of a file beside it (the problem file excepted), or of code run
with such a file's globals, is the candidate's; a frame of the runner (this module's wrappers
excepted) is the harness's own; a frame of a library trusted with that kind of request
(``DELEGATES``: Triton caches kernels and runs its compilers, torch manages its own modes) is that
library's, and so is the body of one of torch's or Triton's modules being imported (torch imports
parts of itself lazily, on a candidate's first call to them). Every other frame (the standard library, other libraries, torch where it is not
trusted) is looked through: ``torch.save`` called by a candidate is the candidate's write, Triton
writing its cache from inside a candidate's forward is Triton's.
"""
from __future__ import annotations

import itertools
import os
import re
import sys
import sysconfig
import tempfile
import threading
import time
from pathlib import Path
from types import MappingProxyType
from typing import Any, Callable, Mapping

from ladder.runner import snapshots
from ladder.runner.own_builtins import BUILTINS as __builtins__  # noqa: F401  (see that module)
from ladder.runner.seal import held, reseal
from ladder.runner.snapshots import RUNNER

_SELF = __file__
# Code that is never the candidate's, wherever the solution's folder is: the interpreter's libraries
# and environment, and the runner's own packages.
INSTALLED = tuple(sorted({os.path.join(folder, "") for folder in (
    *(sysconfig.get_paths()[key] for key in ("stdlib", "platstdlib", "purelib", "platlib")),
    sys.prefix, sys.exec_prefix, sys.base_prefix, *(os.path.join(os.path.dirname(RUNNER[:-1]), name)
                                                   for name in snapshots.HARNESS_PACKAGES))}))
_getframe = sys._getframe  # bound before any candidate code runs
# Whether the audit hook is deciding on this thread (taking a frame raises an event of its own): kept
# here, not on the sentinel, where candidate code that reached it could switch the hook off.
_AUDITING = threading.local()

# Libraries that may make each kind of request while a candidate's call is on the stack.
DELEGATES: dict[str, tuple[str, ...]] = {
    "files": ("triton",),  # its kernel cache
    "processes": ("triton",),  # the compilers it runs
    "descriptors": ("triton",),
    "threads": ("triton", "torch"),
    "introspection": ("triton", "torch"),
    "native": ("triton", "torch"),
    "compilers": ("triton", "torch"),
    "code": ("triton", "torch"),  # Triton's binders and interpreter, torch's own generated code
    "recorders": ("torch",),  # entering and leaving modes is torch's own bookkeeping
    "graphs": ("triton",),  # its CUDA-graph benchmarker
    "signals": (),
    "tracing": (),
    "imports": (),
    "operators": (),
}
WRITE_MODES = frozenset("wax+")
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC
FRAME_ATTRIBUTES = frozenset({"tb_frame", "gi_frame", "cr_frame", "ag_frame"})
# Standard modules that compile code for their own use while a candidate's definitions run (a
# dataclass's __init__, a named tuple's __new__) or import a module's source.
OWN_CODE = frozenset({"dataclasses", "collections", "importlib", "_frozen_importlib", "_frozen_importlib_external"})
PROC_ENTRY = re.compile(r"/proc/(\d+)(/|$)")


class Refused(PermissionError):
    """What candidate code asked for is not allowed in an evaluation (the message says what)."""


class Sentinel:
    def __init__(self, solution: str | Path, problem: str | Path | None, guards: Any,
                 exchange: str | Path | None = None, modules: tuple = (), problem_module: Any = None,
                 problem_constants: frozenset = frozenset()):
        solution = Path(solution).resolve()
        self.solution = str(solution)
        self.folder = str(solution.parent) + os.sep
        self.problem = str(Path(problem).resolve()) if problem else None
        self.exchange = str(Path(exchange).resolve()) + os.sep if exchange else None
        self.violations: list[str] = []
        self.refused = itertools.count()  # every refusal, which candidate code cannot take back (runner.seal)
        # What the sentinel decides by once armed cannot change in place: the seal (``ladder.runner.seal``)
        # compares each attribute by identity.
        self.triton_ops: frozenset[str] = frozenset()
        self.bound: Mapping[str, tuple[Any, str, Any]] = MappingProxyType({})
        self.libraries: Mapping[str, str] = MappingProxyType({})  # library name -> its folder
        self.library_folders: tuple[str, ...] = ()
        self._recorder_code: frozenset = frozenset()  # frames between a torch call and its caller, recorded
        self.delegates: Mapping[str, tuple[str, ...]] = MappingProxyType({})  # kind of request -> trusted folders
        self._hook_chains: Mapping[str, tuple] = MappingProxyType({})
        self._hook_values: Mapping[str, Any] = MappingProxyType({})
        self._harness: tuple[snapshots.Snapshot, ...] = ()  # what the runner relies on, as it was when armed
        self.write_roots: tuple[str, ...] = ()  # where Triton may write for a candidate: its own cache and temp folder
        self.guards = guards  # runner.guards as the contestant loaded it (hidden from candidates once armed)
        self.modules = modules  # modules besides the runner's whose code the runner relies on (the backend's)
        self.recording: Callable[[], Any] | None = None  # set by the contestant: nested recorders
        # The loaded problem: the contestant builds every input with its get_inputs(), so what it holds
        # (its functions, the modules it calls) is snapshotted too, all but the case constants the
        # runner sets on it per case.
        self.problem_module = problem_module
        self.problem_constants = frozenset(problem_constants)

    # The seal of the runner's objects, made once armed (``ladder.runner.seal.hold``) and held outside
    # the sentinel: read-only here, so candidate code can neither drop it nor replace it.
    seal = property(held)

    # ------------------------------------------------------------------ who is asking

    def is_candidate_file(self, filename: str) -> bool:
        """The solution, and any file in its folder but the problem and installed code (an environment
        or the runner's checkout under that folder): a module in a hidden folder beside it, put on
        ``sys.path`` by the solution, is the candidate's as much as the solution is."""
        return filename == self.solution or (filename.startswith(self.folder) and filename != self.problem
                                             and not filename.startswith(INSTALLED))

    def is_candidate_frame(self, frame: Any) -> bool:
        # Code a candidate exec'd runs with its globals, whatever its file name.
        return (self.is_candidate_file(frame.f_code.co_filename)
                or self.is_candidate_file(str(frame.f_globals.get("__file__") or "")))

    def acting_for_candidate(self, kind: str, frame: Any = None) -> bool:
        """Whether the request of this kind, made from ``frame`` (default: the caller's caller), is
        the candidate's (see the module docstring)."""
        frame = frame if frame is not None else _getframe(2)
        trusted = (RUNNER, *self.delegates.get(kind, ()))
        while frame is not None:
            filename = frame.f_code.co_filename
            if filename != _SELF:
                if self.is_candidate_frame(frame):
                    return True
                if filename.startswith(trusted) or (frame.f_code.co_name == "<module>"
                                                    and filename.startswith(self.library_folders)):
                    return False
            frame = frame.f_back
        return False

    def torch_called_by_candidate(self) -> bool:
        """Whether the torch call a recorder is judging was made by candidate code (``LaunchTracer.
        triton_is_acting``): looking through the recorders' own frames, torch's, and every frame of
        neither Triton nor the runner, a candidate frame comes before one of theirs.

        Not only the first frame past torch: candidate code Triton or the runner reaches without
        knowing it (a property of an argument that the launch tracer or the autotuner reads, a kernel
        body under the interpreter) can hand torch to the standard library to call
        (`contextlib.ExitStack.callback`), whose frame is then the caller."""
        frame = _getframe(1)
        owners = (self.libraries["triton"], RUNNER)
        while frame is not None:
            code = frame.f_code
            if code not in self._recorder_code and not code.co_filename.startswith(self.libraries["torch"]):
                if self.is_candidate_frame(frame):
                    return True
                if code.co_filename.startswith(owners) and code.co_filename != _SELF:
                    return False
            frame = frame.f_back
        return False

    def refuse(self, what: str) -> None:
        message = f"candidate code {what}"
        next(self.refused)
        if message not in self.violations:
            self.violations.append(message)
        raise Refused(message)

    # ------------------------------------------------------------------ arming

    def arm(self) -> None:
        import torch
        import triton

        self.libraries = MappingProxyType({library.__name__: os.path.dirname(library.__file__) + os.sep
                                           for library in (triton, torch)})
        self.library_folders = tuple(self.libraries.values())
        self._recorder_code = self.guards.recorder_code()
        self.delegates = MappingProxyType({kind: tuple(self.libraries[name] for name in names)
                                           for kind, names in DELEGATES.items()})
        self.write_roots = tuple(os.path.realpath(folder) + os.sep
                                 for folder in (triton.knobs.cache.dir, tempfile.gettempdir()))
        for protection in PROTECTIONS.values():
            protection(self)

    def _guard(self, owner: Any, name: str, kind: str, what: str) -> None:
        """Replace ``owner.name`` by a wrapper that refuses requests of this kind from candidate code."""
        original = getattr(owner, name, None)
        if original is None:
            return
        sentinel = self

        def guarded(*args, **kwargs):
            if sentinel.acting_for_candidate(kind):
                sentinel.refuse(what)
            return original(*args, **kwargs)

        setattr(owner, name, guarded)

    # ------------------------------------------------------------------ after every call

    def intact(self) -> str | None:
        """The first tampering seen so far, or None: refusals, replaced primitives, foreign hooks,
        changed harness code, the runner's objects changed (``ladder.runner.seal``)."""
        if self.violations:
            return self.violations[0]
        if getattr(_AUDITING, "busy", False):  # only ever on inside the hook, never when the runner checks
            return "candidate code switched the audit hook off"
        seal = held(self)
        return (self.timing_intact() or self._hooks_intact() or self._harness_intact()
                or (seal.broken() if seal is not None else None))

    def timing_intact(self) -> str | None:
        """The first timing primitive replaced since arming, or None (cheap: checked after every call)."""
        for label, (owner, name, original) in self.bound.items():
            if getattr(owner, name, None) is not original:
                return f"candidate code replaced {label} (the timing primitives)"
        return None

    def _hooks_intact(self) -> str | None:
        from triton import knobs

        for name, calls in self._hook_chains.items():
            if tuple(getattr(knobs.runtime, name).calls) != calls:
                return f"candidate code installed a Triton {name.replace('_', ' ')}"
        for name, value in self._hook_values.items():
            if getattr(knobs.runtime, name, None) is not value:
                return f"candidate code set Triton's {name}"
        return None

    def _harness_intact(self) -> str | None:
        return snapshots.first_change(self._harness)

    def snapshot_hooks(self) -> None:
        """The Triton hooks as the runner installed them: any other is the candidate's."""
        from triton import knobs

        self._hook_chains = MappingProxyType({name: tuple(getattr(knobs.runtime, name).calls) for name in (
            "launch_enter_hook", "launch_exit_hook", "kernel_load_start_hook", "kernel_load_end_hook")})
        self._hook_values = MappingProxyType({name: getattr(knobs.runtime, name, None) for name in (
            "jit_cache_hook", "jit_post_compile_hook", "add_stages_inspection_hook")})

    # ------------------------------------------------------------------ the audit hook

    def audit(self, event: str, args: tuple) -> None:
        """Refuse the audited requests of candidate code (``AUDITED``)."""
        rule = AUDITED.get(event)
        if rule is None or getattr(_AUDITING, "busy", False):
            return
        kind, describe = rule
        what = describe(self, event, args)
        if what is None:
            return
        if isinstance(what, tuple):  # the arguments decide the kind (a write inside or outside the cache)
            kind, what = what
        _AUDITING.busy = True  # taking the frame below raises an event of its own
        try:
            frame = _getframe(1)
            decide = ASKING.get(kind, Sentinel.acting_for_candidate)
            asking = frame.f_code.co_filename != _SELF and decide(self, kind, frame)
        finally:
            _AUDITING.busy = False
        if asking:
            self.refuse(what)

    def asks_itself(self, kind: str, frame: Any) -> bool:
        """Code compiling code. Where the immediate caller is the standard library generating code for
        its own use (``OWN_CODE``: dataclasses, named tuples) or importing a module, only that caller
        counts, and it is not the candidate. Otherwise whoever is asking, walking outward: timeit,
        doctest, pickle and typing's forward references all run text their caller hands them, and
        code objects made by hand (``code.replace``) can claim any file name; Triton and torch
        compile for themselves (``DELEGATES``)."""
        if str(frame.f_globals.get("__name__") or "").split(".")[0] in OWN_CODE:
            return False
        return self.acting_for_candidate(kind, frame)

    def takes_frame(self, kind: str, frame: Any) -> bool:
        """A frame taken by candidate code itself, or through a function that hands the frames it takes to
        its caller (``FRAME_GIVERS``); the standard library taking frames for its own use (named tuples
        read their caller's module name) is not the candidate taking one."""
        while frame is not None and (frame.f_globals.get("__name__"), frame.f_code.co_name) in FRAME_GIVERS:
            frame = frame.f_back
        return frame is not None and self.is_candidate_frame(frame)

    def _opened(self, event: str, args: tuple) -> str | tuple[str, str] | None:
        path, mode, flags = (tuple(args) + (None, None, None))[:3]
        if WRITE_MODES & set(str(mode or "")) or (isinstance(flags, int) and flags & WRITE_FLAGS):
            return self._written((path,), "opened a file for writing")
        return self._read(path)

    def _changed(self, event: str, args: tuple) -> tuple[str, str]:
        paths = args[:2] if event in TWO_PATHS else args[:1]
        return self._written(paths, f"changed files on disk ({event})")

    def _written(self, paths: tuple, what: str) -> tuple[str, str]:
        """A write is a ``files`` request (Triton may make it for a candidate: its kernel cache) only
        inside the contestant's own cache and temporary folder; anywhere else it is a ``writes``
        request, which no library makes on a candidate's behalf: through Triton's cache manager a
        candidate could otherwise write any cache entry, another contestant's kernels included."""
        inside = all(self._in_write_roots(path) for path in paths)
        return ("files", what) if inside else ("writes", f"{what} outside its own kernel cache and temporary folder")

    def _in_write_roots(self, path: Any) -> bool:
        if isinstance(path, int) or path is None:
            return False
        try:
            resolved = os.path.realpath(os.fsdecode(path))
        except (TypeError, ValueError):
            return False
        return (resolved + os.sep).startswith(self.write_roots)

    def _listed(self, event: str, args: tuple) -> str | None:
        return self._read(args[0] if args and args[0] is not None else ".")

    def _read(self, path: Any) -> str | None:
        """Why reading ``path`` is refused: the judge's exchange folder, another process's /proc."""
        if isinstance(path, int):
            return None
        try:
            resolved = os.path.realpath(os.fsdecode(path))
        except (TypeError, ValueError):
            return None
        if self.exchange and (resolved + os.sep).startswith(self.exchange):
            return "read the judge's exchange folder (other contestants' outputs)"
        entry = PROC_ENTRY.match(resolved + os.sep)
        if entry and int(entry.group(1)) != os.getpid():
            return "read another process's /proc files (its memory or environment)"
        return None


# ---------------------------------------------------------------------------- audited events


def _always(message: str) -> Callable[[Sentinel, str, tuple], str]:
    return lambda sentinel, event, args: message.format(event=event)


def _frame_attribute(sentinel: Sentinel, event: str, args: tuple) -> str | None:
    name = args[1] if len(args) > 1 else None
    return f"took a frame through .{name} (a traceback's or a generator's)" if name in FRAME_ATTRIBUTES else None


_FILE_CHANGES = ("os.remove", "os.rename", "os.rmdir", "os.truncate", "os.chmod", "os.chown", "os.chflags",
                 "os.lchflags", "os.link", "os.symlink", "os.mkdir", "os.utime", "os.setxattr", "os.removexattr",
                 "shutil.rmtree", "shutil.move", "shutil.copyfile", "shutil.copytree")
TWO_PATHS = frozenset({"os.rename", "os.link", "os.symlink", "shutil.move", "shutil.copyfile", "shutil.copytree"})
_PROCESSES = ("os.fork", "os.forkpty", "os.exec", "os.posix_spawn", "os.spawn", "os.system", "os.startfile",
              "subprocess.Popen")
_NATIVE = ("ctypes.dlopen", "ctypes.dlsym", "ctypes.dlsym/handle", "ctypes.cdata", "ctypes.cdata/buffer",
           "ctypes.string_at", "ctypes.wstring_at", "ctypes.call_function", "ctypes.addressof",
           "ctypes.PyObj_FromPtr", "ctypes.create_string_buffer", "ctypes.create_unicode_buffer")

# Functions that take a frame and hand it (or frames reached from it) to their caller.
FRAME_GIVERS = frozenset({("logging", "<lambda>"), ("inspect", "currentframe"), ("inspect", "stack"),
                          ("inspect", "trace"), ("inspect", "getouterframes"), ("inspect", "getinnerframes"),
                          ("traceback", "walk_stack"), ("traceback", "walk_tb")})
# How the audited kinds of request that do not walk the whole stack decide whether the candidate asks.
ASKING: Mapping[str, Callable[[Sentinel, str, Any], bool]] = MappingProxyType({
    "code": Sentinel.asks_itself,
    "frames": Sentinel.takes_frame,
})

# event -> (kind of request, why it is refused, or None when these arguments are fine). Read-only, as
# every table read after arming: the snapshot of this module compares it by identity, so an event
# taken out of it in place would go unseen.
AUDITED: Mapping[str, tuple[str, Callable[[Sentinel, str, tuple], str | None]]] = MappingProxyType({
    "open": ("files", Sentinel._opened),
    "os.listdir": ("files", Sentinel._listed),
    "os.scandir": ("files", Sentinel._listed),
    **{event: ("files", Sentinel._changed) for event in _FILE_CHANGES},
    **{event: ("processes", _always("started a process ({event})")) for event in _PROCESSES},
    **{event: ("signals", _always("sent a signal ({event})"))
       for event in ("os.kill", "os.killpg", "signal.pthread_kill")},
    "sys._getframe": ("frames", _always("took a stack frame (sys._getframe, inspect, logging)")),
    "sys._current_frames": ("frames", _always("took the threads' frames (sys._current_frames)")),
    "object.__getattr__": ("frames", _frame_attribute),
    **{event: ("introspection", _always(f"walked the process's objects ({event})"))
       for event in ("gc.get_objects", "gc.get_referrers", "gc.get_referents")},
    **{event: ("tracing", _always("installed a trace, profile or audit function ({event})"))
       for event in ("sys.settrace", "sys.setprofile", "sys.addaudithook", "sys.monitoring.register_callback")},
    **{event: ("native", _always("used ctypes ({event}): raw memory and native calls")) for event in _NATIVE},
    **{event: ("code", _always("ran code it compiled itself ({event})"))
       for event in ("exec", "compile", "code.__new__")},
})


# ---------------------------------------------------------------------------- the protections


def _timing(sentinel: Sentinel) -> None:
    import torch

    entries = [("time.perf_counter", time, "perf_counter"), ("time.monotonic", time, "monotonic")]
    for module_name in ("cuda", "npu"):
        module = getattr(torch, module_name, None)
        if module is None or not hasattr(module, "Event"):
            continue
        entries += [(f"torch.{module_name}.Event", module, "Event"),
                    (f"torch.{module_name}.synchronize", module, "synchronize")]
        event = getattr(module, "Event")
        entries += [(f"torch.{module_name}.Event.{name}", event, name)
                    for name in ("record", "elapsed_time", "synchronize") if hasattr(event, name)]
    sentinel.bound = MappingProxyType({label: (owner, name, getattr(owner, name)) for label, owner, name in entries})


def _audit(sentinel: Sentinel) -> None:
    import torch

    sys.addaudithook(sentinel.audit)
    # torch.save writes through its own C++ writer, which raises no event.
    for owner, name in ((torch, "save"), (torch._C, "PyTorchFileWriter")):
        sentinel._guard(owner, name, "files", f"wrote a file ({owner.__name__}.{name})")


def _threads(sentinel: Sentinel) -> None:
    import _thread

    thread = "started a thread (work from another thread escapes the timed region and the recorders)"
    sentinel._guard(threading.Thread, "start", "threads", thread)
    for owner, name in ((_thread, "start_new_thread"), (_thread, "start_new"), (threading, "_start_new_thread")):
        sentinel._guard(owner, name, "threads", thread)


def _descriptors(sentinel: Sentinel) -> None:
    import posix

    for owner in (os, posix):  # os re-exports posix's functions: guard both names
        for name in ("write", "writev", "pwrite", "pwritev", "sendfile", "dup2"):
            sentinel._guard(owner, name, "descriptors",
                            f"wrote to a file descriptor (os.{name}): the protocol's pipes are the runner's")


def _signal_handlers(sentinel: Sentinel) -> None:
    import _signal
    import signal

    for owner in (signal, _signal):
        for name in ("signal", "setitimer", "alarm", "set_wakeup_fd", "siginterrupt"):
            sentinel._guard(owner, name, "signals", f"installed a signal handler or timer (signal.{name}): its "
                                                    "code runs when the signal comes, after forward returned")


def _compilers(sentinel: Sentinel) -> None:
    import torch

    for owner, name in ((torch, "compile"), (torch.jit, "script"), (torch.jit, "trace"), (torch.jit, "load"),
                        (torch.jit, "trace_module"), (torch.fx, "symbolic_trace")):
        label = f"torch.{'' if owner is torch else owner.__name__.split('.', 1)[1] + '.'}{name}"
        sentinel._guard(owner, name, "compilers", f"called {label}")
    export = getattr(torch, "export", None)
    if export is not None and hasattr(export, "export"):
        sentinel._guard(export, "export", "compilers", "called torch.export.export")


def _recorder_switches(sentinel: Sentinel) -> None:
    import torch
    import torch.overrides
    import torch.utils._python_dispatch as python_dispatch

    for name in ("DisableTorchFunction", "DisableTorchFunctionSubclass", "_DisableTorchDispatch",
                 "_pop_torch_function_stack", "_pop_torch_dispatch_stack", "_set_torch_function_mode",
                 "_push_on_torch_function_stack", "_push_on_torch_dispatch_stack"):
        sentinel._guard(torch._C, name, "recorders", f"called torch._C.{name} (switching the recorders off)")
    for owner, names in ((torch._C, ("_get_function_stack_at", "_get_dispatch_stack_at", "_get_dispatch_mode")),
                         (torch.overrides, ("_get_current_function_mode", "_get_current_function_mode_stack",
                                            "_pop_mode", "_pop_mode_temporarily", "_push_mode")),
                         (python_dispatch, ("_get_current_dispatch_mode", "_get_current_dispatch_mode_stack",
                                            "_pop_mode", "_pop_mode_temporarily", "_push_mode",
                                            "_disable_current_modes"))):
        for name in names:
            sentinel._guard(owner, name, "recorders",
                            f"reached the recorders through torch's mode stacks ({owner.__name__}.{name})")


def _graphs(sentinel: Sentinel) -> None:
    import torch

    graph = getattr(getattr(torch, "cuda", None), "CUDAGraph", None)
    what = "captured or replayed a CUDA graph (its kernels bypass Triton's launcher and the launch guards)"
    for owner in {graph, *getattr(graph, "__bases__", ())} - {None, object}:
        for name in ("capture_begin", "replay", "instantiate"):
            sentinel._guard(owner, name, "graphs", what)
    sentinel._guard(torch.cuda, "make_graphed_callables", "graphs", what)


def _remember_triton_ops(sentinel: Sentinel, names: frozenset[str]) -> None:
    """The operators registered through ``torch.library.triton_op`` (the recorders allow calling them),
    sealed anew: a frozenset, replaced whole, so no name joins it in place unseen. Not a method: candidate
    code that reached the sentinel would call it to seal a name of its choosing."""
    sentinel.triton_ops = names
    reseal(sentinel, "sentinel", "triton_ops")


def _triton_ops(sentinel: Sentinel) -> None:
    import torch.library

    original_op, original_impl = torch.library.triton_op, torch.library.Library.impl

    def triton_op(name: str, fn: Callable | None = None, /, *, mutates_args: Any, schema: str | None = None):
        """The operator is remembered only if it is registered: a name whose registration failed (one of
        torch's own, ``aten::mm``) would have made that operator free in the recorders."""
        if fn is None:  # used as a decorator: registered when applied
            return lambda body: triton_op(name, body, mutates_args=mutates_args, schema=schema)
        known = sentinel.triton_ops
        _remember_triton_ops(sentinel, known | {name})  # its kernels are registered while it is
        try:
            return original_op(name, fn, mutates_args=mutates_args, schema=schema)
        except BaseException:
            _remember_triton_ops(sentinel, known)
            raise

    def impl(library: Any, op_name: Any, fn: Callable, *args: Any, **kwargs: Any) -> Any:
        """Every kernel registered for a Triton op (its body, or one registered over it later) runs
        under recorders of its own; candidate code registers kernels for no other operator."""
        qualified = str(op_name if isinstance(op_name, str) else getattr(op_name, "_name", op_name)).split(".")[0]
        qualified = qualified if "::" in qualified else f"{library.ns}::{qualified}"
        if qualified not in sentinel.triton_ops:
            if sentinel.acting_for_candidate("operators"):
                sentinel.refuse(f"registered a kernel for {qualified} (torch.library)")
            return original_impl(library, op_name, fn, *args, **kwargs)

        def recorded(*call_args: Any, **call_kwargs: Any) -> Any:
            with sentinel.guards.unjudged(), sentinel.recording():
                return fn(*call_args, **call_kwargs)

        return original_impl(library, op_name, recorded, *args, **kwargs)

    torch.library.triton_op = triton_op
    torch.library.Library.impl = impl
    sentinel._guard(torch.library.Library, "fallback", "operators", "registered a fallback kernel (torch.library)")


def _harness(sentinel: Sentinel) -> None:
    sentinel._harness += tuple(snapshots.harness(sentinel))


def _libraries(sentinel: Sentinel) -> None:
    sentinel._harness += tuple(snapshots.libraries())


PROTECTIONS: dict[str, Callable[[Sentinel], None]] = {
    "timing": _timing,
    "threads": _threads,
    "descriptors": _descriptors,
    "signal-handlers": _signal_handlers,
    "compilers": _compilers,
    "recorder-switches": _recorder_switches,
    "graphs": _graphs,
    "triton-ops": _triton_ops,
    "harness": _harness,  # after the protections that import from the harness while arming
    "audit": _audit,  # arming itself opens and imports nothing from here on
    "libraries": _libraries,  # last: after every protection that guards a library's function
}
