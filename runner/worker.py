"""The judge's process: ``python -m ladder.runner.worker RESULT_FD``, the request on standard input.

The caller (``ladder.runner.isolation``) starts it with the same Python, ``PYTHONPATH`` pointing at the
repository (it works where ladder is not installed), a wall-clock timeout and an evaluation marker
in its environment. The request names the problem, the solutions, the backend (``auto`` picks one
here, before Triton is imported, so that ``TRITON_INTERPRET`` takes effect) and the options. The
verdict (``ladder.runner.evaluate``) or ``{"error": {"stage", "reason"}}`` goes back on the pipe
``RESULT_FD``, which no contestant inherits; this process is made undumpable first, so other
processes of the same user cannot open its pipes through /proc.

The judge is a child subreaper: whatever a contestant starts and abandons is re-parented here and
killed with the rest when the evaluation ends, however it ends (SIGTERM included).

Progress goes to stderr as lines ``EVENT_PREFIX + json``; the caller shows them and remembers the
last one, so a hang or a crash can be attributed to the solution and stage that were running.
"""
from __future__ import annotations

import json
import os
import signal
import sys
import time
import traceback

from ladder.runner import sandbox
from ladder.runner.own_builtins import BUILTINS as __builtins__  # noqa: F401  (see that module)

EVENT_PREFIX = "\x1eladder-event "


def main(argv: list[str]) -> None:
    result_fd = int(argv[0])
    sandbox.become_undumpable()
    sandbox.become_subreaper()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    request = json.loads(sys.stdin.read())
    # A private copy of stderr for events: code redirecting sys.stderr does not lose them.
    events = os.fdopen(os.dup(2), "w", buffering=1)

    started = time.monotonic()

    def emit(event: dict) -> None:
        event = {**event, "t": round(time.monotonic() - started, 2)}
        events.write(EVENT_PREFIX + json.dumps(event, default=str) + "\n")

    try:
        result = run(request, emit)
        with os.fdopen(result_fd, "w") as channel:
            channel.write(json.dumps(result, default=str))
    finally:
        sandbox.kill_evaluation(os.getpid(), os.environ.get(sandbox.EVALUATION_ENV))
        # Skip interpreter teardown: after a device error, releasing the device can hang or crash,
        # and everything the caller needs is written.
        for stream in (sys.stdout, sys.stderr, events):
            stream.flush()
        os._exit(0)


def run(request: dict, emit) -> dict:
    from ladder.runner.backends import BackendError, select_backend

    name = request.get("backend") or "auto"
    try:
        backend = select_backend(None if name == "auto" else name)
    except BackendError as error:
        return {"error": {"stage": "backend", "reason": str(error)}}
    os.environ.update(backend.env)  # before anything imports triton
    backend.setup()
    emit({"event": "backend", "backend": backend.name})

    from ladder.runner.errors import one_line
    from ladder.runner.evaluate import evaluate
    from ladder.runner.options import Options
    from ladder.runner.problem import ProblemError

    try:
        return evaluate(request["problem"], request["solutions"], backend,
                        Options.from_dict(request.get("options", {})), emit)
    except ProblemError as error:
        return {"error": {"stage": "problem", "reason": str(error)}}
    except Exception as error:
        return {"error": {"stage": "internal", "reason": one_line(error),
                          "detail": traceback.format_exc()[-4000:]}}


if __name__ == "__main__":
    main(sys.argv[1:])
