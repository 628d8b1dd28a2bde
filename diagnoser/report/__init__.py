"""Reports of a diagnosis, rendered from its JSON alone (what `ladder diagnose --json` prints).

`render(report, "markdown" | "html" | "json")`: nothing is measured or compiled again, so a report
saved on the GPU machine renders the same anywhere. Both text formats lay out one document
(`document.build`) with jinja2 templates (`templates/`); the HTML page inlines its CSS and its
matplotlib plots as SVG, so it is one file with no scripts and no fetches.
"""
from __future__ import annotations

import json

FORMATS = ("markdown", "html", "json")
TEMPLATES = {"markdown": "diagnose.md.j2", "html": "diagnose.html.j2"}


def render(report: dict, fmt: str = "markdown") -> str:
    if fmt == "json":
        return json.dumps(report, indent=2, default=str) + "\n"
    if fmt not in TEMPLATES:
        raise ValueError(f"unknown report format {fmt!r}; choose one of {', '.join(FORMATS)}")
    from ladder.diagnoser.report import document, templating

    built = document.build(report, with_plots=fmt == "html")
    if fmt == "html":
        built["profile"]["plots"] = [templating.markup(svg) for svg in built["profile"].get("plots", [])]
    return templating.render(TEMPLATES[fmt], d=built)
