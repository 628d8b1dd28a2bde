"""The ``llm`` proposer: a model behind any OpenAI-compatible chat endpoint rewrites the kernel.

OpenAI, DeepSeek, vLLM, Ollama, llama.cpp's server: anything that speaks chat completions, through
the ``openai`` SDK with a ``base_url``. Each round it sends the brief (``prompt.messages``) as
``--candidates`` requests in parallel and reads each reply's solution file (``reply.solution_from``);
the loop gates them like any other proposer's, so a model can propose but never record a win.

Settings follow the SDK's conventions, ladder's own variables first:

=============  =====================================================================
endpoint       ``LADDER_LLM_BASE_URL`` > ``OPENAI_BASE_URL`` > the SDK's default (OpenAI)
key            ``LADDER_LLM_API_KEY`` > ``OPENAI_API_KEY`` (a local server needs none)
model          ``--model`` > ``LADDER_LLM_MODEL`` > ``OPENAI_MODEL``
per request    ``LADDER_LLM_TIMEOUT`` seconds (600), ``LADDER_LLM_MAX_RETRIES`` (3): the SDK's own
               timeout and its retries with backoff on connection errors, 408, 409, 429 and 5xx
prices         ``LADDER_LLM_PRICE_PROMPT``, ``LADDER_LLM_PRICE_COMPLETION``: dollars per million
               tokens; with them each candidate's cost carries an estimate in dollars
=============  =====================================================================

Every candidate records its tokens (prompt, completion), seconds and model in the journal. The key
lives in the client only: it is never a command-line argument, never written, and any text an
endpoint sends back is cleaned of it before it becomes a recorded reason. A reply without a solution
is a failed candidate with its reason; when no request of a round got an answer at all (a dead or
overloaded endpoint), the round is recorded and the run pauses (``--resume`` continues).
"""
from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Mapping

from ladder.diagnoser.optimize.brief import Brief
from ladder.diagnoser.optimize.proposers import Paused, Proposal, ProposerError, named_findings
from ladder.diagnoser.optimize.proposers.prompt import messages
from ladder.diagnoser.optimize.proposers.reply import NoSolution, solution_from
from ladder.diagnoser.optimize.proposers.rules import source_hash

DEFAULT_TIMEOUT_S = 600.0
DEFAULT_MAX_RETRIES = 3
KEYLESS = "unused"  # the SDK wants some key; local servers ignore it


@dataclass
class Endpoint:
    """Where requests go and what they cost; the key is kept out of every printed form."""

    model: str
    base_url: str | None
    api_key: str = field(repr=False)
    timeout_s: float = DEFAULT_TIMEOUT_S
    max_retries: int = DEFAULT_MAX_RETRIES
    price_prompt: float | None = None  # dollars per million tokens
    price_completion: float | None = None

    @classmethod
    def from_environment(cls, model: str | None = None, environ: Mapping[str, str] | None = None) -> "Endpoint":
        env = os.environ if environ is None else environ
        chosen = model or env.get("LADDER_LLM_MODEL") or env.get("OPENAI_MODEL")
        if not chosen:
            raise ProposerError("--proposer llm needs a model: pass --model or set LADDER_LLM_MODEL (or OPENAI_MODEL)")
        base_url = env.get("LADDER_LLM_BASE_URL") or env.get("OPENAI_BASE_URL") or None
        key = env.get("LADDER_LLM_API_KEY") or env.get("OPENAI_API_KEY")
        if not key and base_url is None:
            raise ProposerError("--proposer llm needs an API key: set LADDER_LLM_API_KEY or OPENAI_API_KEY "
                                "(or LADDER_LLM_BASE_URL for a local server that needs none)")
        return cls(model=chosen, base_url=base_url, api_key=key or KEYLESS,
                   timeout_s=_number(env, "LADDER_LLM_TIMEOUT", DEFAULT_TIMEOUT_S),
                   max_retries=int(_number(env, "LADDER_LLM_MAX_RETRIES", DEFAULT_MAX_RETRIES)),
                   price_prompt=_number(env, "LADDER_LLM_PRICE_PROMPT", None),
                   price_completion=_number(env, "LADDER_LLM_PRICE_COMPLETION", None))

    def dollars(self, prompt_tokens: int | None, completion_tokens: int | None) -> float | None:
        if self.price_prompt is None or self.price_completion is None or prompt_tokens is None:
            return None
        return round((prompt_tokens * self.price_prompt + (completion_tokens or 0) * self.price_completion) / 1e6, 6)


@dataclass
class Answer:
    """One request's outcome: the reply's text, or why the endpoint gave none."""

    text: str | None = None
    truncated: bool = False
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    seconds: float = 0.0
    unanswered: str | None = None  # the endpoint failed this request (after the SDK's retries)
    malformed: str | None = None  # it answered, but not with a chat completion


