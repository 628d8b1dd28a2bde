"""`ladder diagnose`: climb the ladder for one kernel and print the report.

    ladder diagnose SOLUTION [--problem P] [--rungs 1-4] [--json] [--html OUT] [--backend B]
    ladder diagnose --from REPORT.json [--rungs ...]      # finish a climb recorded elsewhere

SOLUTION is a KernelBench-style solution (its problem.py beside it, or --problem), or any Python
script that launches Triton kernels (its kernels are captured while it runs). The report is
Markdown on stdout, JSON with --json, and a self-contained HTML page with --html. A climb stopped
on the GPU machine (no index there) resumes here with --from: recorded rungs are kept, the rest
are decided again by the same policy.

Every rung runs in a process of its own under a time limit (`--rung-timeout`), so a compile that
hangs is stopped and recorded as that rung's failure. Exit status (``ladder.diagnoser.cli.errors``): 0
when every rung that ran worked; 3, after the report, when the subject launched no Triton kernel
or a rung failed or ran out of time (the report's `error` says which), and before it when the
backend asked for is not available here; 130 on Ctrl-C, after the report of the rungs done so far.
"""
from __future__ import annotations

import json
import logging
import platform
from pathlib import Path

import click

from ladder.diagnoser import ladder
from ladder.diagnoser.cli.command import LadderCommand
from ladder.diagnoser.cli.errors import INTERRUPTED, TERMINATED, USAGE, CannotRun, LadderError
from ladder.diagnoser.cli.streams import echo
from ladder.diagnoser.subject import Subject, checked_target, target_for

log = logging.getLogger("ladder")


class DiagnoseError(LadderError):
    """A user mistake on the command line, reported in one line (exit 2)."""

    exit_code = USAGE


