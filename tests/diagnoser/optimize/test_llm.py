"""The `llm` proposer against a real HTTP server on the loopback interface, the real `openai` client on
the other side: what the model is shown, what is gated, what is retried, and that the key stays secret."""
from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest
from click.testing import CliRunner

from ladder.diagnoser.optimize import report
from ladder.diagnoser.cli.optimize import optimize as optimize_command
from ladder.diagnoser.optimize.gate import GateSettings, run_gate
from ladder.diagnoser.optimize.journal import Journal
from ladder.diagnoser.optimize.loop import Settings, optimize
from ladder.diagnoser.optimize.proposers import Paused, ProposerError
from ladder.diagnoser.optimize.proposers.llm import Endpoint, LlmProposer
from ladder.diagnoser.optimize.proposers.rules import source_hash
from ladder.diagnoser.optimize.brief import Brief

from .chat_server import ChatServer, Raw, Slow, Status
from .test_loop import INITIAL, fake_gate

SCALE = Path(__file__).parent / "fixtures" / "scale"
SLOW = (SCALE / "solution.py").read_text()
KEY = "sk-ladder-test-5f0c1e9a7d3b"
HOST_CLOCK = GateSettings(backend="tests.runner.host_clock:backend", seeds=1, budget_s=0.05, min_reps=5, max_reps=20)


def reply(source: str, said: str = "Launch the kernel once: the eight launches did the same work.") -> str:
    return f"{said}\n\n```python\n{source}```\n"


FASTER = SLOW.replace("range(8)", "range(1)")
WRONG = FASTER.replace("alpha * tl.load", "(alpha + 1.0) * tl.load")
CHEATING = FASTER.replace("        return out", "        return self.alpha * x")  # torch does the compute
NOT_COMPILING = FASTER.replace("def forward(self, x):", "def forward(self, x)")
IMPORTING = FASTER.replace("import torch\n", "import torch\nimport subprocess\n", 1)  # forbidden in a candidate
LEAKING = FASTER.replace("        return out", "        import os\n        raise RuntimeError(str(os.environ.get('LADDER_LLM_API_KEY')))")


def environment(server: ChatServer, **extra: str) -> dict[str, str]:
    return {"LADDER_LLM_BASE_URL": server.base_url, "LADDER_LLM_API_KEY": KEY, "LADDER_LLM_MODEL": "local-coder",
            "LADDER_LLM_MAX_RETRIES": "2", **extra}


@pytest.mark.slow
def test_only_the_correct_faster_kernel_passes_the_judge_and_the_key_is_nowhere(tmp_path, monkeypatch, capfd):
    replies = ["I would rather not.", reply(NOT_COMPILING, "Fix the syntax."), reply(WRONG, "Scale once."),
               reply(CHEATING, "Let torch do it."), reply(IMPORTING, "Shell out."), reply(LEAKING, "Raise."),
               reply(FASTER)]
    processes = ProcessWatch(KEY.encode())
    with ChatServer(replies, delay_s=0.2) as server:
        for name, value in environment(server).items():
            monkeypatch.setenv(name, value)
        settings = Settings(rounds=1, candidates=len(replies), evidence="timing", gate=HOST_CLOCK)
        optimize(SCALE / "solution.py", SCALE / "problem.py", tmp_path / "run", LlmProposer(), settings,
                 gate=lambda *args, **kwargs: run_gate(*args, progress=processes.look, **kwargs),
                 progress=lambda line: print(f"ladder optimize: {line}"))
    assert len(server.requests) == len(replies) and server.most_at_once > 1  # in parallel
    assert all(r["headers"]["authorization"] == f"Bearer {KEY}" for r in server.requests)
    prompt = server.requests[0]["body"]["messages"][-1]["content"]
    assert "class Model(nn.Module)" in prompt and "range(8)" in prompt and "## Timing of the best so far" in prompt

    (first,) = Journal(tmp_path / "run").rounds()
    by_source = {(tmp_path / "run" / p["file"]).read_text() if p["file"] else None: p for p in first["proposals"]}
    assert first["accepted"] == by_source[FASTER]["id"]
    assert [p["outcome"]["accepted"] for p in first["proposals"]].count(True) == 1
    assert by_source[None]["outcome"]["reason"] == "the reply has no complete python code block that defines class ModelNew"
    assert by_source[NOT_COMPILING]["outcome"]["reason"].startswith("rejected (load):")
    assert "SyntaxError" in by_source[NOT_COMPILING]["outcome"]["reason"]
    assert "exceeds tolerance" in by_source[WRONG]["outcome"]["reason"]
    assert by_source[CHEATING]["outcome"]["reason"] == "rejected (runtime): forward calls torch compute ops: Tensor.mul x1"
    assert by_source[IMPORTING]["outcome"]["reason"].startswith("rejected (static): line 4: imports subprocess")
    assert by_source[LEAKING]["outcome"]["reason"].endswith("RuntimeError: None")  # the judge ran without the key
    assert by_source[FASTER]["summary"].startswith("Launch the kernel once")
    assert by_source[FASTER]["cost"] == {**by_source[FASTER]["cost"], "model": "local-coder", "prompt_tokens": 1000,
                                         "completion_tokens": 250}
    assert "range(1)" in (tmp_path / "run" / "best.py").read_text()
    document = report.build(Journal(tmp_path / "run"))
    assert document["model_use"] == {"requests": 7, "prompt_tokens": 7000, "completion_tokens": 1750, "dollars": None}
    assert "Model use: 7 requests, 7000 prompt and 1750 completion tokens." in report.markdown(document)

    for path in (tmp_path / "run").rglob("*"):
        assert not path.is_file() or KEY.encode() not in path.read_bytes(), path
    logged = capfd.readouterr()
    assert "round 1: gate" in logged.out and KEY not in logged.out + logged.err
    assert processes.seen > 0 and processes.holding == []  # the judge's processes: not in argv, not in environ


