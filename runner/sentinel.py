"""Tampering by candidate code, caught in the process it runs in.

The contestant process (``runner.contestant``) arms a ``Sentinel`` before the solution is imported.
What it does, each a named protection in ``PROTECTIONS``:

- ``timing``: the timing primitives (device events, synchronize, the host clock) are bound now and
  the runner calls only the bound ones; ``intact()`` reports any that were replaced afterwards.
- ``concurrency``: threads, forks, subprocesses and ``os.system`` started from candidate code are
  refused and recorded (work there escapes the timed region and the recorders).
- ``file-writes``: opening files for writing, and removing or renaming them, from candidate code
  is refused and recorded (a candidate could otherwise rewrite the harness on disk).
- ``signals``: signals to other processes (the judge, its other contestants) from candidate code
  are refused and recorded.
- ``introspection``: walking the garbage collector's objects or other frames from candidate code
  is refused and recorded (the way to the recorders' own state).
- ``harness-imports``: candidate code cannot import ladder's own packages (the runner's guards,
  the comparison); the contestant's own copies are already loaded and stay private.
- ``compilers``: TorchScript, tracing, ``torch.compile`` and ``torch.export`` from candidate code
  are refused and recorded; ``compiled_objects`` finds such callables a model already holds.
- ``recorder-switches``: the torch entry points that pop or disable the recorders' modes, called
  from candidate code, are recorded (the stacks are also checked after every call).
- ``triton-ops``: operators registered with ``torch.library.triton_op`` are remembered (the
  recorder allows calling them) and their bodies run under their own recorders.

"Candidate code" is decided by the first stack frame outside the library that does the work
(``threading``, ``subprocess``, ``io``, ``importlib``...): a frame of the solution's file or of a
file beside it (the problem file excepted). Triton writing its cache from inside a candidate's
forward is therefore not refused: the frame that opens the file is Triton's.
"""
from __future__ import annotations

import builtins
import io
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable

# Modules whose frames are skipped when deciding who asked for something.
PLUMBING = ("threading", "_thread", "concurrent", "multiprocessing", "subprocess", "asyncio", "os", "posixpath",
            "io", "_io", "pathlib", "shutil", "tempfile", "codecs", "importlib", "_frozen_importlib",
            "_frozen_importlib_external", "runner.sentinel", "contextlib", "functools", "inspect")
HARNESS_PACKAGES = ("runner", "diagnoser", "indexer")
_getframe = sys._getframe  # bound before the introspection protection replaces it
WRITE_MODES = set("wax+")


class Refused(PermissionError):
    """What candidate code asked for is not allowed in an evaluation (the message says what)."""


class Sentinel:
    def __init__(self, solution: str | Path, problem: str | Path | None, guards: Any):
        solution = Path(solution).resolve()
        self.solution = str(solution)
        self.folder = str(solution.parent) + os.sep
        self.problem = str(Path(problem).resolve()) if problem else None
        self.violations: list[str] = []
        self.triton_ops: set[str] = set()
        self.bound: dict[str, tuple[Any, str, Any]] = {}
        self._hook_chains: dict[str, list] = {}
        self._hook_values: dict[str, Any] = {}
        self.guards = guards  # runner.guards as the contestant loaded it (hidden from candidates once armed)
        self.recording: Callable[[], Any] | None = None  # set by the contestant: nested recorders

    # ------------------------------------------------------------------ who is asking

    def is_candidate_file(self, filename: str) -> bool:
        return filename == self.solution or (filename.startswith(self.folder) and filename != self.problem
                                             and not filename.startswith(self.folder + "."))

    def asked_by_candidate(self) -> bool:
        frame = _getframe(2)
        while frame is not None:
            module = frame.f_globals.get("__name__", "")
            if not (module.split(".")[0] in PLUMBING or module in PLUMBING or module.startswith("runner.sentinel")):
                # Code a candidate exec'd runs with its globals, whatever its file name.
                return (self.is_candidate_file(frame.f_code.co_filename)
                        or self.is_candidate_file(str(frame.f_globals.get("__file__") or "")))
            frame = frame.f_back
        return False

    def refuse(self, what: str) -> None:
        message = f"candidate code {what}"
        if message not in self.violations:
            self.violations.append(message)
        raise Refused(message)

    # ------------------------------------------------------------------ arming

    def arm(self) -> None:
        for protection in PROTECTIONS.values():
            protection(self)

    def _guard(self, owner: Any, name: str, what: str, allow: Callable[..., bool] | None = None) -> None:
        """Replace ``owner.name`` by a wrapper that refuses candidate callers (``allow`` may let a call through)."""
        original = getattr(owner, name, None)
        if original is None:
            return
        sentinel = self

        def guarded(*args, **kwargs):
            if sentinel.asked_by_candidate() and not (allow and allow(*args, **kwargs)):
                sentinel.refuse(what)
            return original(*args, **kwargs)

        guarded.__wrapped__ = original
        setattr(owner, name, guarded)

    # ------------------------------------------------------------------ after every call

    def intact(self) -> str | None:
        """The first tampering seen so far, or None: refusals, replaced primitives, foreign hooks."""
        if self.violations:
            return self.violations[0]
        for label, (owner, name, original) in self.bound.items():
            if getattr(owner, name, None) is not original:
                return f"candidate code replaced {label} (the timing primitives)"
        from triton import knobs

        for name, calls in self._hook_chains.items():
            if list(getattr(knobs.runtime, name).calls) != calls:
                return f"candidate code installed a Triton {name.replace('_', ' ')}"
        for name, value in self._hook_values.items():
            if getattr(knobs.runtime, name, None) is not value:
                return f"candidate code set Triton's {name}"
        return None

    def snapshot_hooks(self) -> None:
        """The Triton hooks as the runner installed them: any other is the candidate's."""
        from triton import knobs

        self._hook_chains = {name: list(getattr(knobs.runtime, name).calls) for name in (
            "launch_enter_hook", "launch_exit_hook", "kernel_load_start_hook", "kernel_load_end_hook")}
        self._hook_values = {name: getattr(knobs.runtime, name, None) for name in (
            "jit_cache_hook", "jit_post_compile_hook", "add_stages_inspection_hook")}


