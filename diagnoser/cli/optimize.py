"""``ladder optimize``: run the loop on one kernel; ``report`` renders a run from its journal.

    ladder optimize SOLUTION [--problem P] [--rounds 15] [--proposer rules|llm|agent] [--out DIR]
                    [--resume | --from RUN] [--budget SECONDS] [--model M] [--wait] [--json] ...
    ladder optimize submit RUN CANDIDATE.py [--round N] [--summary TEXT] [--json]
    ladder optimize status RUN [--json]
    ladder optimize report RUN [--html OUT] [--json]

With ``--proposer agent`` the run stops at each round's brief (``RUN/brief.md``) until an agent
answers it with ``submit``, which gates and records the candidate and prints the next brief.

Exit status (``ladder.diagnoser.cli.errors``): 0 when the run finished or waits for an agent (whatever it
found), 1 when a submission was refused, 2 on a usage error, 3 when the run stopped on an error it
could not go past (a lost device, a broken journal: the journal is kept, ``--resume`` continues),
130 when interrupted (the journal is intact).
"""
from __future__ import annotations

import json
import logging
from pathlib import Path

import click

from ladder.diagnoser.cli.command import LadderGroup
from ladder.diagnoser.cli.diagnose import rung_limits
from ladder.diagnoser.cli.errors import CannotRun, Refused
from ladder.diagnoser.cli.streams import echo
from ladder.diagnoser.optimize import ascend
from ladder.diagnoser.optimize.brief import EVIDENCE_LEVELS
from ladder.diagnoser.subject import checked_target, target_for
from ladder.runner.ascend_ir import ascend_python, missing_environment

log = logging.getLogger("ladder")


class BackendName(click.Choice):
    """A backend ladder ships, or ``package.module:attribute`` naming one's own (``ladder.runner.backends``)."""

    def convert(self, value, param, ctx):
        return value if isinstance(value, str) and ":" in value else super().convert(value, param, ctx)


def _target(value: str | None) -> str | None:
    try:
        return None if value is None else checked_target(value)
    except ValueError as error:
        raise click.BadParameter(str(error)) from None


def _recorded_target(out: Path) -> str | None:
    """The target a run in `out` was started with (a resume keeps it), if there is one."""
    from ladder.diagnoser.optimize.journal import Journal, JournalError

    journal = Journal(out)
    try:
        return journal.header().get("settings", {}).get("target") if journal.exists() else None
    except JournalError:
        return None


class DefaultGroup(LadderGroup):
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
@click.option("--from", "from_run", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="Start where the run in this directory stopped (another proposer's, say): its baseline, "
                   "rounds and best are copied into --out and this proposer's rounds follow.")
@click.option("--budget", "budget_s", type=click.FloatRange(0, min_open=True), help="Stop after this many seconds.")
@click.option("--patience", type=click.IntRange(1), default=3, show_default=True,
              help="Stop after this many rounds without a gain.")
@click.option("--backend", type=BackendName(["cuda", "npu", "interpret"]),
              help="Where candidates run (default: best here), or module:attribute of a backend of one's own.")
@click.option("--target", callback=lambda ctx, param, value: _target(value), help="The device the kernel is diagnosed and fixed for: sm90, ascend "
              "or ascend:PART (default: from the backend and the code). ascend without --backend npu runs "
              "compile-only rounds: nothing is timed.")
@click.option("--seeds", type=click.IntRange(1), default=2, show_default=True, help="Fresh inputs per case for correctness.")
@click.option("--quick", is_flag=True, help="The problem's small test cases (a CPU smoke run; nothing is timed there).")
@click.option("--model", help="--proposer llm: the model name (else LADDER_LLM_MODEL / OPENAI_MODEL).")
@click.option("--wait", is_flag=True, help="--proposer agent: stay until the run finishes, printing each round "
              "an agent submits (without it: exit once the brief is written).")
@click.option("--rung-timeout", "timeouts", multiple=True, metavar="[RUNG=]SECONDS",
              help="Each round's diagnosis: stop a rung that runs longer, as ladder diagnose does "
                   "(SECONDS for every rung, RUNG=SECONDS for one, 0 for no limit).")
