"""The runner's own objects in the contestant's process, sealed when the sentinel arms.

Candidate code can reach any object of the runner: a wrapper the runner installed on Triton or torch
holds it in its closure, and neither ``__closure__`` nor ``__globals__`` is an audited attribute.
The static rules refuse the ways there (``introspection``); the seal is the runtime's second line,
for the state the guards themselves decide by, which snapshots of modules and classes do not cover:

- wiring: the attributes each object was armed with (the contestant's kind, its tally, the tracer's
  callbacks and thread state, the sentinel's paths, the backend's timing primitives) must still be
  the same objects, each object must still be of its class, and no instance attribute may shadow a
  method of its class (a tracer whose ``called_by_candidate`` says no to everything, a backend whose
  ``elapsed_ms`` says what candidate code likes, a launch window whose ``wrote`` says yes). What the
  runner itself sets anew after arming (a call's inputs and outputs, the sentinel's Triton operators,
  each call's launch window as the tracer records in it) is sealed again as it sets it (``renew``,
  ``windowed``); what the sealed attributes hold cannot change in place (tuples, frozensets,
  read-only mappings), which the identity of the attribute alone would not show;
- the seal itself cannot change: a named tuple of tuples and read-only mappings, which ``renew``
  replaces whole, held here (``hold``) rather than on the sentinel, which reads it through a
  property with no setter (``Sentinel.seal``): candidate code can neither drop nor replace it;
- the tracer is outside Triton whenever the runner itself asks (a depth forced on at import makes
  every torch call of the candidate's look like Triton's own);
- the tally of torch calls and the sentinel's refusals only grow: each also advances a count that
  cannot be set back (``itertools.count``); a tally holding fewer calls than its count advanced by
  since the call began, or no refusal where one was made, was emptied by candidate code. The
  tracer's launches outside every window are such a count alone (``LaunchTracer.stray``).
"""
from __future__ import annotations

import itertools
import weakref
from types import MappingProxyType
from typing import Any, Mapping, NamedTuple

from ladder.runner.own_builtins import BUILTINS as __builtins__  # noqa: F401  (see that module)

_COUNT_PREFIX = len("count(")


def reading(counter: itertools.count) -> int:
    """Where ``counter`` stands, read without advancing it."""
    return int(repr(counter)[_COUNT_PREFIX:-1])


class Tally(dict):
    """Torch calls of the candidate's (label -> count), with a count of every call it was given:
    ``dict.clear`` empties the tally, not ``given``."""

    def __init__(self):
        super().__init__()
        self.given = itertools.count()

    def mark(self) -> int:
        return reading(self.given)

    def emptied_since(self, mark: int) -> str | None:
        """Why the tally was tampered with, when it holds fewer calls than it was given since ``mark``."""
        if sum(dict.values(self)) < reading(self.given) - mark:  # dict's own: no method of this instance runs
            return "candidate code emptied the runner's tally of torch calls"
        return None


def tally(compute_calls: dict[str, int], label: str) -> None:
    """Count one torch call of the candidate's in ``compute_calls``."""
    if isinstance(compute_calls, Tally):
        next(compute_calls.given)
    compute_calls[label] = compute_calls.get(label, 0) + 1


# The attributes each of the runner's objects keeps from arming to the end of the process (or until
# the runner itself sets them anew, ``Seal.renew``).
WIRING = MappingProxyType({
    "contestant": ("name", "kind", "reporting", "sandboxed", "sentinel", "tracer", "backend", "compute_calls",
                   "problem", "outputs_file", "callables", "held", "input_spans", "last_outputs", "_timed"),
    "tracer": ("called_by_candidate", "refuse", "sentinel", "hook_fires", "current_stream", "stray", "_inside",
               "_originals", "_autotune"),
    "tally": ("given",),
    "sentinel": ("violations", "refused", "triton_ops", "bound", "guards", "recording", "_harness", "_hook_chains",
                 "_hook_values", "delegates", "libraries", "library_folders", "write_roots", "solution", "folder",
                 "problem", "exchange", "_recorder_code"),
    "backend": ("_clock",),
    "window": ("owner", "thread", "launches", "argument_spans"),  # the launch window, one per call
    "outputs_file": ("path",),
})