def test_429_and_500_are_retried_by_the_client_with_backoff():
    code = reply(FASTER)
    with ChatServer([Status(429, "slow down"), Status(503), code]) as server:
        (proposal,) = LlmProposer(environ=environment(server)).propose(brief(), 1)
    assert len(server.requests) == 3 and proposal.source == FASTER and proposal.failure is None


@pytest.mark.parametrize("answer,reason", [
    (Raw(b"<html>502 Bad Gateway</html>"), "the reply is not a chat completion"),
    (Raw(b'{"choices": [', "application/json"), "the reply is not a chat completion (JSONDecodeError"),
    ("", "the reply was empty"),
    ("Here is the idea, no code.", "the reply has no complete python code block that defines class ModelNew"),
    ("```python\nclass ModelNew:\n    pass\n", "the reply has no complete python code block"),
    (reply(SLOW), "the reply is the best solution unchanged"),
])
def test_a_reply_without_a_new_solution_is_a_failed_candidate_with_its_reason(answer, reason):
    with ChatServer([answer]) as server:
        (proposal,) = LlmProposer(environ=environment(server)).propose(brief(), 1)
    assert proposal.source is None and proposal.failure.startswith(reason)


def test_a_reply_that_repeats_an_earlier_candidate_is_not_gated_again():
    tried = [{"round": 2, "proposals": [{"summary": "launch once", "source_hash": source_hash(FASTER)}]}]
    with ChatServer([reply(FASTER)]) as server:
        (proposal,) = LlmProposer(environ=environment(server)).propose(brief(history=tried), 1)
    assert proposal.source is None and proposal.failure == "the reply repeats a candidate of round 2"


def test_the_solution_is_the_last_complete_block_that_defines_the_model_outside_the_thinking():
    text = ("<think>```python\nclass ModelNew: thinking\n```</think>\nBefore:\n```python\nclass ModelNew: old\n```\n"
            "Fuse the two passes (nv.redundant-global-traffic).\n```python\nclass ModelNew: new\n```\n"
            "```python\ndef helper(): pass\n```\n")
    with ChatServer([text]) as server:
        (proposal,) = LlmProposer(environ=environment(server)).propose(
            brief(findings=[{"pattern": "nv.redundant-global-traffic", "title": "read twice", "line": 3}]), 1)
    assert proposal.source == "class ModelNew: new\n" and proposal.summary == "Before:"
    assert proposal.patterns == ["nv.redundant-global-traffic"]


def test_a_slow_endpoint_times_out_and_a_dead_one_pauses_the_run_which_resumes(tmp_path):
    with ChatServer([Slow(2.0, reply(FASTER))]) as server:
        slow = LlmProposer(environ=environment(server, LADDER_LLM_TIMEOUT="0.3", LADDER_LLM_MAX_RETRIES="0"))
        with pytest.raises(Paused) as paused:
            slow.propose(brief(), 1)
    assert paused.value.proposals[0].failure == "the endpoint gave no reply: timed out after 0.3 s (0 retries)"

    solution, problem = tmp_path / "solution.py", tmp_path / "problem.py"
    solution.write_text(INITIAL)
    problem.write_text("# the problem\n")
    settings = Settings(rounds=3, candidates=2, evidence="timing", patience=3, gate=GateSettings())
    dead = {"LADDER_LLM_BASE_URL": f"http://127.0.0.1:{closed_port()}/v1", "LADDER_LLM_MODEL": "m",
            "LADDER_LLM_MAX_RETRIES": "0"}
    result = optimize(solution, problem, tmp_path / "run", LlmProposer(environ=dead), settings, gate=fake_gate)
    journal = Journal(tmp_path / "run")
    (first,) = journal.rounds()
    assert "could not connect" in first["proposals"][0]["outcome"]["reason"] and first["accepted"] is None
    assert result["stopped"].startswith("the model endpoint answered none of round 1's requests")
    assert journal.records()[-1]["final"] is False

    wrong = INITIAL.replace("# speed: 1.0", "# speed: 2.0 # wrong")
    with ChatServer([reply(wrong), "no code", reply(INITIAL.replace("1.0", "1.5")), "no code"]) as server:
        optimize(solution, problem, tmp_path / "run", LlmProposer(environ=environment(server)),
                 Settings(rounds=3, candidates=2, evidence="timing", gate=GateSettings()), resume=True, gate=fake_gate)
    rounds = journal.rounds()
    assert [r["round"] for r in rounds] == [1, 2, 3]
    # the round's two requests run in parallel: either candidate may have drawn the faster reply
    accepted = next(p for p in rounds[-1]["proposals"] if p["id"] == rounds[-1]["accepted"])
    assert "speed: 1.5" in (tmp_path / "run" / accepted["file"]).read_text()
    second_prompt = server.requests[2]["body"]["messages"][-1]["content"]  # round 3 is told why round 2 failed
    assert "## Earlier rounds" in second_prompt and "max error 0.5 exceeds tolerance" in second_prompt
    assert "could not connect" in second_prompt


