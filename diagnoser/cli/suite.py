"""``ladder suite``: bench (or diagnose) every operator of the kernel suite, with a summary table.

The operators, rows and loop are ``ladder.diagnoser.suite``; ``--diagnose`` climbs every operator's
ladder in one batched run (``ladder.diagnoser.batch``).
"""
from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from ladder.diagnoser import batch
from ladder.diagnoser.cli import logs
from ladder.diagnoser.cli.command import LadderCommand
from ladder.diagnoser.cli.diagnose import DiagnoseError, rung_limits, target_option
from ladder.diagnoser.cli.errors import NEGATIVE
from ladder.diagnoser.cli.streams import echo
from ladder.diagnoser.suite import render
from ladder.diagnoser.suite.operators import Operator, SuiteError, discover
from ladder.diagnoser.suite.run import (
    DEFAULT_BUDGET_S,
    DEFAULT_MAX_REPS,
    DEFAULT_MIN_REPS,
    DEFAULT_SEEDS,
    BenchSettings,
    check_backend,
    json_default,
    report,
    run_suite,
    write_json,
)

log = logging.getLogger("ladder")


def load_document(path: Path) -> dict[str, Any]:
    """A document written by ``--output`` or ``--json``; a clear usage error for anything else."""
    try:
        document = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as error:
        raise click.UsageError(f"{path}: not a suite JSON document ({error})") from None
    if not isinstance(document, dict) or not {"meta", "summary", "operators"} <= set(document):
        raise click.UsageError(f"{path}: not a suite JSON document (needs meta, summary and operators)")
    return document


def diagnose_suite(operators: list[Operator], backend: str | None, as_json: bool, output: Path | None = None,
                   isolate: bool = False, echo: Callable[[str], None] = echo,
                   err: Callable[[str], None] = log.info, target: str | None = None,
                   limits: dict[str, float | None] | None = None) -> int:
    """`ladder suite --diagnose`: the table of rung reached and findings per operator (exit status).
    `limits`: each rung's time limit, as `ladder diagnose --rung-timeout` gives them (None: rungs run
    in the pool's workers, with no limit)."""
    import time

    items = [batch.Item(op.key, str(op.solution), str(op.problem)) for op in operators]
    chosen = {"interpret": "aot", None: "auto"}.get(backend, backend)
    started = time.monotonic()
    states = batch.diagnose_many(items, backend=chosen, target=target, isolate=isolate, limits=limits,
                                 progress=lambda line: err(f"suite --diagnose: {line}"))
    rows = [batch.summary_row(item.name, state) for item, state in zip(items, states)]
    document = {"rows": rows, "climbed": batch.climbed(rows), "wall_s": round(time.monotonic() - started, 1),
                "target": target, "states": dict(zip((i.name for i in items), states))}
    if output is not None:
        output.write_text(json.dumps(document, indent=1, default=str) + "\n")
    if as_json:
        echo(json.dumps({"rows": rows, "climbed": batch.climbed(rows), "wall_s": document["wall_s"]}, indent=1))
    else:
        echo(batch.table(rows) + f"\nwall time: {document['wall_s']:.0f} s for {len(rows)} operators")
    return 0 if not any(row["failed"] for row in rows) else NEGATIVE


def optimize_suite(operators: list[Operator], backend: str | None, proposer: str, rounds: int, runs: Path,
                   budget_s: float | None, quick: bool, seeds: int, as_json: bool, output: Path | None,
                   ray_address: str | None = None, html_page: Path | None = None,
                   continue_from: Path | None = None) -> int:
    """`ladder suite --optimize`: the loop on every operator, the summary table (exit status)."""
    from ladder.diagnoser.optimize import suite as optimized
    from ladder.diagnoser.optimize.gate import GateSettings
    from ladder.diagnoser.optimize.loop import Settings

    settings = Settings(rounds=rounds, budget_s=budget_s, gate=GateSettings(backend=backend, seeds=seeds, quick=quick))

    def progress(line: str) -> None:
        log.info(f"suite --optimize: {line}")

    def on_operator(row: dict[str, Any]) -> None:
        progress(f"{row['operator']}: " + (row["error"] if "error" in row else
                                           f"{row['speedup_vs_initial']:.3f}x over initial "
                                           f"after {row['rounds']} rounds ({row['elapsed_s']} s)"))

    if ray_address:
        from ladder.diagnoser.optimize import scale

        document = scale.optimize_suite_ray(operators, settings, proposer, runs, address=ray_address, echo=progress,
                                            continue_from=continue_from)
    else:
        document = optimized.optimize_suite(operators, settings, proposer, runs, on_operator=on_operator,
                                            progress=progress, continue_from=continue_from)
    if output is not None:
        write_json(output, document)
    if html_page is not None:
        optimized.write_pages(document, runs, html_page)
        progress(f"the suite's page: {html_page}")
    echo(json.dumps(document, indent=1, default=json_default) if as_json else optimized.table(document))
    return NEGATIVE if document["stopped"] or any("error" in row for row in document["operators"]) else 0