class Seal(NamedTuple):
    """What ``broken`` compares against: the sealed objects and their classes by label, and the value
    of each wired attribute when sealed, as ((label, attribute), value) pairs. Nothing in it can
    change, in place or by rebinding a field: a seal is replaced whole (``renew``)."""

    tracer: Any
    sentinel: Any
    owners: Mapping[str, Any]
    classes: Mapping[str, type]
    wired: tuple[tuple[tuple[str, str], Any], ...]
    window: tuple = ()  # (window, its class, its wired values): the launch window of the latest call

    @classmethod
    def of(cls, **objects: Any) -> Seal:
        """Seal ``objects`` (by their labels in ``WIRING``) as they are now."""
        objects["tally"] = objects["contestant"].compute_calls
        wired = tuple(((label, name), vars(owner).get(name)) for label, owner in objects.items()
                      for name in WIRING[label])
        return cls(objects["tracer"], objects["sentinel"], MappingProxyType(objects),
                   MappingProxyType({label: type(owner) for label, owner in objects.items()}), wired)

    def renew(self, label: str, *names: str) -> Seal:
        """This seal with these attributes of the object sealed as ``label``, which the runner set anew,
        sealed as they are now. This one is unchanged: whoever holds the seal decides which counts."""
        owner = vars(self.owners[label])
        wired = dict(self.wired)
        wired.update({(label, name): owner.get(name) for name in names})
        return self._replace(wired=tuple(wired.items()))

    def windowed(self, window: Any) -> Seal:
        """This seal with ``window`` (the tracer makes one per call, and seals it again as each launch
        adds to it: kept apart from the rest, so that costs the launch little) sealed as it is now."""
        fields = vars(window)
        return self._replace(window=(window, type(window), tuple(fields.get(name) for name in WIRING["window"])))

    def broken(self) -> str | None:
        """The first change candidate code made to the runner's objects, or None (cheap: checked
        after every call, from the runner's own code, outside Triton)."""
        for (label, name), value in self.wired:
            if vars(self.owners[label]).get(name) is not value:
                return f"candidate code changed the {label}'s {name}"
        owners = [(label, owner, self.classes[label]) for label, owner in self.owners.items()]
        if self.window:
            window, kind, values = self.window
            changed = next((name for name, value in zip(WIRING["window"], values)
                            if vars(window).get(name) is not value), None)
            if changed:
                return f"candidate code changed the window's {changed}"
            owners.append(("window", window, kind))
        for label, owner, kind in owners:
            if type(owner) is not kind:
                return f"candidate code changed the {label}'s class"
            shadowing = next((name for name in vars(owner) if callable(getattr(type(owner), name, None))), None)
            if shadowing:
                return f"candidate code replaced the {label}'s method {shadowing}"
        if reading(self.sentinel.refused) and not self.sentinel.violations:
            return "candidate code emptied the sentinel's refusals"
        if self.tracer.inside_triton():
            return "candidate code set the launch tracer inside Triton outside any Triton call"
        return None


# The seal of each armed sentinel (``Sentinel.seal`` reads it), here rather than on the sentinel, where
# candidate code that reached it could drop the seal, or put one of its own, made over what it
# changed, in its place.
_SEALS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def held(sentinel: Any) -> Seal | None:
    """The seal of ``sentinel``'s process, None until ``hold``."""
    return _SEALS.get(sentinel)


def hold(sentinel: Any, **objects: Any) -> None:
    """Seal the runner's objects once the sentinel is armed (``Seal.of``), once: a seal made again later
    would take what candidate code changed since for the runner's own."""
    if sentinel not in _SEALS:
        _SEALS[sentinel] = Seal.of(sentinel=sentinel, **objects)


def reseal(sentinel: Any, label: str, *names: str) -> None:
    """Seal again the attributes the runner set anew (``Seal.renew``), once the sentinel holds a seal.
    Only the runner's own code calls this and ``seal_window``; what calls them refuses candidate code
    or is no method of an object candidate code could reach."""
    seal = _SEALS.get(sentinel)
    if seal is not None:
        _SEALS[sentinel] = seal.renew(label, *names)


def seal_window(sentinel: Any, window: Any) -> None:
    """Seal the launch window as it is now (``Seal.windowed``), once the sentinel holds a seal."""
    seal = _SEALS.get(sentinel)
    if seal is not None:
        _SEALS[sentinel] = seal.windowed(window)
