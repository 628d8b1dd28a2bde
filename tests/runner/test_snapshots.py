"""What the runner relies on, snapshotted: a change is named; a library's own rewrapping is not one."""
from __future__ import annotations

import dataclasses
import types

import pytest

from ladder.runner import snapshots


def module(**names):
    made = types.ModuleType("fakelib")
    made.__dict__.update(names)
    return made


def test_a_replaced_function_is_named_and_a_hidden_constant_is_not():
    problem = module(get_inputs=lambda: [1], batch_size=4)
    taken = [snapshots.without("the problem's module", problem, frozenset({"batch_size"}))]
    problem.batch_size = 8  # the runner sets case constants
    assert snapshots.first_change(taken) is None
    problem.get_inputs = lambda: [2]
    assert snapshots.first_change(taken) == "candidate code changed the problem's module.get_inputs"


def test_a_librarys_own_wrapper_is_no_change_but_anyone_elses_is(tmp_path):
    library = module(randn=len)
    folder = str(tmp_path) + "/"
    taken = [snapshots.existing("fakelib", library, "fakelib", folder)]
    library.added_lazily = object()  # names added after arming are not checked
    assert snapshots.first_change(taken) is None
    wrapper = types.SimpleNamespace(__module__="fakelib.random")  # the library's own, with no Python code
    library.randn = wrapper
    assert snapshots.first_change(taken) is None
    library.randn = lambda *shape: None  # defined here: not the library's
    assert snapshots.first_change(taken) == "candidate code changed fakelib.randn"


def test_the_runners_own_builtins_changed_in_place_are_named():
    """Every runner module looks its builtins up in one shared dict (``own_builtins``): a builtin
    replaced in it changes what every runner function calls."""
    from ladder.runner.own_builtins import BUILTINS

    taken = snapshots.libraries()
    assert snapshots.first_change(taken) is None
    original = BUILTINS["getattr"]
    BUILTINS["getattr"] = len
    try:
        assert snapshots.first_change(taken) == "candidate code changed the runner's builtins.getattr"
    finally:
        BUILTINS["getattr"] = original
    assert snapshots.first_change(taken) is None


def test_a_snapshots_copy_cannot_be_rewritten_to_match_a_substitution():
    """Code that reached a snapshot could write what it substituted into the copy too: the copy is
    read-only and the snapshot frozen, so the substitution is still named."""
    library = module(randn=len)
    taken = [snapshots.whole("fakelib", library)]
    forged = lambda *shape: None  # noqa: E731
    library.randn = forged
    with pytest.raises(TypeError):
        taken[0].copy["randn"] = forged
    with pytest.raises(dataclasses.FrozenInstanceError):
        taken[0].copy = dict(vars(library))
    assert snapshots.first_change(taken) == "candidate code changed fakelib.randn"