class LlmProposer:
    name = "llm"

    def __init__(self, model: str | None = None, environ: Mapping[str, str] | None = None, **settings: Any):
        from openai import OpenAI

        self.endpoint = Endpoint.from_environment(model, environ)
        self.client = OpenAI(base_url=self.endpoint.base_url, api_key=self.endpoint.api_key,
                             timeout=self.endpoint.timeout_s, max_retries=self.endpoint.max_retries)

    def propose(self, brief: Brief, count: int) -> list[Proposal]:
        request = messages(brief)
        with ThreadPoolExecutor(max_workers=max(1, count)) as pool:
            answers = list(pool.map(lambda _: self.ask(request), range(count)))
        tried = {entry["source_hash"]: past["round"] for past in brief.history for entry in past.get("proposals", [])
                 if entry.get("source_hash") and entry.get("judged", True)}
        proposals = [self._proposal(answer, brief, tried) for answer in answers]
        if answers and all(answer.unanswered for answer in answers):
            raise Paused(f"the model endpoint answered none of round {brief.round}'s requests "
                         f"({answers[0].unanswered}); --resume continues", proposals)
        return proposals

    def ask(self, request: list[dict[str, str]]) -> Answer:
        """One chat completion; any failure is the answer's, never an exception."""
        import openai

        started = time.monotonic()
        try:
            response = self.client.chat.completions.create(model=self.endpoint.model, messages=request)
        except openai.APIError as error:
            return Answer(seconds=_since(started), unanswered=self._redacted(self._describe(error)))
        except (ValueError, TypeError) as error:  # a body that is not JSON, or not shaped like a completion
            return Answer(seconds=_since(started), malformed=self._redacted(
                f"the reply is not a chat completion ({type(error).__name__}: {_one_line(error)})"))
        answer = Answer(seconds=_since(started))
        usage = getattr(response, "usage", None)
        if usage is not None:
            answer.prompt_tokens, answer.completion_tokens = usage.prompt_tokens, usage.completion_tokens
        choices = getattr(response, "choices", None)
        if not isinstance(choices, list) or not choices or getattr(choices[0], "message", None) is None:
            answer.malformed = "the reply is not a chat completion (no choices with a message)"
            return answer
        answer.text = choices[0].message.content
        answer.truncated = choices[0].finish_reason == "length"
        return answer

    def _proposal(self, answer: Answer, brief: Brief, tried: dict[str, int]) -> Proposal:
        cost = {"model": self.endpoint.model, "prompt_tokens": answer.prompt_tokens,
                "completion_tokens": answer.completion_tokens, "seconds": answer.seconds}
        dollars = self.endpoint.dollars(answer.prompt_tokens, answer.completion_tokens)
        if dollars is not None:
            cost["dollars"] = dollars
        if answer.unanswered:
            return Proposal(None, "model rewrite", failure=f"the endpoint gave no reply: {answer.unanswered}", cost=cost)
        if answer.malformed:
            return Proposal(None, "model rewrite", failure=answer.malformed, cost=cost)
        try:
            solution = solution_from(answer.text, answer.truncated)
        except NoSolution as why:
            return Proposal(None, "model rewrite", failure=str(why), cost=cost)
        digest, summary = source_hash(solution.source), self._redacted(solution.summary)
        if digest == source_hash(brief.best_source):
            return Proposal(None, summary, failure="the reply is the best solution unchanged", cost=cost)
        if digest in tried:
            return Proposal(None, summary, failure=f"the reply repeats a candidate of round {tried[digest]}", cost=cost)
        found = named_findings(brief, answer.text or "")
        return Proposal(solution.source, summary, patterns=sorted({f["pattern"] for f in found}), evidence=found,
                        cost=cost)

    def _describe(self, error: Exception) -> str:
        import openai

        if isinstance(error, openai.APITimeoutError):
            return f"timed out after {self.endpoint.timeout_s:g} s ({self.endpoint.max_retries} retries)"
        if isinstance(error, openai.APIConnectionError):
            cause = error.__cause__ or error
            return f"could not connect to {self.endpoint.base_url or 'the default endpoint'} ({_one_line(cause)})"
        if isinstance(error, openai.APIStatusError):
            retried = f" after {self.endpoint.max_retries} retries" if error.status_code in (408, 409, 429) or \
                error.status_code >= 500 else ""
            return f"HTTP {error.status_code}{retried}: {_one_line(error)}"
        return f"{type(error).__name__}: {_one_line(error)}"

    def _redacted(self, text: str) -> str:
        key = self.endpoint.api_key
        return text.replace(key, "[key]") if key and key != KEYLESS else text


def _number(env: Mapping[str, str], name: str, default: float | None) -> float | None:
    text = env.get(name)
    if not text:
        return default
    try:
        return float(text)
    except ValueError:
        raise ProposerError(f"{name}={text!r} is not a number") from None


def _one_line(error: BaseException) -> str:
    text = " ".join(str(error).split()) or type(error).__name__
    return text if len(text) <= 240 else text[:237] + "..."


def _since(started: float) -> float:
    return round(time.monotonic() - started, 3)
