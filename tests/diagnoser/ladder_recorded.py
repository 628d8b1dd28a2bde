"""The ladder's rungs replaying outputs recorded from climbs, for tests that need no compiler or device."""
from __future__ import annotations

import json
from pathlib import Path

from ladder.diagnoser import ladder
from ladder.diagnoser.ladder import Rung

DATA = Path(__file__).parent / "data"
RECORDED = DATA / "recorded"


def recorded(name: str) -> dict:
    return json.loads((RECORDED / f"{name}.json").read_text())


def replaying(name: str, calls: list[str] | None = None, replace: dict | None = None) -> dict[str, Rung]:
    """The ladder's rungs, each returning what it returned when this kernel was diagnosed."""
    outputs = recorded(name)
    calls = calls if calls is not None else []

    def replay(rung_name):
        def run(subject, state):
            calls.append(rung_name)
            return json.loads(json.dumps(outputs[rung_name]))
        return run

    return {rung_name: Rung(rung.number, rung.title, (replace or {}).get(rung_name, replay(rung_name)),
                            rung.needs_device, rung.outputs)
            for rung_name, rung in ladder.RUNGS.items()}
