"""A model's reply read as a candidate: the solution file it carries and the one line that says what changed.

The solution is the last complete fenced Python block that defines ``class ModelNew`` (a model that
shows the old version first, or a helper, still answers with the whole file last). A reasoning
model's ``<think>`` section is not part of the answer. What the code does is not judged here: a
block that does not compile, is wrong or cheats is the gate's to reject, with the judge's reason.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

FENCED = re.compile(r"^[ \t]*```[ \t]*(?P<tag>[\w+-]*)[^\n]*\n(?P<body>.*?)^[ \t]*```[ \t]*$", re.MULTILINE | re.DOTALL)
PYTHON_TAGS = ("", "python", "py", "python3")
DEFINES_MODEL = re.compile(r"^class ModelNew\b", re.MULTILINE)
THINKING = re.compile(r"<think>.*?(</think>|\Z)", re.DOTALL)
SUMMARY_CHARS = 200


class NoSolution(ValueError):
    """A reply with no solution in it (the message is the failed candidate's one-line reason)."""


@dataclass
class Solution:
    source: str
    summary: str


def solution_from(reply: str | None, truncated: bool = False) -> Solution:
    """The solution file in a reply, or ``NoSolution`` saying why there is none."""
    text = THINKING.sub("", reply or "").strip()
    if not text:
        raise NoSolution("the reply was empty")
    blocks = [m for m in FENCED.finditer(text) if m.group("tag").lower() in PYTHON_TAGS
              and DEFINES_MODEL.search(m.group("body"))]
    if not blocks:
        cut = " (the reply was cut at its token limit)" if truncated else ""
        raise NoSolution(f"the reply has no complete python code block that defines class ModelNew{cut}")
    last = blocks[-1]
    return Solution(source=last.group("body").rstrip() + "\n", summary=summary_of(text[:last.start()]))


def summary_of(prose: str) -> str:
    """The first line of prose before the solution: what the model says it changed."""
    outside = FENCED.sub("", prose)
    for line in outside.splitlines():
        line = line.strip().lstrip("#*->").strip().strip("*").strip()
        if line:
            return line if len(line) <= SUMMARY_CHARS else line[:SUMMARY_CHARS - 3] + "..."
    return "model rewrite"
