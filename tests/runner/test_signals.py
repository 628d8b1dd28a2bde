"""A Ctrl-C is never lost: one that lands where Python drops exceptions (an at-fork hook, a
finalizer) is raised again when the block that spawns a child ends, and the child it interrupted
does not outlive it."""
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from ladder.runner.isolation import wait_unreaped
from ladder.runner.signals import interrupts_kept


class InterruptsWhileFinalized:
    """Sends this process SIGINT from a finalizer, where Python prints the KeyboardInterrupt as
    "ignored" and drops it, as it does in the at-fork hook where the lost Ctrl-C was found."""

    def __del__(self):
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)  # the handler runs here, inside the finalizer


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_an_interrupt_dropped_by_a_finalizer_is_raised_when_the_block_ends():
    with pytest.raises(KeyboardInterrupt):
        with interrupts_kept():
            InterruptsWhileFinalized()
            dropped_here = True  # the block went on: the finalizer's interrupt did not stop it
    assert dropped_here
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_outside_the_block_the_same_interrupt_is_lost():
    """What the block is for: without it the interrupt never reaches the caller."""
    InterruptsWhileFinalized()
    time.sleep(0.05)


def test_an_interrupt_that_left_the_block_is_not_raised_twice():
    with pytest.raises(KeyboardInterrupt) as raised:
        with interrupts_kept():
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(1)
    assert raised.value.args == ()


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_wait_on_a_child_raises_an_interrupt_dropped_before_it_ends():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    started = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            with interrupts_kept() as raise_dropped:
                InterruptsWhileFinalized()
                wait_unreaped(child, 30, raise_dropped)
    finally:
        child.kill()
        child.wait()
    assert time.monotonic() - started < 10  # at the wait's first poll, not after its 30 s


def test_a_ctrl_c_during_the_fork_of_a_child_stops_the_spawn_and_the_child():
    """The at-fork hook interrupts the parent just after the fork: spawn raises rather than hands back
    a child its caller would wait on forever, and the child is gone."""
    script = textwrap.dedent("""
        import os, signal, sys, time
        from ladder.runner import sandbox

        os.register_at_fork(after_in_parent=lambda: (os.kill(os.getpid(), signal.SIGINT), time.sleep(0.05)))
        try:
            process = sandbox.spawn([sys.executable, "-c", "import time; time.sleep(60)"], env=dict(os.environ),
                                    cwd=".")
        except KeyboardInterrupt:
            try:
                os.waitpid(-1, os.WNOHANG)
                print("interrupted, a child left")
            except ChildProcessError:
                print("interrupted")
        else:
            print("spawned", process.pid)
            process.kill()
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False)
    assert result.stdout.strip() == "interrupted", result.stdout + result.stderr
    assert "Exception ignored" in result.stderr  # where Python dropped it the first time
