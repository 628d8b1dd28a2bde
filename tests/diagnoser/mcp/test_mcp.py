"""`ladder mcp` through the official `mcp` client over stdio: the tools it lists, and a candidate
submitted, gated by the real judge (the interpreter backend) and journaled."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio
import pytest

from ladder.diagnoser.optimize.gate import GateSettings
from ladder.diagnoser.optimize.journal import Journal
from ladder.diagnoser.optimize.loop import Settings, optimize
from ladder.diagnoser.optimize.proposers.agent import AgentProposer

ROOT = Path(__file__).resolve().parents[3]
SCALE = ROOT / "tests" / "diagnoser" / "optimize" / "fixtures" / "scale"
WRONG = (SCALE / "solution.py").read_text().replace("alpha * tl.load", "(alpha + 1.0) * tl.load")
TOOLS = {"diagnose", "ir_facts", "index_query", "catalog", "bench", "brief", "submit", "status", "journal"}


@pytest.fixture
def waiting_run(tmp_path):
    run = tmp_path / "run"
    settings = Settings(rounds=3, evidence="timing", gate=GateSettings(backend="interpret", seeds=1, quick=True))
    optimize(SCALE / "solution.py", SCALE / "problem.py", run, AgentProposer(run), settings)
    return run


@pytest.mark.slow
def test_an_agent_over_mcp_reads_the_brief_submits_and_the_gate_records_it(waiting_run):
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    server = StdioServerParameters(command=sys.executable, args=["-m", "ladder.diagnoser", "mcp", "--run", str(waiting_run)],
                                   env={"PYTHONPATH": str(ROOT), "TRITON_CACHE_DIR": os.environ["TRITON_CACHE_DIR"]},
                                   cwd=str(ROOT))
    seen: dict = {}

    async def client() -> None:
        async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            seen["tools"] = {tool.name for tool in (await session.list_tools()).tools}
            seen["brief"] = text(await session.call_tool("brief", {}))
            seen["submitted"] = json.loads(text(await session.call_tool(
                "submit", {"source": WRONG, "summary": "scale in one launch"})))
            seen["status"] = json.loads(text(await session.call_tool("status", {})))
            seen["entry"] = json.loads(text(await session.call_tool("catalog", {"pattern_id": "nv.scalar-access"})))
            seen["refused"] = await session.call_tool("submit", {})
            journal = await session.read_resource("ladder://run/journal")
            seen["journal"] = journal.contents[0].text
            report = await session.read_resource("ladder://run/report")
            seen["report"] = report.contents[0].text

    anyio.run(client)
    assert seen["tools"] == TOOLS
    assert seen["brief"].startswith("# Round 1") and "## How to answer" in seen["brief"]
    submitted = seen["submitted"]
    assert submitted["round"] == 1 and submitted["recorded"] is True
    assert "exceeds tolerance" in submitted["candidate"]["outcome"]["reason"]  # the judge ran it
    assert submitted["brief"].startswith("# Round 2") and "scale in one launch" in submitted["brief"]
    assert (seen["status"]["state"], seen["status"]["waiting_for"]) == ("waiting", 2)
    assert seen["entry"]["id"] == "nv.scalar-access" and seen["entry"]["title"]
    assert seen["refused"].is_error and "exactly one of candidate" in text(seen["refused"])
    assert '"kind": "round", "round": 1' in seen["journal"] and "scale in one launch" in seen["report"]
    (first,) = Journal(waiting_run).rounds()
    assert first["proposer"] == "agent" and first["proposals"][0]["summary"] == "scale in one launch"
    assert (waiting_run / first["proposals"][0]["file"]).read_text() == WRONG


def text(result) -> str:
    return "".join(getattr(part, "text", "") for part in result.content)



def test_what_a_solution_prints_stays_off_the_protocol():
    """Driven by hand, so that every line the server writes on its stdout is seen (a client skips noise)."""
    import subprocess
    import threading

    noisy = ROOT / "tests" / "diagnoser" / "cli" / "data" / "noisy_script.py"
    process = subprocess.Popen([sys.executable, "-m", "ladder.diagnoser", "mcp"], cwd=ROOT, text=True,
                               env={**os.environ, "PYTHONPATH": str(ROOT)},
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    watchdog = threading.Timer(120, process.kill)
    watchdog.start()
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "ir_facts", "arguments": {"solution": str(noisy)}}}]
    lines: list[str] = []
    try:
        process.stdin.write("".join(json.dumps(request) + "\n" for request in requests))
        process.stdin.flush()
        for line in process.stdout:
            lines.append(line)
            if json.loads(line).get("id") == 2:  # every line must be JSON-RPC
                break
    finally:
        watchdog.cancel()
        process.kill()
        _, stderr = process.communicate()
    answer = json.loads(lines[-1])
    assert answer["id"] == 2 and not answer["result"].get("isError"), lines
    assert "scale_kernel" in json.dumps(answer["result"])
    assert "the script's own print at import" in stderr and "a raw write to descriptor 1" in stderr
