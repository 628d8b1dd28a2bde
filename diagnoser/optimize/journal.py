"""The journal of one optimization run: the record a report, a resume and `ladder kb learn` read.

A run directory holds:

``journal.jsonl``   one JSON object per line: the run's header (``round`` 0, ``kind: baseline``),
                    then one line per round, appended only once the round is complete, flushed and
                    fsynced; a line cut short by a kill is not a round, and is dropped on resume.
``candidates/``     every candidate's source (``r3-c1.py``), written before it is gated.
``best.py``         the best solution so far (a copy of a candidate or the initial solution).
``diagnoses/``      diagnosis states by the hash of what they diagnosed, reused while it is unchanged.

A resumed run reads the complete lines, takes the best from the last one and continues at the
next round, so no round is recorded twice and none is lost.
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, Iterable, Iterator

SCHEMA = "ladder.optimize/1"


class JournalError(ValueError):
    """A run directory that cannot be resumed as it is (one line, for the user)."""


class Journal:
    def __init__(self, folder: str | Path):
        self.folder = Path(folder)
        self.path = self.folder / "journal.jsonl"
        self.candidates = self.folder / "candidates"
        self.diagnoses = self.folder / "diagnoses"

    # ------------------------------------------------------------------ reading

    def exists(self) -> bool:
        return self.path.is_file() and bool(self.records())

    def records(self) -> list[dict[str, Any]]:
        """The complete lines, in order (a last line cut short is not one)."""
        if not self.path.is_file():
            return []
        records = []
        for line in self.path.read_bytes().split(b"\n"):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                break  # the tail of a write that never finished
            if isinstance(record, dict):
                records.append(record)
        return records

    def header(self) -> dict[str, Any]:
        records = self.records()
        if not records or records[0].get("kind") != "baseline":
            raise JournalError(f"{self.path}: not an optimization journal (no baseline line)")
        return records[0]

    def rounds(self) -> list[dict[str, Any]]:
        return [r for r in self.records() if r.get("kind") == "round"]

    def last_round(self) -> int:
        rounds = self.rounds()
        return rounds[-1]["round"] if rounds else 0

    def best(self) -> dict[str, Any]:
        """The best so far, as the last complete line records it."""
        records = self.records()
        if not records:
            raise JournalError(f"{self.path}: empty journal")
        return records[-1]["best"]

    # ------------------------------------------------------------------ writing

    def start(self, header: dict[str, Any]) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        self.candidates.mkdir(exist_ok=True)
        self.diagnoses.mkdir(exist_ok=True)
        self.path.write_bytes(b"")
        self.append({"schema": SCHEMA, "kind": "baseline", "round": 0, **header})

    def truncate_to_complete(self) -> None:
        """Drop a last line a kill cut short, so the next append starts a line of its own."""
        if not self.path.is_file():
            return
        data = self.path.read_bytes()
        keep = data[:data.rfind(b"\n") + 1] if not data.endswith(b"\n") else data
        if keep != data:
            write_atomically(self.path, keep)

    def append(self, record: dict[str, Any]) -> None:
        line = (json.dumps(record, default=_json_default) + "\n").encode()
        with open(self.path, "ab") as journal:
            journal.write(line)
            journal.flush()
            os.fsync(journal.fileno())

    def save_candidate(self, round_number: int, index: int, source: str) -> Path:
        path = self.candidates / f"r{round_number}-c{index}.py"
        write_atomically(path, source.encode())
        return path

    def set_best(self, source: str) -> Path:
        path = self.folder / "best.py"
        write_atomically(path, source.encode())
        return path

    # ------------------------------------------------------------------ diagnoses

    def diagnosis(self, key: str) -> dict[str, Any] | None:
        path = self.diagnoses / f"{key}.json"
        if path.is_file():
            try:
                return json.loads(path.read_text())
            except json.JSONDecodeError:
                return None
        return None

    def save_diagnosis(self, key: str, state: dict[str, Any]) -> None:
        self.diagnoses.mkdir(parents=True, exist_ok=True)
        write_atomically(self.diagnoses / f"{key}.json", json.dumps(state, default=_json_default).encode())


def own_seconds(record: dict[str, Any]) -> float:
    """A record's wall seconds less those it queued for a cluster's devices and CPUs (``waited_s``):
    what the run itself took, alone or among many operators."""
    return record.get("seconds", 0.0) - record.get("waited_s", 0.0)


def write_atomically(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    with open(temporary, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    temporary.replace(path)


def content_key(*texts: str) -> str:
    """A short stable hash of what a cached result depends on."""
    digest = hashlib.sha256()
    for text in texts:
        digest.update(text.encode())
        digest.update(b"\0")
    return digest.hexdigest()[:20]


def diagnosis_key(best_source: str, problem_source: str, rungs: Iterable[int]) -> str:
    """The key a run's diagnosis of its best is cached under (`Journal.diagnosis`): the texts it
    depends on and the rungs it may climb, so a best diagnosed once is read back, by the loop or by
    a report, and never diagnosed twice."""
    return content_key(best_source, problem_source, repr(tuple(rungs)))


def iter_runs(root: Path) -> Iterator[Journal]:
    """Every run directory under ``root`` (``ladder suite --optimize`` writes one per operator)."""
    for path in sorted(root.rglob("journal.jsonl")):
        yield Journal(path.parent)


def _json_default(value: Any) -> Any:
    if isinstance(value, float) and value != value:
        return None
    if isinstance(value, Path):
        return str(value)
    return str(value)
