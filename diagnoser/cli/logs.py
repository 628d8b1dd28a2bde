"""`-v` and `-q`: ladder's own messages on standard error, through the standard `logging` module.

Progress ("rung 3: IR attribution ..."), warnings and debug detail go to the logger `ladder` (the
command line) and to the package loggers `runner`, `diagnoser` and `indexer`. By default progress
and warnings show; `-q` leaves warnings and errors; `-v` adds debug detail and, for an error in
ladder itself, its traceback. Errors that end a command are never silenced (`errors.handled`).
Every message is written to the `sys.stderr` of the moment, so a test's captured stream gets it.
"""
from __future__ import annotations

import logging

import click

PACKAGES = ("ladder", "runner", "diagnoser", "indexer")
QUIET, NORMAL, VERBOSE = -1, 0, 1
_LEVELS = {QUIET: logging.WARNING, NORMAL: logging.INFO, VERBOSE: logging.DEBUG}

log = logging.getLogger("ladder")


class _Stderr(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        try:
            click.echo(self.format(record), err=True)
        except Exception:  # noqa: BLE001 - a message that cannot be written must not end the command
            self.handleError(record)


class _Format(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        text = record.getMessage()
        if record.levelno >= logging.WARNING:
            return f"ladder: {record.levelname.lower()}: {text}"
        if record.levelno < logging.INFO:
            return f"ladder: debug: {record.name}: {text}"
        return f"ladder: {text}"


_handler = _Stderr()
_handler.setFormatter(_Format())


def configure(verbosity: int) -> None:
    """Set how much ladder says: QUIET (-q), NORMAL, VERBOSE (-v, -vv ...)."""
    verbosity = max(QUIET, min(VERBOSE, verbosity))
    for name in PACKAGES:
        logger = logging.getLogger(name)
        logger.setLevel(_LEVELS[verbosity])
        logger.propagate = False  # a diagnosed script's own logging setup does not print ours twice
        if _handler not in logger.handlers:
            logger.addHandler(_handler)


def progress_shown() -> bool:
    """Whether progress (bars included) is wanted: not under -q."""
    return log.isEnabledFor(logging.INFO)
