"""The process that runs candidate code: ``python -m runner.worker REQUEST.json RESULT.json``.

The caller (``runner.isolation``) starts it with the same Python, ``PYTHONPATH`` pointing at the
repository (it works where ladder is not installed), and a wall-clock timeout. The request names the
problem, the solutions, the backend (``auto`` picks one here, before Triton is imported, so that
``TRITON_INTERPRET`` takes effect) and the options. The result file holds the evaluation
(``runner.evaluate``) or ``{"error": {"stage", "reason"}}``.

Progress goes to stderr as lines ``EVENT_PREFIX + json``; the caller shows them and remembers the
last one, so a hang or a crash can be attributed to the solution and stage that were running.
"""
from __future__ import annotations

import json
import os
import sys
import traceback
from pathlib import Path

EVENT_PREFIX = "\x1eladder-event "


def main(argv: list[str]) -> None:
    request_path, result_path = Path(argv[0]), Path(argv[1])
    request = json.loads(request_path.read_text())
    # A private copy of stderr for events: candidate code redirecting sys.stderr does not lose them.
    events = os.fdopen(os.dup(2), "w", buffering=1)

    def emit(event: dict) -> None:
        events.write(EVENT_PREFIX + json.dumps(event, default=str) + "\n")

    result = run(request, emit)
    temporary = result_path.with_suffix(".tmp")
    temporary.write_text(json.dumps(result, default=str))
    temporary.replace(result_path)
    # Skip interpreter teardown: after a device error, releasing the device can hang or crash, and
    # everything the caller needs is written.
    for stream in (sys.stdout, sys.stderr, events):
        stream.flush()
    os._exit(0)


def run(request: dict, emit) -> dict:
    from runner.backends import BackendError, select_backend

    name = request.get("backend") or "auto"
    try:
        backend = select_backend(None if name == "auto" else name)
    except BackendError as error:
        return {"error": {"stage": "backend", "reason": str(error)}}
    os.environ.update(backend.env)  # before anything imports triton
    backend.setup()
    emit({"event": "backend", "backend": backend.name})

    from runner.errors import one_line
    from runner.evaluate import evaluate
    from runner.options import Options
    from runner.problem import ProblemError

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
