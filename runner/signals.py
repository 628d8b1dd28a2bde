"""SIGTERM as Ctrl-C: a judge's cleanup and a command's partial report run on either."""
from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

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