def stacks_intact(function_level: Any, dispatch_level: Any) -> str | None:
    """Whether the recorders' modes are still where ``runner.guards.recording`` put them."""
    import torch
    from torch.utils._python_dispatch import _get_current_dispatch_mode

    length = torch._C._len_torch_function_stack()
    if not length or torch._C._get_function_stack_at(length - 1) is not function_level:
        return "candidate code switched the torch-call recorder off (torch function mode stack changed)"
    if _get_current_dispatch_mode() is not dispatch_level:
        return "candidate code switched the dispatch recorder off (torch dispatch mode stack changed)"
    return None


def compiled_objects(*roots: Any) -> list[str]:
    """TorchScript, traced, FX or torch.compile'd callables held by models or a module's globals."""
    import torch

    kinds = [(torch.jit.ScriptModule, "a TorchScript module"), (torch.jit.ScriptFunction, "a TorchScript function"),
             (torch.fx.GraphModule, "a traced FX graph")]
    found = []

    def kind_of(value: Any) -> str | None:
        for cls, label in kinds:
            if isinstance(value, cls):
                return label
        if hasattr(value, "_torchdynamo_orig_callable") or type(value).__name__ == "OptimizedModule":
            return "a torch.compile'd callable"
        return None

    for root in roots:
        values = list(vars(root).items()) if isinstance(root, type(sys)) else []
        if isinstance(root, torch.nn.Module):
            values = [(name, module) for name, module in root.named_modules()]
            values += [(f"{name}.{attribute}", value) for name, module in root.named_modules()
                       for attribute, value in vars(module).items() if not attribute.startswith("_")]
        for name, value in values:
            label = kind_of(value)
            if label:
                found.append(f"{name or 'the model'} is {label}")
    return found


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
    sentinel.bound = {label: (owner, name, getattr(owner, name)) for label, owner, name in entries}


def _concurrency(sentinel: Sentinel) -> None:
    import subprocess
    import _thread

    thread = "started a thread (work from another thread escapes the timed region and the recorders)"
    sentinel._guard(threading.Thread, "start", thread)
    sentinel._guard(_thread, "start_new_thread", thread)
    for name in ("fork", "forkpty", "posix_spawn", "posix_spawnp", "system", "popen", "execv", "execve",
                 "execvp", "execvpe", "spawnv", "spawnve"):
        sentinel._guard(os, name, "started a process")
    original_init = subprocess.Popen.__init__

    def popen_init(self, *args, **kwargs):
        if sentinel.asked_by_candidate():
            sentinel.refuse("started a process")
        original_init(self, *args, **kwargs)

    subprocess.Popen.__init__ = popen_init


