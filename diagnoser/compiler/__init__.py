"""Rung 4: compiler-source escalation.

The facts and findings the lower rungs left unexplained become questions (`questions`); each is
sent to the knowledge index (`ladder.indexer.search`), the chunks that really concern the fact are kept
(`answers.keep`: the right pass, the right op names), and each kept chunk becomes a citation with
a one- or two-sentence statement of what the code says about this kernel's case. With an LLM
endpoint configured (`llm`), a short summary is added; without one, the citations stand alone.
"""
from __future__ import annotations

from typing import Callable

from ladder.diagnoser.compiler import answers
from ladder.diagnoser.compiler.llm import Summariser
from ladder.diagnoser.compiler.questions import Question, questions

Search = Callable[..., list[dict]]
CHUNKS_PER_QUESTION = 12   # asked of the index: the filter drops most
CITED_PER_QUESTION = 2     # kept per question in the report
EXCERPT_LINES = 14
BACKEND_OF_TARGET = {"sm90": "nvidia", "ascend": "ascend"}
# Backends whose answers must be their own code and docs: Triton-Ascend is a fork, so the shared
# code an index holds (upstream triton's, as often as not) is not what its compiler ran.
OWN_CODE_ONLY = frozenset({"ascend"})


NO_COMPILER_SOURCE = ("the index holds no compiler source (only Python, docs and the catalog), so no code "
                      "explains these facts; add a Triton checkout: ladder index build --source triton=PATH")


def escalate(facts: list[dict], findings: list[dict], search: Search, target: str = "sm90",
             catalog: dict[str, list[dict]] | None = None, limit: int = 6,
             summariser: Summariser | None = None, compiler_source: bool = True) -> dict:
    """{"citations", "findings", "warnings", "summary"} for the unexplained facts and findings.

    `search` answers only above the index's relevance threshold, so a question it has nothing
    relevant for is reported as such ("no compiler code found"), never answered with noise. An
    index without compiler source (`compiler_source` False) is said to be one instead of citing
    Python that does not explain the finding."""
    summariser = summariser or Summariser()
    asked = questions(facts, findings, catalog, target, limit)
    if not compiler_source:
        return {"citations": [], "findings": [], "warnings": [NO_COMPILER_SOURCE],
                "summary": f"{len(asked)} questions, no citations: {NO_COMPILER_SOURCE}",
                "questions": [{"query": q.query, "about": q.about} for q in asked]}
    citations, new_findings, unanswered = [], [], []
    cited_by_place: dict[tuple, dict] = {}
    backend, own_code_seen = backend_of(target), False
    for question in asked:
        hits = search(question.query, k=CHUNKS_PER_QUESTION, where={"backend": backend})
        own_code_seen = own_code_seen or any(hit.get("backend") == backend for hit in hits)
        kept = [chunk for chunk in answers.keep(hits, question)
                if backend not in OWN_CODE_ONLY or chunk.get("backend") == backend]
        if not kept:
            unanswered.append(question.describe)
            continue
        # Prefer chunks no earlier question cited; a chunk cited already is referred to, not repeated.
        fresh = [c for c in kept if _place(c) not in cited_by_place][:CITED_PER_QUESTION]
        summary = summariser.summarise(question.describe, fresh or kept[:1])
        cited = []
        for chunk in fresh:
            citation = _citation(len(citations) + 1, question, chunk, summary if not cited else None)
            citations.append(citation)
            cited_by_place[_place(chunk)] = citation
            cited.append(citation)
        if not cited:
            cited = [cited_by_place[_place(kept[0])]]
        new_findings.append(_finding(question, cited))
    warnings = [summariser.warning] if summariser.warning else []
    if asked and backend in OWN_CODE_ONLY and not own_code_seen:
        warnings.append(f"the index holds no {backend} backend code, so nothing could be cited: add the "
                        f"compiler's source (ladder index build --source NAME=PATH)")
    summary = f"{len(asked)} questions, {len(citations)} citations"
    if unanswered:
        summary += f"; no compiler code found for: {'; '.join(unanswered)}"
    return {"citations": citations, "findings": new_findings, "warnings": warnings, "summary": summary,
            "questions": [{"query": q.query, "about": q.about} for q in asked]}


def backend_of(target: str) -> str:
    """The index's backend for a compile target (`sm90` -> nvidia, `ascend:Ascend910B3` -> ascend)."""
    family = target.split(":", 1)[0]
    return BACKEND_OF_TARGET.get(family, family)


def _place(chunk: dict) -> tuple:
    return chunk.get("tree"), chunk["path"], chunk["start"], chunk["end"]


def _citation(number: int, question: Question, chunk: dict, summary: str | None) -> dict:
    lines = chunk.get("text", "").splitlines()
    excerpt = "\n".join(lines[:EXCERPT_LINES]) + ("\n..." if len(lines) > EXCERPT_LINES else "")
    citation = {
        "id": f"C{number}", "path": chunk["path"], "start": chunk["start"], "end": chunk["end"],
        "pass": chunk.get("pass"), "score": chunk.get("score", 0.0), "symbol": chunk.get("symbol", ""),
        "tree": chunk.get("tree", ""), "why": chunk["why"], "statement": answers.statement(question, chunk),
        "about": question.about, "query": question.query, "excerpt": excerpt,
    }
    if summary:
        citation["summary"] = summary
    return citation


def _finding(question: Question, cited: list[dict]) -> dict:
    chunks = [{"type": "chunk", "path": c["path"], "start": c["start"], "end": c["end"], "pass": c["pass"],
               "score": c["score"]} for c in cited]
    return {
        "pattern": question.pattern, "rung": 4, "title": f"compiler source behind: {question.describe}",
        "file": question.about.get("file"), "line": question.about.get("line"),
        "kernel": question.about.get("kernel"), "confidence": 0.5,
        "evidence": question.evidence + chunks, "fix": None,
    }
