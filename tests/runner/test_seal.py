"""The runner's own objects, sealed: each way candidate code could change the state the guards decide
by (reached through a closure) is named, and the runner's own use of them is no change."""
from __future__ import annotations

import contextlib
import itertools

import pytest
import torch
from ladder.runner.backends.base import Backend
from ladder.runner.backends.device import TorchDeviceBackend
from ladder.runner.exchange import OutputsFile
from ladder.runner.guards import LaunchTracer, Window
from ladder.runner.seal import WIRING, Seal, Tally, hold, reading, tally


class Stand:
    """An object with the wired attributes of one of the runner's (the contestant, the sentinel)."""

    def __init__(self, label: str, **values):
        for name in WIRING[label]:
            setattr(self, name, values.get(name, object()))

    def report(self):
        return "the class's method"


class Timer(Backend):
    """A backend with the timing methods the contestant calls on it."""

    def event(self):
        return []

    def elapsed_ms(self, start, end) -> float:
        return 1.0


def sealed():
    tracer = LaunchTracer(hook_fires=True)
    tracer.called_by_candidate = lambda: True
    tracer.refuse = lambda what: None
    contestant = Stand("contestant", kind="solution", compute_calls=Tally())
    sentinel = Stand("sentinel", violations=[], refused=itertools.count())
    contestant.backend = Timer()
    contestant.outputs_file = OutputsFile("/judge/exchange/.outputs-solution")
    seal = Seal.of(contestant=contestant, tracer=tracer, sentinel=sentinel, backend=contestant.backend,
                   outputs_file=contestant.outputs_file)
    return seal, contestant, tracer, sentinel


def test_an_untouched_seal_holds_while_the_runner_uses_its_objects():
    seal, contestant, tracer, sentinel = sealed()
    tally(contestant.compute_calls, "add")  # the runner's own changes: counts, a window, a depth back to 0
    contestant.compute_calls.clear()
    with tracer.watch("solution"):
        pass
    contestant.later = "a field set after arming"
    assert seal.broken() is None


@pytest.mark.parametrize("tamper, named", [
    (lambda c, t, s: setattr(c, "kind", "reference"), "changed the contestant's kind"),
    (lambda c, t, s: setattr(c, "compute_calls", Tally()), "changed the contestant's compute_calls"),
    (lambda c, t, s: setattr(c.compute_calls, "given", itertools.count()), "changed the tally's given"),
    (lambda c, t, s: setattr(t, "called_by_candidate", lambda: False), "changed the tracer's called_by_candidate"),
    (lambda c, t, s: setattr(s, "refused", itertools.count()), "changed the sentinel's refused"),
    (lambda c, t, s: setattr(c, "report", lambda: None), "replaced the contestant's method report"),
    (lambda c, t, s: setattr(t._inside, "depth", 1), "set the launch tracer inside Triton"),
    # The sentinel's paths: who is the candidate, what is the judge's exchange folder.
    (lambda c, t, s: setattr(s, "solution", "/elsewhere.py"), "changed the sentinel's solution"),
    (lambda c, t, s: setattr(s, "folder", "/nowhere/"), "changed the sentinel's folder"),
    (lambda c, t, s: setattr(s, "problem", "/work/solution.py"), "changed the sentinel's problem"),
    (lambda c, t, s: setattr(s, "exchange", None), "changed the sentinel's exchange"),
    (lambda c, t, s: setattr(s, "library_folders", ("/",)), "changed the sentinel's library_folders"),
    (lambda c, t, s: setattr(s, "_recorder_code", frozenset()), "changed the sentinel's _recorder_code"),
    (lambda c, t, s: setattr(s, "triton_ops", frozenset({"aten::mm"})), "changed the sentinel's triton_ops"),
    # What the contestant reads after the timed call, outside the recorders.
    (lambda c, t, s: setattr(c, "outputs_file", OutputsFile("/tmp/forged")), "changed the contestant's outputs_file"),
    (lambda c, t, s: setattr(c.outputs_file, "save", lambda output, path: None),
     "replaced the outputs_file's method save"),
    (lambda c, t, s: setattr(c.outputs_file, "path", "/tmp/forged"), "changed the outputs_file's path"),
    (lambda c, t, s: setattr(c, "held", [object()]), "changed the contestant's held"),
    (lambda c, t, s: setattr(c, "input_spans", ((0, 1 << 62),)), "changed the contestant's input_spans"),
    (lambda c, t, s: setattr(c, "callables", {}), "changed the contestant's callables"),
    (lambda c, t, s: setattr(c, "_timed", {"done": True}), "changed the contestant's _timed"),
    (lambda c, t, s: setattr(c, "last_outputs", ()), "changed the contestant's last_outputs"),
    # The backend the contestant times with.
    (lambda c, t, s: setattr(c.backend, "elapsed_ms", lambda start, end: 1e-6),
     "replaced the backend's method elapsed_ms"),
    (lambda c, t, s: setattr(c.backend, "stall", lambda milliseconds: None), "replaced the backend's method stall"),
    (lambda c, t, s: setattr(c.backend, "_clock", ()), "changed the backend's _clock"),
    (lambda c, t, s: setattr(c.backend, "__class__", type("Fast", (Timer,), {"elapsed_ms": lambda *a: 1e-6})),
     "changed the backend's class"),
])
def test_each_change_to_the_wiring_is_named(tamper, named):
    seal, contestant, tracer, sentinel = sealed()
    tamper(contestant, tracer, sentinel)
    assert named in (seal.broken() or "")