@click.option("--json", "as_json", is_flag=True, help="Print the run's summary as JSON.")
def run_command(solution: Path, problem: Path | None, rounds: int, proposer: str, candidates: int, evidence: str,
                out: Path | None, resume: bool, from_run: Path | None, budget_s: float | None, patience: int, backend: str | None,
                target: str | None, seeds: int, quick: bool, model: str | None, wait: bool,
                timeouts: tuple[str, ...], as_json: bool) -> None:
    """Optimize SOLUTION against its problem; every round is journaled in --out."""
    from ladder.diagnoser.optimize.gate import GateSettings
    from ladder.diagnoser.optimize.journal import JournalError
    from ladder.diagnoser.optimize.loop import OptimizeError, Settings
    from ladder.diagnoser.optimize.loop import optimize as run_loop
    from ladder.diagnoser.optimize.proposers import ProposerError, load_proposer

    problem = problem or solution.with_name("problem.py")
    if not problem.is_file():
        raise click.UsageError(f"no problem file: pass --problem (looked for {problem})")
    out = out or Path("ladder-runs") / solution.resolve().parent.name
    if from_run is not None and from_run.resolve() == out.resolve():
        raise click.UsageError("--from names the run to start from; pass another --out for the new run "
                               "(or --resume to continue this one)")
    if target is None and (resume or from_run is not None):
        target = _recorded_target(out if resume else from_run)
    target = target_for(backend or "auto", str(solution), str(problem), target)
    settings = Settings(rounds=rounds, candidates=candidates, evidence=evidence, patience=patience, budget_s=budget_s,
                        gate=GateSettings(backend=backend, seeds=seeds, quick=quick), target=target,
                        rung_timeouts=rung_limits(timeouts))
    if ascend.gate_for(target, backend) is not None:
        if ascend_python() is None:
            raise CannotRun(f"--target {target} compiles candidates with Triton-Ascend: {missing_environment()}",
                            kind="AscendUnavailable")
        log.warning(f"ladder optimize: compile-only rounds for {target} (no --backend npu): candidates are compiled "
                    "for Ascend, checked under the interpreter and their IR diagnosed; nothing can be timed, so "
                    "none is accepted")
    try:
        chosen = load_proposer(proposer, run=out.resolve(), model=model, target=target)
    except ProposerError as error:
        raise click.UsageError(str(error)) from None
    try:
        summary = run_loop(solution, problem, out, chosen, settings, resume=resume, continue_from=from_run,
                           progress=_progress)
        if proposer == "agent" and wait:
            summary = wait_for_agent(out)
    except KeyboardInterrupt:
        log.warning(f"optimize: the journal in {out} is intact (--resume continues)")
        raise
    except (OptimizeError, JournalError) as error:
        raise CannotRun(str(error), kind=type(error).__name__) from None
    if proposer == "agent" and not wait and not as_json:
        from ladder.diagnoser.optimize import agent

        now = agent.status(out)
        if now["state"] == "waiting":
            _progress(f"{now['reason']}; the brief is in {now['brief']}")
            echo(agent.current_brief(out), nl=False)
            return
    echo(json.dumps(summary, indent=1, default=str) if as_json else one_screen(summary))


def _progress(line: str) -> None:
    log.info(f"optimize: {line}")


def wait_for_agent(out: Path) -> dict:
    from ladder.diagnoser.optimize import agent
    from ladder.diagnoser.optimize.journal import Journal
    from ladder.diagnoser.optimize.loop import summary

    _progress(f"waiting for an agent to answer {out}/brief.md (ladder optimize submit ...)")
    finished = agent.wait_until_finished(out, lambda record: _progress(round_line(record)))
    return summary(Journal(out), finished["reason"])


