"""The MCP server: each tool is a thin call into the function the command line calls.

=================  ==========================================================================
``diagnose``       the ladder on a solution (``ladder.diagnoser.ladder.climb``), its JSON report
``ir_facts``       the facts read from the IR of every kernel a solution launches (``ladder.diagnoser.ir``)
``index_query``    the compiler chunks that answer a question (``ladder.indexer.search``)
``catalog``        the pattern catalog, or one entry (``ladder.diagnoser.triage.catalog``)
``bench``          correctness and timing of a solution (``ladder.runner.bench.bench_pair``)
``brief``          the brief an agent run waits on (``ladder.diagnoser.optimize.agent``)
``submit``         gate and record one candidate for that run, the verdict and the next brief
``status``         where the run stands; ``journal`` its recorded rounds
=================  ==========================================================================

Resources: ``ladder://run/journal``, ``ladder://run/report`` and ``ladder://run/brief`` for the run
given to ``ladder mcp --run``. Tools that take ``run`` default to that run. A tool that fails
answers with its one-line reason as an error result; the server goes on.
"""
from __future__ import annotations

import functools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any


def build(default_run: Path | None = None) -> Any:
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("ladder", instructions=(
        "ladder diagnoses slow Triton kernels and gates rewrites. To optimize a kernel: read `brief`, edit the "
        "file it names, `submit` it; only ladder's judge decides what is accepted."))

    def tool(fn: Callable[..., Any]) -> Callable[..., Any]:
        return server.tool()(reported(fn))

    def run_of(run: str | None) -> Path:
        chosen = Path(run) if run else default_run
        if chosen is None:
            raise ValueError("no run: pass run=RUN, or start the server with `ladder mcp --run RUN`")
        return chosen

    @tool
    def diagnose(solution: str, problem: str | None = None, rungs: str = "1-4", backend: str = "auto") -> dict[str, Any]:
        """Climb the ladder for a solution (rungs 1-4, only as far as the evidence requires): findings with their
        source lines, profile, IR facts, cited compiler code. backend: auto, cuda, npu or aot (compile only)."""
        from ladder.diagnoser import ladder, report
        from ladder.diagnoser.cli.diagnose import parse_rungs, subject_for

        subject = subject_for(solution, problem, backend, None)
        state = ladder.new_state(subject)
        state["options"] = {"ncu": True}
        # Each rung in a child process under its time limit: a hung compile is stopped, not the server.
        state = ladder.climb(subject, state, parse_rungs(rungs), limits=ladder.RUNG_TIMEOUTS_S)
        return json.loads(report.render(state, "json"))

    @tool
    def ir_facts(solution: str, problem: str | None = None, target: str = "sm90") -> list[dict[str, Any]]:
        """The facts read from the IR (TTIR, TTGIR, LLVM IR, PTX, SASS) of every kernel the solution launches,
        each tied to its source line: access widths, layouts, pipelining, spills, occupancy..."""
        from ladder.diagnoser import ladder
        from ladder.runner import timelimit

        # In a child process under the IR rung's time limit, like the rung: a hung compile is stopped.
        return timelimit.call(fact_dicts, (solution, problem, target), timeout=ladder.RUNG_TIMEOUTS_S["ir"])

    @tool
    def index_query(question: str, k: int = 5, backend: str | None = None) -> list[dict[str, Any]]:
        """The compiler source, pass descriptions and catalog entries that answer a question, cited path:start-end."""
        from ladder import indexer

        return indexer.search(question, k=k, where={"backend": backend} if backend else None)

    @tool
    def catalog(pattern_id: str | None = None) -> dict[str, Any]:
        """Every catalog pattern (id, backend, title, whether a mechanical fix exists), or one entry in full."""
        from ladder.diagnoser.triage.catalog import load_catalog, render

        entries = load_catalog()
        if pattern_id is None:
            return {"patterns": [{"id": p.id, "backend": p.backend, "title": p.title, "mechanical": p.mechanical}
                                 for p in entries.values()]}
        if pattern_id not in entries:
            raise ValueError(f"no catalog entry {pattern_id!r} (the catalog tool without an id lists them)")
        entry = entries[pattern_id]
        return {"id": entry.id, "title": entry.title, "symptom": entry.symptom, "fix": entry.fix,
                "compiler": entry.compiler, "text": render(entry)}

    @tool
    def bench(solution: str, problem: str | None = None, backend: str | None = None, seeds: int = 3,
              baseline: str | None = None) -> dict[str, Any]:
        """Correctness on fresh inputs of every case and, on a device, timing against PyTorch (and a baseline
        solution, interleaved). The same judge as `ladder bench` and the optimization gate."""
        from ladder.diagnoser.optimize.gate import without_secrets
        from ladder.runner.bench import bench_pair

        with without_secrets():
            return bench_pair(solution, problem or str(Path(solution).with_name("problem.py")), baseline=baseline,
                              backend=backend, seeds=seeds)

    @tool
    def brief(run: str | None = None) -> str:
        """The brief the optimization run waits on (Markdown): the problem, the best kernel, the evidence, the
        earlier rounds, the file to edit."""
        from ladder.diagnoser.optimize.agent import current_brief

        return current_brief(run_of(run))

    @tool
    def submit(candidate: str | None = None, source: str | None = None, summary: str = "", round: int | None = None,
               run: str | None = None) -> dict[str, Any]:
        """Gate one candidate for the round the run waits on (a file path in candidate, or its text in source) and
        record it: the verdict, the run's status and the next brief. A round already recorded is not recorded again."""
        from ladder.diagnoser.optimize.agent import submit as submit_candidate

        if (candidate is None) == (source is None):
            raise ValueError("pass exactly one of candidate (a file) or source (its text)")
        text = Path(candidate).read_text() if candidate is not None else source
        return submit_candidate(run_of(run), text, summary, round).to_dict()

    @tool
    def status(run: str | None = None) -> dict[str, Any]:
        """Where the optimization run stands: waiting for a candidate, paused or finished; its best; its last round."""
        from ladder.diagnoser.optimize.agent import status as run_status

        return run_status(run_of(run))

    @tool
    def journal(run: str | None = None) -> list[dict[str, Any]]:
        """The run's recorded rounds: each candidate, its summary and the gate's verdict."""
        from ladder.diagnoser.optimize.loop import load_run

        return [{"round": r["round"], "accepted": r.get("accepted"),
                 "candidates": [{"id": p["id"], "summary": p["summary"], "outcome": p.get("outcome")}
                                for p in r.get("proposals", [])]} for r in load_run(run_of(run)).rounds()]

    @server.resource("ladder://run/journal", mime_type="application/x-ndjson")
    def journal_resource() -> str:
        """The run's journal, one JSON object per line."""
        from ladder.diagnoser.optimize.loop import load_run

        return load_run(run_of(None)).path.read_text()

    @server.resource("ladder://run/report", mime_type="text/markdown")
    def report_resource() -> str:
        """The run's report, rendered from its journal."""
        from ladder.diagnoser.optimize import report
        from ladder.diagnoser.optimize.loop import load_run

        return report.markdown(report.build(load_run(run_of(None))))

    @server.resource("ladder://run/brief", mime_type="text/markdown")
    def brief_resource() -> str:
        """The brief the run waits on."""
        from ladder.diagnoser.optimize.agent import current_brief

        return current_brief(run_of(None))

    return server


def reported(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The tool with its failures answered as their one-line reason (the SDK keeps other errors' text to itself)."""
    from mcp.server.mcpserver.exceptions import ToolError

    @functools.wraps(fn)
    def answer(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except Exception as error:
            raise ToolError(" ".join(str(error).split()) or type(error).__name__) from error

    return answer


def fact_dicts(solution: str, problem: str | None, target: str) -> list[dict[str, Any]]:
    """The `ir_facts` tool's work; at module level so that it can run in a child process."""
    from ladder.diagnoser.ir import facts_for

    return [fact.to_dict() for fact in facts_for(solution, problem, target=target)]