def test_a_refusal_taken_back_is_seen():
    seal, contestant, tracer, sentinel = sealed()
    next(sentinel.refused)
    sentinel.violations.append("candidate code took a stack frame")
    assert seal.broken() is None
    sentinel.violations.clear()
    assert seal.broken() == "candidate code emptied the sentinel's refusals"


def test_a_tally_emptied_during_a_call_is_seen_and_one_cleared_before_it_is_not():
    calls = Tally()
    tally(calls, "add")
    calls.clear()  # the runner clears it before each call
    since = calls.mark()
    assert calls.emptied_since(since) is None
    tally(calls, "mul")
    tally(calls, "mul")
    assert calls.emptied_since(since) is None and calls == {"mul": 2}
    dict.clear(calls)  # candidate code, mid-call
    assert calls.emptied_since(since) == "candidate code emptied the runner's tally of torch calls"
    assert reading(calls.given) == 3


def test_a_plain_dict_is_still_counted():
    calls: dict[str, int] = {}
    tally(calls, "add")
    tally(calls, "add")
    assert calls == {"add": 2}


def test_what_the_runner_sets_anew_is_sealed_again_as_it_sets_it():
    seal, contestant, tracer, sentinel = sealed()
    contestant.held, contestant.input_spans = [object()], ((64, 128),)  # a timed call's outputs and inputs
    renewed = seal.renew("contestant", "held", "input_spans")
    sentinel.triton_ops = frozenset({"mylib::add"})  # an operator registered
    renewed = renewed.renew("sentinel", "triton_ops")
    assert renewed.broken() is None
    assert seal.broken() == "candidate code changed the contestant's held"  # the seal renewed is a new one
    contestant.held = [object()]
    assert renewed.broken() == "candidate code changed the contestant's held"


def test_a_tally_whose_values_method_is_shadowed_is_still_seen_emptied():
    """The check runs after the forward: a method of the tally's own that candidate code replaced
    would run there, answer for it, and could put itself back before anything else looked."""
    calls = Tally()
    since = calls.mark()
    tally(calls, "mul")
    dict.clear(calls)
    calls.values = lambda: [1]
    assert calls.emptied_since(since) == "candidate code emptied the runner's tally of torch calls"


class Event:
    """A timing event on the host (what a device backend's ``Event`` is on its device)."""

    def __init__(self, enable_timing=False):
        self.timing = enable_timing

    def record(self):
        self.at = 1.0

    def elapsed_time(self, end):
        return 2.5