@optimize.command("submit")
@click.argument("run", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.argument("candidate", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--round", "round_number", type=click.IntRange(1),
              help="The round this candidate answers (default: the one the run waits for).")
@click.option("--summary", default="", help="What the candidate changes and why (catalog ids it addresses).")
@click.option("--json", "as_json", is_flag=True, help="Print the verdict, the run's status and the next brief as JSON.")
def submit_command(run: Path, candidate: Path, round_number: int | None, summary: str, as_json: bool) -> None:
    """Gate and record CANDIDATE for the round an agent run waits on; print the verdict and the next brief."""
    from ladder.diagnoser.optimize import agent
    from ladder.diagnoser.optimize.journal import Journal, JournalError
    from ladder.diagnoser.optimize.loop import OptimizeError
    from ladder.diagnoser.optimize.loop import summary as run_summary

    try:
        submitted = agent.submit(run.resolve(), candidate.read_text(), summary, round_number, progress=_progress)
    except agent.AgentError as error:
        raise Refused(str(error), kind="SubmissionRefused") from None
    except (OptimizeError, JournalError) as error:
        raise CannotRun(str(error), kind=type(error).__name__) from None
    if as_json:
        echo(json.dumps(submitted.to_dict(), indent=1, default=str))
        return
    outcome = submitted.candidate.get("outcome") or {}
    again = "" if submitted.recorded else " (already recorded: not recorded again)"
    echo(f"round {submitted.round}{again}: {submitted.candidate['id']} "
               f"{'accepted' if outcome.get('accepted') else 'not accepted'}: {outcome.get('reason')}\n")
    if submitted.brief is not None:
        echo(submitted.brief, nl=False)
    else:
        echo(f"the run has finished: {submitted.status['reason']}")
        echo(one_screen(run_summary(Journal(run), submitted.status["reason"])), nl=False)


@optimize.command("status")
@click.argument("run", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
def status_command(run: Path, as_json: bool) -> None:
    """Where a run stands: waiting for an agent, paused, finished; its best and its last round."""
    from ladder.diagnoser.optimize import agent
    from ladder.diagnoser.optimize.journal import JournalError

    try:
        now = agent.status(run)
    except JournalError as error:
        raise CannotRun(str(error), kind="JournalError") from None
    if as_json:
        echo(json.dumps(now, indent=1, default=str))
        return
    best = now["best"]
    lines = [f"{now['run']}: {now['proposer']} run of {now['problem']}", f"state: {now['state']}: {now['reason']}",
             (f"rounds recorded: {now['rounds']}; best from round {best['round']}: "
             f"{best['geomean_vs_initial'] or 1.0:.3f}x over the initial version ({best['file']})")]
    if now["brief"]:
        lines.append(f"brief for round {now['waiting_for']}: {now['brief']}")
    for candidate in (now["last_round"] or {}).get("candidates", []):
        lines.append(f"round {now['last_round']['round']}: {candidate['id']} "
                     f"{'accepted' if candidate['accepted'] else 'not accepted'}: {candidate['reason']}")
    echo("\n".join(lines))


def round_line(record: dict) -> str:
    parts = [f"{p['id']} {'accepted' if (p.get('outcome') or {}).get('accepted') else 'not accepted'}: "
             f"{(p.get('outcome') or {}).get('reason')}" for p in record.get("proposals", [])]
    return f"round {record['round']}: " + "; ".join(parts)


@optimize.command("report")
@click.argument("run", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--html", "html_out", type=click.Path(dir_okay=False, path_type=Path), help="Write the HTML page here.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def report_command(run: Path, html_out: Path | None, as_json: bool) -> None:
    """The report of a run, rendered from its journal alone (Markdown; --html, --json)."""
    from ladder.diagnoser.optimize import report
    from ladder.diagnoser.optimize.journal import Journal, JournalError

    try:
        document = report.build(Journal(run))
    except JournalError as error:
        raise CannotRun(str(error), kind="JournalError") from None
    if html_out:
        html_out.write_text(report.html(document))
        _progress(f"HTML report written to {html_out}")
    echo(json.dumps(document, indent=1, default=str) if as_json else report.markdown(document), nl=False)


def one_screen(summary: dict) -> str:
    lines = [f"{summary['problem']}: {summary['rounds']} rounds, stopped: {summary['stopped']}"]
    if not any(case.get("time_ms") for case in summary["cases"]):
        lines.append(f"nothing was timed on {summary.get('device')}: no candidate could be accepted; the journal "
                     f"({summary['run']}/journal.jsonl) says what each one compiles to and whether it is correct")
        return "\n".join(lines) + "\n"
    lines.append(f"best: round {summary['best_round']} ({summary['best_file']}), "
                 f"{summary['geomean_vs_initial']:.3f}x over the initial version (geomean over cases)")
    for case in summary["cases"]:
        lines.append(f"  {case.get('label')}: {case.get('time_ms') or 0:.4g} ms, "
                     f"{(case.get('speedup_vs_initial') or 0):.2f}x vs initial, "
                     f"{(case.get('roofline_pct') or 0):.1f}% of roofline")
    return "\n".join(lines) + "\n"
