"""What the runner relies on in the contestant's process, snapshotted when the sentinel arms, and the
first change since (``ladder.runner.sentinel``'s ``harness`` and ``libraries`` protections).

- the runner's own modules and their classes, whole: candidate code that reached them (through a
  closure) could rewrite the guards; they also leave ``sys.modules``, and importing ladder's
  packages is refused (``HarnessBlocker``);
- the problem's module, all but the case constants the runner sets on it per case: the contestant
  builds every input with its ``get_inputs()``, and a candidate that replaced it could run the
  reference on each input before the call that is judged;
- the libraries the inputs are built and checked with (torch, ``random``, numpy's random), as far as
  the names they had when armed: ``torch.randn`` replaced through an alias could compute the answer
  while the judge builds the inputs. Names torch adds as it imports parts of itself lazily are not
  checked;
- ``torch.Tensor`` with every name it gains: the runner calls ``to``, ``clone`` and ``contiguous``
  on inputs and outputs outside the recorders, and they live on ``torch._C.TensorBase``, so a name
  of the same spelling added to ``torch.Tensor`` would run instead;
- the functions of the parts of torch that seeding and the recorders go through (``torch.cuda``'s
  ``manual_seed_all`` learns every input seed; the mode classes' ``__enter__`` decides whether a
  recorder goes on the stack), the builtins every module shares, and the runner's own copy of them
  (``ladder.runner.own_builtins``: a dict, as CPython requires of a module's ``__builtins__``, so it
  can change in place, and every runner function would call what replaced a builtin there).
"""
from __future__ import annotations

import builtins
import os
import sys
import types
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from ladder.runner.own_builtins import BUILTINS
from ladder.runner.own_builtins import BUILTINS as __builtins__  # noqa: F401  (see that module)

HARNESS_PACKAGES = ("ladder", "runner", "diagnoser", "indexer")  # installed names and checkout names
RUNNER = os.path.dirname(os.path.abspath(__file__)) + os.sep
_getframe = sys._getframe  # bound before any candidate code runs


@dataclass(frozen=True)
class Snapshot:
    """A namespace as it was when armed: ``read()`` gives it as it is now; a value ``own(value)`` says
    the library itself put there is no change (torch wraps some of its functions when it imports a
    part of itself lazily: importing torch._dynamo replaces ``torch.manual_seed``). The copy is
    read-only and the snapshot frozen: code that reached one could otherwise write the value it
    substituted into the copy, and the comparison would find nothing changed."""

    label: str
    read: Callable[[], dict]
    copy: Mapping[str, Any]
    own: Callable[[Any], bool] = lambda value: False

    def __post_init__(self) -> None:
        object.__setattr__(self, "copy", types.MappingProxyType(dict(self.copy)))


def whole(label: str, namespace: Any) -> Snapshot:
    return Snapshot(label, lambda: vars(namespace), vars(namespace))


def without(label: str, module: Any, hidden: frozenset) -> Snapshot:
    """``module`` without the names in ``hidden`` (the problem's case constants)."""
    def read() -> dict:
        return {key: value for key, value in vars(module).items() if key not in hidden}
    return Snapshot(label, read, read())


def existing(label: str, library: Any, package: str | None, folder: str = "", *, closed: bool = False,
             callables: bool = False) -> Snapshot:
    """``library`` as far as the names it has now go (a name gone reads as None), or, ``closed``, with
    every name it gains too (a class torch never adds to, whose inherited methods a new name would
    shadow); ``callables``, only its functions, classes and modules (a module's flags and caches
    change as it works). A new value of ``package``'s own, defined in its ``folder`` if it is
    Python (a wrapper torch made), is no change."""
    names = frozenset(name for name, value in vars(library).items() if not callables or callable(value)
                      or isinstance(value, types.ModuleType))

    def read() -> dict:
        current = vars(library)
        if closed:
            return dict(current)
        return {name: current.get(name) for name in names}

    def own(value: Any) -> bool:
        module = str(getattr(value, "__module__", None) or "")
        code = getattr(value, "__code__", None)
        return package is not None and (module == package or module.startswith(package + ".")) and (
            code is None or str(code.co_filename).startswith(folder))
    return Snapshot(label, read, read(), own)