def test_a_clock_taken_before_the_forward_is_not_what_candidate_code_replaced_since():
    """A replaced method (on the backend or its class) or a replaced ``_clock``, even one that puts
    itself back once called, does not time a call whose clock was taken before it ran."""
    backend = TorchDeviceBackend()
    backend._clock = (Event, Event.record, Event.elapsed_time, lambda: None)
    clock = backend.clock()
    backend._clock = (Event, Event.record, lambda start, end: 1e-6, lambda: None)
    backend.elapsed_ms = lambda start, end: 1e-6
    start, end = clock.event(), clock.event()
    clock.record(start)
    clock.record(end)
    assert start.timing and clock.elapsed_ms(start, end) == 2.5
    timer = Timer()
    clock = timer.clock()
    timer.elapsed_ms = lambda start, end: 1e-6
    assert clock.elapsed_ms([], []) == 1.0


def test_the_tables_read_after_arming_cannot_change_in_place():
    """Modules are snapshotted by identity: a name added to the Triton operators, an audited event
    taken out, a request's handler replaced in place would go unseen."""
    from ladder.runner import contestant, sentinel

    tables = [(sentinel.AUDITED, "open"), (sentinel.ASKING, "code"), (contestant.OPS, "go"), (WIRING, "backend")]
    for table, key in tables:
        with pytest.raises(TypeError):
            table[key] = None
    watcher = sentinel.Sentinel(__file__, None, guards=None)
    with pytest.raises(AttributeError):
        watcher.triton_ops.add("aten::mm")
    watcher.snapshot_hooks()
    sentinel.PROTECTIONS["timing"](watcher)
    for name in ("bound", "_hook_chains", "_hook_values", "delegates", "libraries"):
        with pytest.raises(TypeError):
            vars(watcher)[name]["x"] = None


@pytest.fixture
def registering(monkeypatch, tmp_path):
    """A sentinel with its ``triton-ops`` protection on, torch.library as it was afterwards."""
    from ladder.runner import guards, sentinel

    for owner, name in ((torch.library, "triton_op"), (torch.library.Library, "impl"),
                        (torch.library.Library, "fallback")):
        monkeypatch.setattr(owner, name, getattr(owner, name))
    watcher = sentinel.Sentinel(tmp_path / "solution.py", None, guards)
    sentinel.PROTECTIONS["triton-ops"](watcher)
    return watcher


def test_an_operator_whose_registration_failed_is_not_free_in_the_recorders(registering):
    """``triton_op("aten::mm", ...)`` fails (torch's own operator), and a name remembered before the
    failure would have let ``torch.ops.aten.mm`` through both recorders."""

    def body(x: torch.Tensor) -> torch.Tensor:
        return x

    with pytest.raises(RuntimeError):
        torch.library.triton_op("aten::mm", body, mutates_args=())
    with pytest.raises(RuntimeError):
        torch.library.triton_op("aten::mm", mutates_args=())(body)
    assert registering.triton_ops == frozenset()
    torch.library.triton_op("ladder_seal_test::same", mutates_args=())(body)
    assert registering.triton_ops == frozenset({"ladder_seal_test::same"})


