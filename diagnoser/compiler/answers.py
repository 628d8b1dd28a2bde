"""Which retrieved chunks answer a question, and what they say about this kernel's case.

A chunk answers when it belongs to one of the passes the question names, or its text, symbol or
path uses one of the question's terms (op and concept names): similarity of words alone is not
enough. The statement is built from the chunk itself (a pass's summary, a function's leading
comment or docstring), so it says what *the code* says, and always cites `path:start-end`.
"""
from __future__ import annotations

import re

from ladder.diagnoser.compiler.questions import Question

def matches(chunk: dict, question: Question) -> list[str]:
    """Why a chunk answers the question (empty: it does not)."""
    reasons = []
    if any(chunk.get("path", "").endswith(path) for path in question.paths):
        reasons.append("the file the catalog names")
    chunk_pass = (chunk.get("pass") or "").lower()
    for wanted in question.passes:
        if wanted.lower() in chunk_pass:
            reasons.append(f"pass {chunk['pass']}")
            break
    haystack = " ".join([chunk.get("text", ""), chunk.get("symbol", ""), chunk.get("path", "")]).lower()
    hits = [term for term in question.terms if term.lower() in haystack]
    if hits:
        reasons.append("mentions " + ", ".join(hits[:3]))
    return reasons


def keep(chunks: list[dict], question: Question) -> list[dict]:
    """The chunks that answer, best first (pass matches before term matches, then score).

    Catalog entries are left out: they are rung 1's knowledge, and citing them would make a finding
    its own evidence.
    """
    kept = []
    for chunk in chunks:
        if chunk.get("kind") == "catalog":
            continue
        reasons = matches(chunk, question)
        if reasons:
            named = any(r.startswith(("pass", "the file")) for r in reasons)
            kept.append({**chunk, "why": "; ".join(reasons), "_rank": (named, len(reasons), chunk.get("score", 0))})
    kept.sort(key=lambda c: c["_rank"], reverse=True)  # catalog file or pass first, then more reasons, then score
    return [{k: v for k, v in c.items() if k != "_rank"} for c in kept]


_SUMMARY = re.compile(r'let\s+summary\s*=\s*"([^"]+)"')
_DESCRIPTION = re.compile(r"let\s+description\s*=\s*\[\{(.*?)\}\]", re.DOTALL)
_DOCSTRING = re.compile(r'(?:"""|\'\'\')(.+?)(?:"""|\'\'\')', re.DOTALL)
_COMMENT = {"python": re.compile(r"^\s*#\s?(.*\S)\s*$"), "markdown": None}
_CPP_COMMENT = re.compile(r"^\s*//+\s?(.*\S)\s*$")
_NOT_PROSE = ("RUN:", "CHECK", "===", "---", "Copyright", "SPDX", "clang-format", "NOLINT")


def _passages(chunk: dict) -> list[str]:
    """The prose a chunk holds: pass summary and description, docstrings, comment blocks, paragraphs."""
    text, language = chunk.get("text", ""), chunk.get("language", "")
    found = [m.group(1) for m in _DESCRIPTION.finditer(text)] + [m.group(1) for m in _SUMMARY.finditer(text)]
    if language == "python":
        found += [m.group(1) for m in _DOCSTRING.finditer(text)]
    if language == "markdown":
        prose = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith(("#", "```")))
        found += [p for p in re.split(r"\n\s*\n", prose) if p.strip()]
    comment = _COMMENT.get(language, _CPP_COMMENT)
    if comment is not None:
        block: list[str] = []
        for line in text.splitlines() + [""]:
            match = comment.match(line)
            if match and not match.group(1).startswith(_NOT_PROSE):
                block.append(match.group(1))
            elif block:
                found.append(" ".join(block))
                block = []
    return [" ".join(p.split()) for p in found if p.strip()]


def gist(chunk: dict, question: Question | None = None) -> str:
    """What a chunk says that bears on the question: the sentence of its prose (a pass description,
    a comment block, a docstring) naming most of the question's terms, else its first line of code."""
    sentences = [s for p in _passages(chunk) for s in re.split(r"(?<=[.!?])\s+", p) if s]
    terms = [t.lower() for t in (question.terms if question else ())]
    if sentences:
        best = max(sentences, key=lambda s: sum(t in s.lower() for t in terms))
        if not terms or chunk.get("kind") in ("pass", "op", "doc") or any(t in best.lower() for t in terms):
            return best[:320]
        return ""  # code whose comments do not speak to the question: cite it, quote nothing
    if terms:
        return ""  # no prose at all: the citation speaks for itself
    for line in chunk.get("text", "").splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith(("#include", "import ", "from ", "namespace", "//", "#")):
            return f"`{stripped[:160]}`"
    return ""


def statement(question: Question, chunk: dict) -> str:
    """One or two sentences: the kernel's case, then what the cited code says about it."""
    label = f"{chunk['path']}:{chunk['start']}-{chunk['end']}"
    owner = ", ".join(x for x in (chunk.get("symbol"), f"pass {chunk['pass']}" if chunk.get("pass") else "") if x)
    said = gist(chunk, question)
    if said[:1].isupper() and said[1:2].islower():
        said = said[0].lower() + said[1:]
    first = question.describe or "this kernel"
    if first[:1].islower() and "." not in first.split(" ", 1)[0]:  # not a catalog id like nv.scalar-access
        first = first[0].upper() + first[1:]
    role = {"pass": "defines the pass behind this", "op": "defines the op behind this",
            "doc": "documents this"}.get(chunk.get("kind", "code"), "is the compiler code behind this")
    second = f"{label}{' (' + owner + ')' if owner else ''} {role}"
    return f"{first}. {second}{': ' + said.rstrip('.') if said else ''}."
