"""`ladder diagnose`: climb the ladder for one kernel and print the report.

    ladder diagnose SOLUTION [--problem P] [--rungs 1-4] [--json] [--html OUT] [--backend B]
    ladder diagnose --from REPORT.json [--rungs ...]      # finish a climb recorded elsewhere

SOLUTION is a KernelBench-style solution (its problem.py beside it, or --problem), or any Python
script that launches Triton kernels (its kernels are captured while it runs). The report is
Markdown on stdout, JSON with --json, and a self-contained HTML page with --html. A climb stopped
on the GPU machine (no index there) resumes here with --from: recorded rungs are kept, the rest
are decided again by the same policy.
"""
from __future__ import annotations

import json
import platform
import sys
from pathlib import Path

import click

from diagnoser import ladder
from diagnoser.subject import Subject, checked_target, target_for


class DiagnoseError(click.ClickException):
    """A user mistake, reported in one line."""


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
    from runner.capture import is_script, resolve_problem

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
    from runner.backends import detect

    name, device = detect(backend)
    problem_path = str(found) if found else None
    return Subject(solution=str(path), problem=problem_path, script=script, backend=name,
                   target=target_for(name, str(path), problem_path, target), device=device)


def resumed(report_path: str, backend: str) -> tuple[Subject, dict]:
    """The recorded climb and the subject as it can run on this machine."""
    try:
        state = json.loads(Path(report_path).read_text())
    except (OSError, json.JSONDecodeError) as error:
        raise DiagnoseError(f"cannot read {report_path}: {error}") from None
    if state.get("schema") != ladder.SCHEMA:
        raise DiagnoseError(f"{report_path} is not a `ladder diagnose --json` report (schema {state.get('schema')!r})")
    recorded = state["subject"]
    from runner.backends import detect

    name, device = detect(backend if backend != "auto" else recorded["backend"])
    here = Subject(**{**recorded, "backend": recorded["backend"] if device is None else name, "device": device})
    return here, state


@click.command()
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
def diagnose(solution, problem, rungs_text, as_json, html_out, backend, target, exhaustive, no_ncu, index_dir, from_report):
    """Diagnose a Triton kernel: climb the ladder only as far as the evidence requires."""
    from diagnoser import report

    selected = parse_rungs(rungs_text)
    if from_report:
        subject, state = resumed(from_report, backend)
    elif solution:
        subject, state = subject_for(solution, problem, backend, target), None
    else:
        raise DiagnoseError("give a SOLUTION to diagnose, or --from REPORT.json to resume one")
    state = state or ladder.new_state(subject)
    state.setdefault("options", {}).update({"ncu": not no_ncu, "index_dir": index_dir})
    before = {r["rung"] for r in state["rungs"] if r["ran"]}

    def progress(line: str) -> None:
        click.echo(f"ladder: {line} ...", err=True)
    try:
        state = ladder.climb(subject, state, selected, exhaustive, progress=progress)
    except KeyboardInterrupt:
        raise DiagnoseError("interrupted") from None
    state.setdefault("history", []).append({
        "machine": platform.node(), "backend": subject.backend, "device": subject.device,
        "rungs_run": sorted({r["rung"] for r in state["rungs"] if r["ran"]} - before)})
    if html_out:
        Path(html_out).write_text(report.render(state, "html"))
        click.echo(f"ladder: HTML report written to {html_out}", err=True)
    click.echo(report.render(state, "json" if as_json else "markdown"), nl=False)
    failed = [r for r in state["rungs"] if r["status"] == "failed"]
    for record in failed:
        click.echo(f"ladder: rung {record['rung']} failed: {record['error']}", err=True)
    sys.exit(1 if failed and len(failed) == sum(r["ran"] for r in state["rungs"]) else 0)
