"""Proposers: evidence and history in, candidate solution sources out. One protocol for all of them.

``rules`` (the catalog's mechanical fixes, no model), ``llm`` (any OpenAI-compatible endpoint) and
``agent`` (an external coding agent through ``ladder optimize submit`` or MCP). The loop owns the
gate and the journal: a proposer only ever proposes.
"""
from __future__ import annotations

import importlib
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from ladder.diagnoser.optimize.brief import Brief


@dataclass
class Proposal:
    """One candidate: its full source, what it changes and why (the evidence it came from).

    ``failure`` instead of a source is a proposal that could not be made (a model's reply with no
    code, an endpoint that did not answer): recorded as a failed candidate with its one-line reason.
    """

    source: str | None
    summary: str
    patterns: list[str] = field(default_factory=list)
    evidence: list[dict[str, Any]] = field(default_factory=list)
    failure: str | None = None
    cost: dict[str, Any] = field(default_factory=dict)  # tokens, dollars, seconds (model proposers)

    def to_dict(self) -> dict[str, Any]:
        return {key: value for key, value in asdict(self).items() if key != "source"}


class Paused(Exception):
    """A proposer that cannot go on in this call: an agent that has yet to send its candidate, an
    endpoint that answered none of the round's requests.

    The loop records ``proposals`` (failed ones) as the round when there are any, stops with
    ``reason``, and a resume continues; with none the round is not recorded and is proposed again.
    """

    def __init__(self, reason: str, proposals: list[Proposal] | None = None):
        super().__init__(reason)
        self.reason, self.proposals = reason, list(proposals or [])


class ProposerError(Exception):
    """A proposer that cannot be set up as configured (one line, for the user): no model named, no key."""


class Proposer(Protocol):
    name: str

    def propose(self, brief: Brief, count: int) -> list[Proposal]:
        """Up to ``count`` candidates for this round (an empty list: nothing new to try)."""


def named_findings(brief: Brief, text: str) -> list[dict[str, Any]]:
    """The brief's findings whose catalog id ``text`` names: what a model or an agent says it addressed."""
    return [finding for finding in brief.findings if finding.get("pattern") and finding["pattern"] in text]


# name -> "module:attribute" of a class taking the run's settings.
PROPOSERS = {
    "rules": "ladder.diagnoser.optimize.proposers.rules:RulesProposer",
    "llm": "ladder.diagnoser.optimize.proposers.llm:LlmProposer",
    "agent": "ladder.diagnoser.optimize.proposers.agent:AgentProposer",
}


def load_proposer(name: str, **settings: Any) -> Proposer:
    if name not in PROPOSERS:
        raise ValueError(f"unknown proposer {name!r} (choose from {', '.join(PROPOSERS)})")
    module_name, _, attribute = PROPOSERS[name].partition(":")
    return getattr(importlib.import_module(module_name), attribute)(**settings)