CANDIDATE_CLOCK = '''
import json, sys, tempfile
from pathlib import Path
from types import MappingProxyType
from tests.runner.host_clock import backend
backend.setup()
from ladder.runner.contestant import Contestant
exchange = Path(tempfile.mkdtemp(prefix="exchange-"))
contestant = Contestant("solution", sandboxed=True, backend=backend)
request = {"solution": sys.argv[1], "problem": sys.argv[2]}
replies = [contestant.handle({"op": "load", **request, "exchange": str(exchange)}),
           contestant.handle({"op": "build", "case": 0, "init_seed": 0}),
           contestant.handle({"op": "check", "seed": 1, "output": str(exchange / "checked.pt")}),
           contestant.handle({"op": "arm", "seed": 2}), contestant.handle({"op": "go"}),
           contestant.handle({"op": "keep", "output": str(exchange / "kept.pt")})]
model = contestant.callables["model"]

def forward(inputs):  # candidate code that reached the backend: its own clock, gone once it is read
    def elapsed_ms(start, end):
        del backend.elapsed_ms
        return 1e-6
    backend.elapsed_ms = elapsed_ms
    return model(inputs)

contestant._set(callables=MappingProxyType({"model": forward}))
contestant.handle({"op": "arm", "seed": 3})
timed = contestant.handle({"op": "go"})
print(json.dumps({"honest": replies, "time_ms": timed["time_ms"],
                  "report": contestant.handle({"op": "report"})["report"]}))
'''


