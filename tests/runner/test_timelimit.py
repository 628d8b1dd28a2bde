"""`ladder.runner.timelimit.call`: a function in a child process, its value back, a hang stopped."""
from __future__ import annotations

import os
import sys
import time

import pytest

from ladder.runner import timelimit


def add(a: int, b: int) -> int:
    return a + b


def talk_and_answer() -> str:
    print("a print in the child")
    os.write(1, b"a raw write in the child\n")
    print("and on its stderr", file=sys.stderr)
    return "answer"


def hang() -> None:
    time.sleep(600)


class Expected(Exception):
    pass


def raise_expected() -> None:
    raise Expected("a rung says it cannot run")


def raise_other() -> None:
    raise KeyError("deep inside")


def die() -> None:
    os._exit(7)


def test_the_value_comes_back():
    assert timelimit.call(add, (2, 3), timeout=60) == 5


def test_the_childs_output_goes_to_the_callers_stderr_never_its_stdout(capfd):
    assert timelimit.call(talk_and_answer, timeout=60) == "answer"
    out, err = capfd.readouterr()
    assert out == ""
    for line in ("a print in the child", "a raw write in the child", "and on its stderr"):
        assert line in err


def test_a_hang_is_stopped_at_its_limit():
    started = time.monotonic()
    with pytest.raises(timelimit.TimedOut, match="timed out after 1.5 s"):
        timelimit.call(hang, timeout=1.5)
    assert time.monotonic() - started < 20


def test_an_expected_exception_comes_back_as_itself():
    with pytest.raises(Expected, match="cannot run"):
        timelimit.call(raise_expected, timeout=60, expected=(Expected,))


def test_any_other_exception_is_failed_with_its_kind():
    with pytest.raises(timelimit.Failed) as failed:
        timelimit.call(raise_other, timeout=60)
    assert failed.value.kind == "KeyError" and "deep inside" in str(failed.value)


def test_a_child_that_dies_without_answering_is_crashed():
    with pytest.raises(timelimit.Crashed):
        timelimit.call(die, timeout=60)


def test_a_function_that_cannot_travel_is_a_clear_type_error():
    with pytest.raises(TypeError, match="module-level function"):
        timelimit.call(lambda: 1, timeout=60)
