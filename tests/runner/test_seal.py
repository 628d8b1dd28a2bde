"""The runner's own objects, sealed: each way candidate code could change the state the guards decide
by (reached through a closure) is named, and the runner's own use of them is no change."""
from __future__ import annotations

import itertools

import pytest
from ladder.runner.guards import LaunchTracer
from ladder.runner.seal import WIRING, Seal, Tally, reading, tally


class Stand:
    """An object with the wired attributes of one of the runner's (the contestant, the sentinel)."""

    def __init__(self, label: str, **values):
        for name in WIRING[label]:
            setattr(self, name, values.get(name, object()))

    def report(self):
        return "the class's method"


def sealed():
    tracer = LaunchTracer(hook_fires=True)
    tracer.called_by_candidate = lambda: True
    tracer.refuse = lambda what: None
    contestant = Stand("contestant", kind="solution", compute_calls=Tally())
    sentinel = Stand("sentinel", violations=[], refused=itertools.count())
    return Seal.of(contestant=contestant, tracer=tracer, sentinel=sentinel), contestant, tracer, sentinel


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
