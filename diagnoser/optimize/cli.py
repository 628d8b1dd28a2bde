"""``ladder optimize``: run the loop on one kernel; ``report`` renders a run from its journal.

    ladder optimize SOLUTION [--problem P] [--rounds 15] [--proposer rules|llm|agent] [--out DIR]
                    [--resume] [--budget SECONDS] [--json] ...
    ladder optimize report RUN [--html OUT] [--json]

Exit status: 0 when the run finished (whatever it found), 1 when it stopped on an error it could
not go past (a lost device, a broken journal: the journal is kept, ``--resume`` continues), 2 on a
usage error.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from diagnoser.optimize.brief import EVIDENCE_LEVELS


class DefaultGroup(click.Group):
    """A group whose first argument, when it names no subcommand, is the default command's."""

    default = "run"

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = [self.default, *args]
        return super().parse_args(ctx, args)


@click.group("optimize", cls=DefaultGroup)
def optimize() -> None:
    """Make a Triton kernel faster: diagnose, propose, gate, record, round after round."""


@optimize.command("run")
@click.argument("solution", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--problem", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="The problem file (default: problem.py beside SOLUTION).")
@click.option("--rounds", type=click.IntRange(1), default=15, show_default=True, help="At most this many rounds.")
@click.option("--proposer", type=click.Choice(["rules", "llm", "agent"]), default="rules", show_default=True,
              help="Who proposes candidates: the catalog's fixes, a model, or an external agent.")
@click.option("--candidates", type=click.IntRange(1), default=4, show_default=True, help="Candidates per round.")
@click.option("--evidence", type=click.Choice(EVIDENCE_LEVELS), default="full", show_default=True,
              help="What the proposer is shown: nothing beyond the kernel, timings, or the whole ladder.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="Run directory (default: ladder-runs/<solution folder>).")
@click.option("--resume", is_flag=True, help="Continue the run in --out at its next round.")
@click.option("--budget", "budget_s", type=click.FloatRange(0, min_open=True), help="Stop after this many seconds.")
@click.option("--patience", type=click.IntRange(1), default=3, show_default=True,
              help="Stop after this many rounds without a gain.")
@click.option("--backend", type=click.Choice(["cuda", "npu", "interpret"]), help="Where candidates run (default: best here).")
@click.option("--seeds", type=click.IntRange(1), default=2, show_default=True, help="Fresh inputs per case for correctness.")
@click.option("--quick", is_flag=True, help="The problem's small test cases (a CPU smoke run; nothing is timed there).")
@click.option("--model", help="--proposer llm: the model name (else LADDER_LLM_MODEL / OPENAI_MODEL).")
@click.option("--json", "as_json", is_flag=True, help="Print the run's summary as JSON.")
def run_command(solution: Path, problem: Path | None, rounds: int, proposer: str, candidates: int, evidence: str,
                out: Path | None, resume: bool, budget_s: float | None, patience: int, backend: str | None, seeds: int,
                quick: bool, model: str | None, as_json: bool) -> None:
    """Optimize SOLUTION against its problem; every round is journaled in --out."""
    from diagnoser.optimize.gate import GateSettings
    from diagnoser.optimize.journal import JournalError
    from diagnoser.optimize.loop import OptimizeError, Settings, optimize as run_loop
    from diagnoser.optimize.proposers import load_proposer

    problem = problem or solution.with_name("problem.py")
    if not problem.is_file():
        raise click.UsageError(f"no problem file: pass --problem (looked for {problem})")
    out = out or Path("ladder-runs") / solution.resolve().parent.name
    settings = Settings(rounds=rounds, candidates=candidates, evidence=evidence, patience=patience, budget_s=budget_s,
                        gate=GateSettings(backend=backend, seeds=seeds, quick=quick))
    try:
        chosen = load_proposer(proposer, run=out, model=model)
        summary = run_loop(solution, problem, out, chosen, settings, resume=resume,
                           progress=lambda line: click.echo(f"ladder optimize: {line}", err=True))
    except KeyboardInterrupt:
        click.echo(f"ladder optimize: interrupted; the journal in {out} is intact (--resume continues)", err=True)
        sys.exit(130)
    except (OptimizeError, JournalError) as error:
        if as_json:
            click.echo(json.dumps({"error": str(error)}))
        click.echo(f"ladder optimize: {error}", err=True)
        sys.exit(1)
    click.echo(json.dumps(summary, indent=1, default=str) if as_json else one_screen(summary))


@optimize.command("report")
@click.argument("run", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--html", "html_out", type=click.Path(dir_okay=False, path_type=Path), help="Write the HTML page here.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def report_command(run: Path, html_out: Path | None, as_json: bool) -> None:
    """The report of a run, rendered from its journal alone (Markdown; --html, --json)."""
    from diagnoser.optimize import report
    from diagnoser.optimize.journal import Journal, JournalError

    try:
        document = report.build(Journal(run))
    except JournalError as error:
        raise click.ClickException(str(error)) from None
    if html_out:
        html_out.write_text(report.html(document))
        click.echo(f"ladder optimize: HTML report written to {html_out}", err=True)
    click.echo(json.dumps(document, indent=1, default=str) if as_json else report.markdown(document), nl=False)


def one_screen(summary: dict) -> str:
    lines = [f"{summary['problem']}: {summary['rounds']} rounds, stopped: {summary['stopped']}",
             f"best: round {summary['best_round']} ({summary['best_file']}), "
             f"{summary['geomean_vs_initial']:.3f}x over the initial version (geomean over cases)"]
    for case in summary["cases"]:
        lines.append(f"  {case.get('label')}: {case.get('time_ms') or 0:.4g} ms, "
                     f"{(case.get('speedup_vs_initial') or 0):.2f}x vs initial, "
                     f"{(case.get('roofline_pct') or 0):.1f}% of roofline")
    return "\n".join(lines) + "\n"