def _file_writes(sentinel: Sentinel) -> None:
    def writes(file: Any = None, mode: str = "r", *args: Any, **kwargs: Any) -> bool:
        return bool(WRITE_MODES & set(str(kwargs.get("mode", mode))))

    def reads_only(*args: Any, **kwargs: Any) -> bool:
        return not writes(*args, **kwargs)

    for owner in (builtins, io):
        sentinel._guard(owner, "open", "opened a file for writing", allow=reads_only)
    for name in ("remove", "unlink", "rename", "replace", "rmdir", "removedirs", "truncate", "chmod", "symlink",
                 "link"):
        sentinel._guard(os, name, f"called os.{name}")


def _signals(sentinel: Sentinel) -> None:
    import signal

    for owner, name in ((os, "kill"), (os, "killpg"), (signal, "pthread_kill")):
        sentinel._guard(owner, name, f"sent a signal with {owner.__name__}.{name}")


def _introspection(sentinel: Sentinel) -> None:
    import gc

    for name in ("get_objects", "get_referrers", "get_referents"):
        sentinel._guard(gc, name, f"walked the process's objects (gc.{name})")

    def getframe(depth: int = 0):
        if sentinel.asked_by_candidate():
            sentinel.refuse("walked the stack's frames (sys._getframe, inspect)")
        return _getframe(depth + 1)  # the caller's frame, as if this wrapper were not there

    sys._getframe = getframe


class _HarnessBlocker:
    """A meta-path finder refusing candidate imports of ladder's packages."""

    def __init__(self, sentinel: Sentinel):
        self.sentinel = sentinel

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name.split(".")[0] in HARNESS_PACKAGES and self.sentinel.asked_by_candidate():
            self.sentinel.refuse(f"imported {name} (the harness)")
        return None


def _harness_imports(sentinel: Sentinel) -> None:
    sys.meta_path.insert(0, _HarnessBlocker(sentinel))
    # Loaded harness modules stay reachable from the runner's own references only.
    for name in [name for name in sys.modules if name.split(".")[0] in HARNESS_PACKAGES]:
        sys.modules[f"_ladder_private.{name}"] = sys.modules.pop(name)


def _compilers(sentinel: Sentinel) -> None:
    import torch

    for owner, name in ((torch, "compile"), (torch.jit, "script"), (torch.jit, "trace"), (torch.jit, "load"),
                        (torch.jit, "trace_module"), (torch.fx, "symbolic_trace")):
        sentinel._guard(owner, name, f"called torch.{'' if owner is torch else owner.__name__.split('.', 1)[1] + '.'}{name}")
    export = getattr(torch, "export", None)
    if export is not None and hasattr(export, "export"):
        sentinel._guard(export, "export", "called torch.export.export")


def _recorder_switches(sentinel: Sentinel) -> None:
    import torch

    for name in ("DisableTorchFunction", "DisableTorchFunctionSubclass", "_DisableTorchDispatch",
                 "_pop_torch_function_stack", "_pop_torch_dispatch_stack", "_set_torch_function_mode",
                 "_push_on_torch_function_stack", "_push_on_torch_dispatch_stack"):
        sentinel._guard(torch._C, name, f"called torch._C.{name} (switching the recorders off)")


def _triton_ops(sentinel: Sentinel) -> None:
    import torch.library

    original = torch.library.triton_op

    def triton_op(name: str, fn: Callable | None = None, /, *, mutates_args: Any, schema: str | None = None):
        def register(body: Callable) -> Any:
            def recorded(*args: Any, **kwargs: Any) -> Any:
                with sentinel.guards.unjudged(), sentinel.recording():
                    return body(*args, **kwargs)

            recorded.__wrapped__ = body
            for attribute in ("__name__", "__qualname__", "__module__", "__doc__", "__annotations__"):
                if hasattr(body, attribute):
                    setattr(recorded, attribute, getattr(body, attribute))
            sentinel.triton_ops.add(name)
            return original(name, recorded, mutates_args=mutates_args, schema=schema)
        return register if fn is None else register(fn)

    torch.library.triton_op = triton_op


PROTECTIONS: dict[str, Callable[[Sentinel], None]] = {
    "timing": _timing,
    "concurrency": _concurrency,
    "file-writes": _file_writes,
    "compilers": _compilers,
    "recorder-switches": _recorder_switches,
    "signals": _signals,
    "introspection": _introspection,
    "triton-ops": _triton_ops,
    "harness-imports": _harness_imports,  # last: the others import from the harness while arming
}