def first_change(snapshots: list[Snapshot]) -> str | None:
    """What candidate code changed first, as the refusal says it, or None."""
    for snapshot in snapshots:
        current, copy = snapshot.read(), snapshot.copy
        if current.keys() == copy.keys() and all(current[key] is value or snapshot.own(current[key])
                                                 for key, value in copy.items()):
            continue  # the common case, checked after every call: no sorting, no second pass
        changed = next((key for key in sorted(current.keys() | copy.keys())
                        if key not in current
                        or (current[key] is not copy.get(key) and not snapshot.own(current[key]))), None)
        if changed is not None:
            return f"candidate code changed {snapshot.label}.{changed}"
    return None


class HarnessBlocker:
    """A meta-path finder refusing candidate imports of ladder's packages."""

    def __init__(self, sentinel: Any):
        self.sentinel = sentinel

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name.split(".")[0] in HARNESS_PACKAGES and self.sentinel.acting_for_candidate("imports", _getframe(1)):
            self.sentinel.refuse(f"imported {name} (the harness)")
        return None


def harness(sentinel: Any) -> list[Snapshot]:
    """Snapshots of the runner's modules (and the backend's, ``sentinel.modules``) with their classes,
    and of the problem's module; then the runner's modules leave ``sys.modules`` and importing them
    is refused."""
    modules = {id(module): module for module in [*sys.modules.values(), *sentinel.modules]
               if str(getattr(module, "__file__", None) or "").startswith(RUNNER) or module in sentinel.modules}
    taken = []
    if sentinel.problem_module is not None:
        taken.append(without("the problem's module", sentinel.problem_module, sentinel.problem_constants))
    for module in modules.values():
        taken.append(whole(f"the runner's {module.__name__}", module))
        taken += [whole(f"the runner's {module.__name__}.{value.__qualname__}", value)
                  for value in list(vars(module).values())
                  if isinstance(value, type) and value.__module__ == module.__name__]
    sys.meta_path.insert(0, HarnessBlocker(sentinel))
    # The runner's modules stay reachable from the runner's own references only.
    for name in [name for name in sys.modules if name.split(".")[0] in HARNESS_PACKAGES]:
        del sys.modules[name]
    if str(getattr(sys.modules.get("__main__"), "__file__", None) or "").startswith(RUNNER):
        sys.modules["__main__"] = types.ModuleType("__main__")
    return taken


def libraries() -> list[Snapshot]:
    """The libraries the runner builds and checks inputs with, the builtins, and the parts of torch the
    seeding and the recorders go through (``torch.manual_seed`` calls ``torch.cuda.manual_seed_all``;
    entering a recorder calls ``torch.overrides._push_mode``)."""
    torch = sys.modules["torch"]
    found = [("torch", torch, torch)]
    if "random" in sys.modules:
        found.append(("random", sys.modules["random"], sys.modules["random"]))
    if "numpy" in sys.modules:
        found.append(("numpy.random", sys.modules["numpy"].random, sys.modules["numpy"]))
    taken = [existing(label, library, package.__name__, _folder(package)) for label, library, package in found]
    taken += [existing(label, module, "torch", _folder(torch), callables=True) for label, module in (
        ("torch.random", torch.random), ("torch.cuda", torch.cuda), ("torch.cuda.random", torch.cuda.random),
        ("torch.overrides", torch.overrides),
        ("torch.utils._python_dispatch", sys.modules["torch.utils._python_dispatch"]))]
    taken.append(existing("builtins", builtins, None))
    taken.append(Snapshot("the runner's builtins", lambda: BUILTINS, BUILTINS))  # each value by identity
    # torch.Tensor gains no names of its own; one it gained would shadow what it inherits (``to``,
    # ``clone``, ``contiguous`` live on torch._C.TensorBase, which cannot be changed).
    taken.append(existing("torch.Tensor", torch.Tensor, "torch", _folder(torch), closed=True))
    for mode in (torch.overrides.TorchFunctionMode, sys.modules["torch.utils._python_dispatch"].TorchDispatchMode):
        taken.append(existing(mode.__qualname__, mode, "torch", _folder(torch), closed=True))
    return taken


def _folder(package: Any) -> str:
    file = getattr(package, "__file__", None)
    return os.path.dirname(file) + os.sep if file else "\0"
