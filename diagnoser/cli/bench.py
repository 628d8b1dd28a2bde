"""``ladder bench``: correctness and timing of one solution against its problem, per case.

Exit status (``ladder.diagnoser.cli.errors``): 0 when every case is correct and nothing was rejected, 1
otherwise, 2 on a usage error, 3 when the evaluation cannot run (a problem file that does not
load, a backend not available here), 4 when the runner itself failed.
"""
from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Any

import click

from ladder.diagnoser.cli.command import LadderCommand
from ladder.diagnoser.cli.errors import INTERNAL, NEGATIVE, CannotRun
from ladder.diagnoser.cli.streams import echo
from ladder.runner.bench import DEFAULT_TIMEOUT_S, BenchError, bench_pair

log = logging.getLogger("ladder")


def _list_checks(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    from ladder.runner.static_check import describe_rules

    echo(describe_rules())
    ctx.exit(0)


@click.command("bench", cls=LadderCommand)
@click.argument("solution", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--problem", required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="The KernelBench-format problem file (Model, get_inputs, get_init_inputs[, get_cases]).")
@click.option("--backend", type=click.Choice(["cuda", "npu", "interpret"]),
              help="Where to run; default: cuda if available, else npu, else interpret (CPU, no timing).")
@click.option("--baseline", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Another solution timed interleaved with SOLUTION (speedup vs baseline column).")
@click.option("--json", "as_json", is_flag=True, help="Print the record as JSON on stdout.")
@click.option("--torch-compile", is_flag=True, help="Also time torch.compile(Model).")
@click.option("--timeout", type=float, default=DEFAULT_TIMEOUT_S, show_default=True,
              help="Wall-clock limit in seconds for the whole evaluation (it runs in a subprocess).")
@click.option("--seeds", type=click.IntRange(1), default=3, show_default=True,
              help="Fresh random inputs per case for the correctness check.")
@click.option("--seed", type=int, help="Base seed (default: a fresh one, printed, to reproduce a failure).")
@click.option("--case", "cases", type=int, multiple=True, help="Only these case indexes (repeatable).")
@click.option("--reps", type=click.IntRange(1), help="Timed repetitions per contestant (default: from a warm-up).")
@click.option("--no-time", is_flag=True, help="Correctness only.")
@click.option("--quick/--full", default=None,
              help="The problem's small get_test_cases() (else its smallest case) instead of its cases; "
                   "the default under the interpreter, which runs a full-size case for many minutes.")
@click.option("--list-checks", is_flag=True, is_eager=True, expose_value=False, callback=_list_checks,
              help="List the static check rules and exit.")
def bench(solution: Path, problem: Path, backend: str | None, baseline: Path | None, as_json: bool,
          torch_compile: bool, timeout: float, seeds: int, seed: int | None, cases: tuple[int, ...],
          reps: int | None, no_time: bool, quick: bool | None) -> None:
    """Check SOLUTION (ModelNew, Triton) against PROBLEM's Model and time both, per case."""
    interpreted = _selected_backend(backend) == "interpret"
    if quick is None:
        quick = interpreted
    elif interpreted and not quick:
        log.warning("--full under Triton's interpreter runs every full-size case on the CPU, "
                    "which can take many minutes per case (--quick takes the small test cases)")
    try:
        record = bench_pair(solution, problem, baseline=baseline, backend=backend, timeout=timeout,
                            progress=_progress, seeds=seeds, seed=seed, time=not no_time,
                            torch_compile=torch_compile, cases=list(cases) or None, reps=reps, quick=quick)
    except BenchError as error:
        if error.detail:
            log.debug(error.detail)
        kind = {"backend": "BackendUnavailable", "problem": "ProblemError", "internal": "InternalError"}
        raise CannotRun(str(error), kind=kind.get(error.stage, "BenchError"),
                        exit_code=INTERNAL if error.stage == "internal" else None) from None
    echo(json.dumps(record, indent=2, default=str) if as_json else render(record))
    if not record["ok"]:
        sys.exit(NEGATIVE)


def _progress(event: dict) -> None:
    message = event.get("message")
    if event.get("event") == "warning":
        log.warning(message)
        return
    if event.get("event") == "backend":
        message = f"backend: {event['backend']}"
    if message:
        elapsed = f"[{event['t']:6.1f} s] " if isinstance(event.get("t"), (int, float)) else ""
        log.info(f"{elapsed}{message}")


def _selected_backend(backend: str | None) -> str:
    """The backend the evaluation will run on (the one asked for, or the best here); one that is
    not available here ends the command before any worker starts."""
    from ladder.runner.backends import BackendError, select_backend

    try:
        return select_backend(backend).name
    except BackendError as error:
        raise CannotRun(str(error), kind="BackendUnavailable") from None


# ------------------------------------------------------------------------------------- the table


def render(record: dict[str, Any]) -> str:
    """The human-readable report: a table of the cases, then reasons, rejections and warnings."""
    lines = [_title(record)]
    if not record.get("timed"):
        return _render_untimed(record)
    has_baseline = "baseline" in record
    has_compile = any(case.get("torch_compile_ms") for case in record["cases"])
    header = ["case", "correct", "time ms (p10-p90)", "ref ms", "speedup"]
    if has_compile:
        header += ["compile ms", "vs compile"]
    if has_baseline:
        header.append("vs base")
    header += ["GB/s", "TFLOP/s", "% roof"]
    rows = [header]
    for case in record["cases"]:
        time_ms = case.get("time_ms")
        row = [
            case["label"],
            _verdict(case),
            f"{time_ms['median']:.4g} ({time_ms['p10']:.4g}-{time_ms['p90']:.4g})" if time_ms else "-",
            _number(case.get("reference_ms"), "{:.4g}"),
            _number(case.get("speedup"), "{:.2f}x"),
        ]
        if has_compile:
            row += [_number(case.get("torch_compile_ms"), "{:.4g}"),
                    _number(case.get("speedup_vs_compile"), "{:.2f}x")]
        if has_baseline:
            row.append(_number(case.get("speedup_vs_baseline"), "{:.2f}x"))
        row += [_number(case.get("gbps"), "{:.0f}"), _number(case.get("tflops"), "{:.1f}"),
                _number(case.get("roofline_pct"), "{:.1f}%")]
        rows.append(row)
    lines += _table(rows)
    lines += _notes(record)
    return "\n".join(lines)


def _render_untimed(record: dict[str, Any]) -> str:
    """Correctness only (the interpreter): errors against tolerances instead of empty time columns."""
    lines = [_title(record)]
    rows = [["case", "correct", "max error", "tolerance", "launches"]]
    for case in record["cases"]:
        rows.append([case["label"], _verdict(case),
                     _number(case.get("max_rel_err"), "{:.3g}"), _number(case.get("rtol"), "{:.3g}"),
                     _number(case.get("launches"), "{}")])
    lines += _table(rows)
    lines += _notes(record)
    return "\n".join(lines)


def _verdict(case: dict[str, Any]) -> str:
    """yes / NO / not run: a case the evaluation never reached was not found wrong."""
    if case["correct"]:
        return "yes"
    return "not run" if str(case.get("reason", "")).startswith("not run") else "NO"


def _title(record: dict[str, Any]) -> str:
    return (f"{Path(record['solution']).name} vs {Path(record['problem']).name} on "
            f"{record.get('backend')} ({record.get('device') or 'unknown device'})")


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for position, row in enumerate(rows):
        lines.append("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
        if position == 0:
            lines.append("  ".join("-" * width for width in widths))
    return lines


def _notes(record: dict[str, Any]) -> list[str]:
    """Rejection or failure reasons, flags, static warnings, launches, how it was measured."""
    lines = []
    rejected = record.get("rejected")
    if rejected:
        lines.append(f"REJECTED ({rejected['stage']}): {rejected['reason']}")
    else:
        for case in record["cases"]:
            if not case["correct"]:
                lines.append(f"case {case['label']}: {case.get('reason')}")
    for case in record["cases"]:
        for flag in case.get("flags", []):
            lines.append(f"case {case['label']}: {flag}")
    for violation in record.get("static", []):
        if violation["severity"] != "error" or not rejected:
            lines.append(f"{violation['severity']}: line {violation['line']}: {violation['message']} "
                         f"[{violation['rule']}]")
    launched = next((case for case in record["cases"] if case.get("kernels")), None)
    if launched:
        left_out = (launched.get("launch_counts") or {}).get("autotuning_excluded")
        also = f"; {left_out} autotuning launches left out" if left_out else ""
        lines.append(f"launches per forward: {launched['launches']} ({', '.join(launched['kernels'])}{also})")
    if record.get("device_error"):
        lines.append(f"device error: {record['device_error']}")
    lines.append(_footer(record))
    return lines


def _footer(record: dict[str, Any]) -> str:
    parts = [f"seeds per case: {record.get('seeds_per_case')} (base seed {record.get('base_seed')})"]
    if record.get("timed"):
        ceilings = record.get("ceilings") or {}
        parts.append("times: device events, L2 flushed, fresh inputs per repetition, interleaved")
        parts.append(f"ceilings: {ceilings.get('source', '?')}")
    else:
        parts.append("not timed (this backend checks correctness only)")
    return "; ".join(parts)


def _number(value: float | None, template: str) -> str:
    return "-" if value is None else template.format(value)