def target_option(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """`--target`: a target ladder has tables for (diagnoser.subject.checked_target)."""
    try:
        return None if value is None else checked_target(value)
    except ValueError as error:
        raise click.BadParameter(str(error)) from None


def parse_rungs(text: str) -> set[int]:
    """`1-4`, `3`, `1,3`, `2-3` -> the set of rung numbers."""
    chosen: set[int] = set()
    try:
        for part in text.split(","):
            low, _, high = part.strip().partition("-")
            chosen.update(range(int(low), int(high or low) + 1))
    except ValueError:
        raise DiagnoseError(f"--rungs {text!r}: use a span like 1-4, a list like 1,3, or one rung") from None
    if not chosen or not chosen <= {1, 2, 3, 4}:
        raise DiagnoseError(f"--rungs {text!r}: rungs are numbered 1 to 4")
    return chosen


def subject_for(solution: str, problem: str | None, backend: str, target: str | None) -> Subject:
    from ladder.runner.capture import is_script, resolve_problem

    path = Path(solution)
    if not path.is_file():
        raise DiagnoseError(f"no such file: {solution}")
    if problem is not None and not Path(problem).is_file():
        raise DiagnoseError(f"no such problem file: {problem}")
    script = is_script(path)
    found = None if script else resolve_problem(path, problem)
    if not script and found is None:
        raise DiagnoseError(f"{path.name} defines ModelNew but no problem was given (pass --problem)"
                            " and there is no problem.py beside it")
    name, device = detect_backend(backend)
    problem_path = str(found) if found else None
    return Subject(solution=str(path), problem=problem_path, script=script, backend=name,
                   target=target_for(name, str(path), problem_path, target), device=device)


def detect_backend(requested: str) -> tuple[str, str | None]:
    """(backend, device) for the climb; a device backend asked for by name that is not available
    here is an error, not a climb that quietly skips profiling."""
    from ladder.runner.backends import detect, load_backend

    name, device = detect(requested)
    if requested in ("cuda", "npu") and device is None:
        reason = load_backend(requested).unavailable_reason()
        raise CannotRun(f"--backend {requested} is not available here: {reason} "
                        "(--backend aot captures the IR without a device)", kind="BackendUnavailable")
    return name, device


def parse_timeouts(values: tuple[str, ...]) -> dict[str, float | None]:
    """`--rung-timeout S` for every rung, `--rung-timeout N=S` (number or name) for one; 0: no limit."""
    limits: dict[str, float | None] = dict(ladder.RUNG_TIMEOUTS_S)
    numbers = {str(rung.number): name for name, rung in ladder.RUNGS.items()}
    for value in values:
        which, _, seconds = value.rpartition("=")
        try:
            limit = float(seconds)
        except ValueError:
            limit = -1.0
        names = list(limits) if not which else [numbers.get(which, which)]
        if limit < 0 or not set(names) <= set(limits):
            raise DiagnoseError(f"--rung-timeout {value!r}: use SECONDS for every rung or RUNG=SECONDS "
                                f"(RUNG 1-4 or {', '.join(limits)}); 0 means no limit")
        limits.update({name: limit or None for name in names})
    return limits


def rung_limits(values: tuple[str, ...]) -> dict[str, float | None] | None:
    """`--rung-timeout` for the commands that climb many ladders (`suite --diagnose`, `optimize run`):
    None when every limit is off, and the rungs then run in-process rather than each in a process."""
    limits = parse_timeouts(values)
    return limits if any(limits.values()) else None


def resumed(report_path: str, backend: str) -> tuple[Subject, dict]:
    """The recorded climb and the subject as it can run on this machine."""
    try:
        state = json.loads(Path(report_path).read_text())
    except (OSError, json.JSONDecodeError) as error:
        raise DiagnoseError(f"cannot read {report_path}: {error}") from None
    if state.get("schema") != ladder.SCHEMA:
        raise DiagnoseError(f"{report_path} is not a `ladder diagnose --json` report (schema {state.get('schema')!r})")
    recorded = state["subject"]
    from ladder.runner.backends import detect

    name, device = detect_backend(backend) if backend != "auto" else detect(recorded["backend"])
    here = Subject(**{**recorded, "backend": recorded["backend"] if device is None else name, "device": device})
    return here, state


@click.command(cls=LadderCommand)
@click.argument("solution", required=False)
@click.option("--problem", help="The problem file (default: problem.py beside SOLUTION).")
@click.option("--rungs", "rungs_text", default="1-4", show_default=True, help="Which rungs may run: 1-4, 1,3, 3 ...")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON (what --from and scripts read).")
@click.option("--html", "html_out", type=click.Path(dir_okay=False), help="Also write a self-contained HTML report here.")
@click.option("--backend", type=click.Choice(["auto", "cuda", "npu", "aot"]), default="auto", show_default=True,
              help="Where kernels run; aot = compile only, no device (rung 2 is skipped).")
@click.option("--target", callback=target_option, help="sm90, ascend or ascend:PART (a part with a table in kb/hardware): "
              "the device every rung judges the kernel for (default: from the backend and the code).")
@click.option("--exhaustive", is_flag=True, help="Climb every requested rung even once the gap is explained.")
@click.option("--no-ncu", is_flag=True, help="Profile with events only (skip Nsight Compute).")
@click.option("--index", "index_dir", type=click.Path(file_okay=False), help="The knowledge index for rung 4 (default: ladder's).")
@click.option("--from", "from_report", type=click.Path(dir_okay=False), help="Resume a climb saved with --json.")
@click.option("--rung-timeout", "timeouts", multiple=True, metavar="[RUNG=]SECONDS",
              help="Stop a rung that runs longer (a hung compile): SECONDS for every rung, or RUNG=SECONDS "
                   "for one (1-4 or its name); 0: no limit; repeatable. Defaults: "
                   + ", ".join(f"{name} {seconds:g} s" for name, seconds in ladder.RUNG_TIMEOUTS_S.items()) + ".")
def diagnose(solution, problem, rungs_text, as_json, html_out, backend, target, exhaustive, no_ncu, index_dir,
             from_report, timeouts):
    """Diagnose a Triton kernel: climb the ladder only as far as the evidence requires."""
    from ladder.diagnoser import report

    selected = parse_rungs(rungs_text)
    limits = parse_timeouts(timeouts)
    if from_report:
        subject, state = resumed(from_report, backend)
    elif solution:
        subject, state = subject_for(solution, problem, backend, target), None
    else:
        raise DiagnoseError("give a SOLUTION to diagnose, or --from REPORT.json to resume one")
    state = state or ladder.new_state(subject)
    state.setdefault("options", {}).update({"ncu": not no_ncu, "index_dir": index_dir})
    before = {r["rung"] for r in state["rungs"] if r["ran"]}

    interrupted = None
    try:
        state = ladder.climb(subject, state, selected, exhaustive, progress=lambda line: log.info(f"{line} ..."),
                             limits=limits)
    except ladder.ClimbInterrupted as interruption:
        state, interrupted = interruption.state, interruption
    state.setdefault("history", []).append({
        "machine": platform.node(), "backend": subject.backend, "device": subject.device,
        "rungs_run": sorted({r["rung"] for r in state["rungs"] if r["ran"]} - before)})
    for record in state["rungs"]:
        log.debug(f"rung {record['rung']} ({record['title']}): {record['status']} in {record['seconds']:g} s: "
                  f"{record['why']}")
    error = state.get("error") or _failure(state)
    if error:
        state["error"] = error
    if html_out:
        Path(html_out).write_text(report.render(state, "html"))
        log.info(f"HTML report written to {html_out}")
    echo(report.render(state, "json" if as_json else "markdown"), nl=False)
    if interrupted is not None:
        terminated = str(interrupted.__cause__) == "terminated"
        raise LadderError(error, kind="Interrupted", exit_code=TERMINATED if terminated else INTERRUPTED,
                          reported=True)
    if error:
        raise CannotRun(error, kind=_error_kind(state), reported=True)


def _failure(state: dict) -> str | None:
    """One line for the rungs that failed, or None when every rung that ran worked."""
    failed = [r for r in state["rungs"] if r["status"] == "failed"]
    return "; ".join(f"rung {r['rung']} ({r['title']}) failed: {r['error']}" for r in failed) or None


def _error_kind(state: dict) -> str:
    failed = [r for r in state["rungs"] if r["status"] == "failed"]
    if any(r.get("nothing_launched") for r in failed):
        return "NothingLaunched"
    return "RungTimedOut" if any(r.get("timed_out") for r in failed) else "RungFailed"
