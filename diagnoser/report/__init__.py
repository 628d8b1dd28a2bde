"""Reports of a diagnosis, rendered from its JSON alone (what `ladder diagnose --json` prints).

`render(report, "markdown" | "html" | "json")`: nothing is recomputed, so a report saved on the GPU
machine renders identically anywhere.
"""
from __future__ import annotations

import json

FORMATS = ("markdown", "html", "json")


def render(report: dict, fmt: str = "markdown") -> str:
    if fmt == "json":
        return json.dumps(report, indent=2, default=str) + "\n"
    if fmt == "markdown":
        from diagnoser.report import markdown
        return markdown.render(report)
    if fmt == "html":
        from diagnoser.report import html
        return html.render(report)
    raise ValueError(f"unknown report format {fmt!r}; choose one of {', '.join(FORMATS)}")
