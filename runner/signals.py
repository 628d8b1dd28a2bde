"""SIGTERM as Ctrl-C: a judge's cleanup and a command's partial report run on either; and a Ctrl-C
that lands while a child is forked is not lost."""
from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator

from ladder.runner.own_builtins import BUILTINS as __builtins__  # noqa: F401  (see that module)


@contextlib.contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """Inside the block, SIGTERM raises KeyboardInterrupt("terminated") (main thread only: signal
    handlers can be set nowhere else, and there the block runs as it is)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum, frame):
        raise KeyboardInterrupt("terminated")

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def interrupts_kept() -> Iterator[Callable[[], None]]:
    """A SIGINT or SIGTERM whose exception was dropped inside the block is raised again: by the
    function the block is given, which a wait loop calls as it polls, and as the block ends.

    Python drops an exception raised in its at-fork hooks (logging registers one) or in a finalizer,
    printing it as "ignored": a Ctrl-C whose handler ran there was lost, and the caller went on to
    wait, without a limit, on a child that never ends. Inside the block each handler that raises is
    wrapped to remember that it ran; an exception that left the block is not raised twice. Main
    thread only, as `terminate_as_interrupt`."""
    if threading.current_thread() is not threading.main_thread():
        yield lambda: None
        return
    heard: list[tuple[Callable, int]] = []
    previous = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    previous = {signum: handler for signum, handler in previous.items() if callable(handler)}

    def remembered(handler: Callable) -> Callable:
        def handle(signum, frame):
            heard.append((handler, signum))
            handler(signum, frame)
        return handle

    def raise_dropped() -> None:
        if heard:
            handler, signum = heard[0]
            heard.clear()
            handler(signum, None)

    for signum, handler in previous.items():
        signal.signal(signum, remembered(handler))
    try:
        yield raise_dropped
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    # Reached only when the block ended without an exception: what was heard was dropped on the way.
    raise_dropped()