def test_a_forward_that_replaces_the_backends_clock_neither_times_itself_nor_goes_unseen(tmp_path):
    """A sandboxed contestant, armed: the runner's own changes between calls are no tampering, and a
    forward that shadows ``elapsed_ms`` with a method that removes itself once called is timed by
    the clock taken before it ran, and the shadow is named in the call's report."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    adversarial = root / "bench" / "sets" / "adversarial"
    script = tmp_path / "clock.py"
    script.write_text(CANDIDATE_CLOCK)
    env = {**os.environ, "PYTHONPATH": str(root), "TRITON_INTERPRET": "1", "TMPDIR": str(tmp_path)}
    done = subprocess.run([sys.executable, str(script), str(adversarial / "legit_plain.py"),
                           str(adversarial / "add_problem.py")], env=env, capture_output=True, text=True,
                          timeout=300, check=False, cwd=root)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    load, build, check, arm, go, keep = result["honest"]
    assert load == build == {"ok": True} and arm["ready"] and go["time_ms"] > 0
    assert check["violation"] is None and keep["report"]["violation"] is None
    assert result["time_ms"] > 1e-6
    assert result["report"]["violation"] == "candidate code replaced the backend's method elapsed_ms"


def test_launches_outside_every_window_cannot_be_taken_back():
    """A launch outside every window (from a thread of the candidate's) is counted, not listed: a list
    of them could be emptied in place before the runner read it."""
    tracer = LaunchTracer(hook_fires=True)
    mark = reading(tracer.stray)
    tracer._record("add_kernel", None)
    with pytest.raises(AttributeError):
        tracer.stray.clear()
    assert tracer.strays_since(mark) == 1


def test_the_audit_hook_cannot_be_switched_off_through_the_sentinel(tmp_path):
    """The hook's own "deciding" flag, set on the sentinel, turned it off for the thread that set it;
    it lives out of the sentinel's reach, and one left on is named."""
    from ladder.runner import sentinel

    watcher = sentinel.Sentinel(__file__, None, guards=None)  # this file is the candidate's
    with pytest.raises(AttributeError):
        watcher._auditing.busy = True
    with pytest.raises(sentinel.Refused):
        watcher.audit("open", (str(tmp_path / "written"), "w", 0))
    watcher.violations.clear()
    sentinel._AUDITING.busy = True
    try:
        assert watcher.intact() == "candidate code switched the audit hook off"
    finally:
        sentinel._AUDITING.busy = False


def armed():
    """A sentinel (this file its candidate's) holding the seal of a contestant's objects."""
    from ladder.runner.sentinel import Sentinel

    watcher = Sentinel(__file__, None, guards=None)
    _, contestant, tracer, _ = sealed()
    tracer.sentinel = watcher
    hold(watcher, contestant=contestant, tracer=tracer, backend=contestant.backend,
         outputs_file=contestant.outputs_file)
    return watcher, contestant, tracer


@pytest.mark.parametrize("replace", [
    lambda watcher, forged: setattr(watcher, "seal", None),
    lambda watcher, forged: setattr(watcher, "seal", forged),
    lambda watcher, forged: vars(watcher).update(seal=forged),
    lambda watcher, forged: hold(watcher, **{label: owner for label, owner in forged.owners.items()
                                             if label not in ("sentinel", "tally")}),
])
def test_the_sentinels_seal_is_neither_dropped_nor_replaced(replace):
    """A seal made again over the changed state, or none, would see no change."""
    watcher, contestant, tracer = armed()
    kept = watcher.seal
    watcher.solution = "/elsewhere.py"
    forged = Seal.of(contestant=contestant, tracer=tracer, sentinel=watcher, backend=contestant.backend,
                     outputs_file=contestant.outputs_file)
    assert forged.broken() is None
    with contextlib.suppress(AttributeError):
        replace(watcher, forged)
    assert watcher.seal is kept
    assert watcher.intact() == "candidate code changed the sentinel's solution"


@pytest.mark.parametrize("change", [
    lambda seal: seal.wired.append((("sentinel", "solution"), "/elsewhere.py")),
    lambda seal: seal.owners.update(sentinel=Stand("sentinel")),
    lambda seal: setattr(seal, "wired", ()),
    lambda seal: object.__setattr__(seal, "wired", ()),
    lambda seal: setattr(seal, "owners", {}),
])
def test_a_seal_cannot_change_in_place(change):
    watcher, _, _ = armed()
    watcher.solution = "/elsewhere.py"
    with pytest.raises((AttributeError, TypeError)):
        change(watcher.seal)
    assert watcher.intact() == "candidate code changed the sentinel's solution"


def test_candidate_code_cannot_seal_the_contestants_attributes_itself():
    """The runner seals what it sets anew as it sets it (``Contestant._set``); called from candidate
    code (this file is the candidate's), it would seal what the candidate chose."""
    from ladder.runner.contestant import Contestant
    from ladder.runner.sentinel import Refused

    watcher, contestant, tracer = armed()
    player = Contestant("solution", sandboxed=True, backend=contestant.backend, tracer=tracer)
    player.sentinel = watcher
    with pytest.raises(Refused):
        Contestant._set(player, callables={})
    assert watcher.violations == ["candidate code set the contestant's sealed attributes itself"]


def test_a_launch_window_is_sealed_as_the_tracer_records_in_it():
    watcher, _, tracer = armed()
    with tracer.watch("solution") as window:
        tracer._record("add_kernel", None)
        tracer._record("add_kernel", 7)
    assert len(window.launches) == 2 and window.streams() == {7}
    assert watcher.intact() is None


@pytest.mark.parametrize("change", [
    lambda w: w.argument_spans.append((0, 1 << 62)),
    lambda w: w.launches.clear(),
    lambda w: setattr(w.launches[0], "stream", None),
])
def test_a_launch_windows_records_cannot_change_in_place(change):
    _, _, tracer = armed()
    with tracer.watch("solution") as window:
        tracer._record("add_kernel", 7)
        with pytest.raises(AttributeError):
            change(window)


@pytest.mark.parametrize("tamper, named", [
    (lambda w: setattr(w, "argument_spans", w.argument_spans + ((0, 1 << 62),)), "changed the window's argument_spans"),
    (lambda w: setattr(w, "launches", ()), "changed the window's launches"),
    (lambda w: setattr(w, "wrote", lambda tensor: True), "replaced the window's method wrote"),
    (lambda w: setattr(w, "streams", lambda: set()), "replaced the window's method streams"),
    (lambda w: setattr(w, "__class__", type("Open", (Window,), {"wrote": lambda self, tensor: True})),
     "changed the window's class"),
])
def test_a_launch_window_changed_by_candidate_code_is_named(tamper, named):
    """The window is read after the call: a span added (every output then looks written by a kernel),
    a launch taken out, ``wrote`` or ``streams`` answered by candidate code."""
    watcher, _, tracer = armed()
    with tracer.watch("solution") as window:
        tracer._record("add_kernel", 7)
        tamper(window)
    assert named in (watcher.intact() or "")