@click.command("suite", cls=LadderCommand)
@click.option("--level", type=click.Choice(["1", "2"]), help="Only this KernelBench level.")
@click.option("--only", multiple=True, metavar="NAME",
              help="Only this operator (level1/23_softmax, 23_softmax, softmax or 23); repeatable.")
@click.option("--backend", type=click.Choice(["cuda", "npu", "interpret"]),
              help="Where to run; default: cuda if available, else npu, else interpret (CPU, no timing).")
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON on stdout instead of the table.")
@click.option("--output", "output", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write the JSON results to this file (rewritten after every operator).")
@click.option("--quick", is_flag=True,
              help="Use each problem's small get_test_cases() instead of its cases (a smoke test; "
                   "with --backend interpret, the suite's correctness check on a CPU).")
@click.option("--seeds", type=click.IntRange(1), default=DEFAULT_SEEDS, show_default=True,
              help="Fresh random inputs per case for the correctness check.")
@click.option("--seed", type=int, help="Base seed (default: a fresh one, recorded in the JSON).")
@click.option("--budget", "budget_s", type=click.FloatRange(0, min_open=True), default=DEFAULT_BUDGET_S,
              show_default=True, help="Timing budget in seconds per contestant and case.")
@click.option("--min-reps", type=click.IntRange(1), default=DEFAULT_MIN_REPS, show_default=True,
              help="At least this many timed repetitions per contestant and case.")
@click.option("--no-time", is_flag=True, help="Correctness only.")
@click.option("--per-case", is_flag=True, help="Show every case under its operator in the table.")
@click.option("--show", "show", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Print the table of a saved --output/--json document instead of running the suite.")
@click.option("--precompile/--no-precompile", default=True, show_default=True,
              help="On CUDA, compile every kernel of every case in parallel processes before the run.")
@click.option("--isolate", is_flag=True,
              help="Evaluate each operator in its own worker subprocess (survives crashes, slower).")
@click.option("--timeout", "timeout_s", type=float, default=600.0, show_default=True,
              help="With --isolate: wall-clock limit per operator, in seconds.")
@click.option("--diagnose", is_flag=True,
              help="Diagnose every operator instead (the ladder of `ladder diagnose`, device work batched): "
                   "a table of the rung each reached and its findings.")
@click.option("--target", callback=target_option,
              help="With --diagnose: the device every operator is judged for (sm90, ascend, ascend:PART); "
                   "default: from the backend and each operator's code.")
@click.option("--optimize", "optimize", is_flag=True,
              help="Optimize every operator instead (`ladder optimize` per operator, resumable per operator).")
@click.option("--proposer", type=click.Choice(["rules", "llm", "agent"]), default="rules", show_default=True,
              help="With --optimize: who proposes candidates.")
@click.option("--rounds", type=click.IntRange(1), default=15, show_default=True, help="With --optimize: rounds per operator.")
@click.option("--out", "runs", type=click.Path(file_okay=False, path_type=Path), default=Path("ladder-runs/suite"),
              show_default=True, help="With --optimize: where each operator's run directory goes.")
@click.option("--from", "from_runs", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="With --optimize: another suite's runs directory (the rules proposer's, say); an operator "
                   "with a run there starts where it stopped, on its baseline and best.")
@click.option("--operator-budget", type=click.FloatRange(0, min_open=True),
              help="With --optimize: stop an operator's run after this many seconds.")
@click.option("--rung-timeout", "timeouts", multiple=True, metavar="[RUNG=]SECONDS",
              help="With --diagnose: stop a rung that runs longer (each rung runs in a process of its own); "
                   "SECONDS for every rung, RUNG=SECONDS for one, 0 for no limit. Defaults as for ladder diagnose.")
@click.option("--html", "html_page", type=click.Path(dir_okay=False, path_type=Path),
              help="With --optimize: write the suite's page here, linking to each run's HTML report "
                   "(written into its run directory).")
@click.option("--ray", "ray_address", metavar="auto|local|ADDRESS",
              help="With --optimize: every operator at once on a Ray cluster, each gate on one whole GPU "
                   "(auto: the cluster this machine is in; local: start one here).")
def suite(level: str | None, only: tuple[str, ...], backend: str | None, as_json: bool, output: Path | None,
          quick: bool, seeds: int, seed: int | None, budget_s: float, min_reps: int, no_time: bool,
          per_case: bool, show: Path | None, precompile: bool, isolate: bool, timeout_s: float,
          diagnose: bool, target: str | None, optimize: bool, proposer: str, rounds: int, runs: Path,
          operator_budget: float | None, timeouts: tuple[str, ...], html_page: Path | None,
          ray_address: str | None, from_runs: Path | None) -> None:
    """Bench every operator of the kernel suite: the initial Triton solution against PyTorch eager.

    Prints one row per operator (geometric means over its cases: initial and eager milliseconds,
    eager/initial, % of the roofline) and the geometric mean and median across operators. Exit
    status 0 when every operator is correct on every case, 1 otherwise, 2 on a usage error.
    """
    if show is not None:
        document = load_document(show)
        echo(render.render(document["operators"], document["summary"], document["meta"], per_case=per_case))
        return
    try:
        operators = discover(level=int(level) if level else None, only=only)
        check_backend(backend)
    except SuiteError as error:
        raise click.UsageError(str(error)) from None
    if diagnose:
        try:
            limits = rung_limits(timeouts)
        except DiagnoseError as error:
            raise click.UsageError(str(error)) from None
        sys.exit(diagnose_suite(operators, backend, as_json, output, isolate=isolate, target=target, limits=limits))
    if optimize:
        if from_runs is not None and from_runs.resolve() == runs.resolve():
            raise click.UsageError("--from names the runs to start from; pass another --out for the new ones")
        sys.exit(optimize_suite(operators, backend, proposer, rounds, runs, operator_budget, quick, seeds, as_json,
                                output, ray_address, html_page, from_runs))
    settings = BenchSettings(backend=backend, isolate=isolate, precompile=precompile, timeout_s=timeout_s,
                             seeds=seeds, seed=seed,
                             time=not no_time, budget_s=budget_s, min_reps=min_reps,
                             max_reps=max(min_reps, DEFAULT_MAX_REPS))
    interactive = sys.stderr.isatty() and logs.progress_shown()
    with click.progressbar(length=len(operators), label="ladder suite", file=sys.stderr, hidden=not interactive,
                           show_pos=True, item_show_func=lambda text: text) as bar:
        def on_progress(op: Operator, event: dict) -> None:
            if interactive and event.get("message"):
                bar.update(0, f"{op.key}: {event['message']}"[:70])
            elif event.get("stage") == "precompile":
                log.info(event["message"])

        def on_operator(row: dict[str, Any], meta: dict[str, Any]) -> None:
            finished.append(row)
            if output is not None:
                write_json(output, report(finished, meta))
            bar.update(1, row["operator"])
            if not interactive:
                log.info(f"[{len(finished)}/{len(operators)}] {render.one_line(row)}")

        finished: list[dict[str, Any]] = []
        try:
            rows, meta = run_suite(operators, settings, quick=quick, on_progress=on_progress,
                                   on_operator=on_operator)
        except SuiteError as error:
            raise click.UsageError(str(error)) from None
    document = report(rows, meta)
    if output is not None:
        write_json(output, document)
    if as_json:
        echo(json.dumps(document, indent=1, default=json_default))
    else:
        echo(render.render(rows, document["summary"], meta, per_case=per_case))
    if not all(row["ok"] for row in rows):
        sys.exit(NEGATIVE)