def test_settings_follow_the_sdk_with_ladders_variables_first():
    env = {"OPENAI_BASE_URL": "http://a/v1", "LADDER_LLM_BASE_URL": "http://b/v1", "OPENAI_API_KEY": "k1",
           "LADDER_LLM_API_KEY": "k2", "OPENAI_MODEL": "m1", "LADDER_LLM_MODEL": "m2",
           "LADDER_LLM_PRICE_PROMPT": "0.5", "LADDER_LLM_PRICE_COMPLETION": "2"}
    endpoint = Endpoint.from_environment(None, env)
    assert (endpoint.base_url, endpoint.api_key, endpoint.model) == ("http://b/v1", "k2", "m2")
    assert Endpoint.from_environment("m3", env).model == "m3" and "k2" not in repr(endpoint)
    assert endpoint.dollars(1000, 250) == pytest.approx(0.001)
    openai_only = Endpoint.from_environment(None, {"OPENAI_API_KEY": "k1", "OPENAI_MODEL": "m1"})
    assert (openai_only.base_url, openai_only.api_key, openai_only.model) == (None, "k1", "m1")
    with pytest.raises(ProposerError, match="needs a model"):
        Endpoint.from_environment(None, {"OPENAI_API_KEY": "k1"})
    with pytest.raises(ProposerError, match="needs an API key"):
        Endpoint.from_environment("m", {})
    assert Endpoint.from_environment("m", {"LADDER_LLM_BASE_URL": "http://localhost:11434/v1"}).api_key == "unused"


def test_the_model_is_shown_the_brief_cut_to_the_evidence_level(tmp_path):
    solution, problem = tmp_path / "solution.py", tmp_path / "problem.py"
    solution.write_text(INITIAL)
    problem.write_text("# the problem\n")
    prompts = {}
    for level in ("none", "timing"):
        with ChatServer(["no code"]) as server:
            optimize(solution, problem, tmp_path / level, LlmProposer(environ=environment(server)),
                     Settings(rounds=1, candidates=1, evidence=level, gate=GateSettings()), gate=fake_gate)
        prompts[level] = server.requests[0]["body"]["messages"][-1]["content"]
    assert "# speed: 1.0" in prompts["none"] and "## Timing" not in prompts["none"]
    assert "## Timing of the best so far" in prompts["timing"]


def test_the_command_line_takes_no_key_and_says_what_is_missing(tmp_path, monkeypatch):
    for name in ("LADDER_LLM_MODEL", "OPENAI_MODEL", "LADDER_LLM_BASE_URL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    assert "key" not in CliRunner().invoke(optimize_command, ["run", "--help"]).output.lower()
    solution = SCALE / "solution.py"
    result = CliRunner().invoke(optimize_command, [str(solution), "--proposer", "llm", "--out", str(tmp_path / "run")])
    assert result.exit_code == 2 and "needs a model: pass --model" in result.output
    assert not (tmp_path / "run").exists()


class ProcessWatch:
    """Looks through this process's descendants (the judge and its contestants) for a secret, whenever the
    judge reports progress: in their command lines and in their environments."""

    def __init__(self, secret: bytes):
        self.secret, self.seen, self.holding = secret, 0, []

    def look(self, event: dict) -> None:
        parents = {}
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                parents[int(stat.parent.name)] = int(stat.read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
        for pid in parents:
            ancestor = parents.get(pid)
            while ancestor not in (None, 0, 1, os.getpid()):
                ancestor = parents.get(ancestor)
            if ancestor != os.getpid():
                continue
            self.seen += 1
            for part in ("cmdline", "environ"):
                try:
                    if self.secret in Path(f"/proc/{pid}/{part}").read_bytes():
                        self.holding.append(f"{pid}/{part}")
                except OSError:
                    pass


def brief(**fields) -> Brief:
    return Brief(round=1, problem_path="problem.py", problem_source="class Model: ...", best_path="best.py",
                 best_source=SLOW, **fields)


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
