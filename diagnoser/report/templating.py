"""The reports' jinja2 templates (package data under diagnoser/report/templates/).

One environment serves the diagnosis (`diagnose.*.j2`) and the optimization run
(`optimize.html.j2`). Templates named `*.html.j2` are autoescaped (kernel source, IR and file names are text, never
markup; an SVG plot is passed as `Markup`) and get the `path` filter for file paths in narrow
cells; Markdown ones are not, and get the `cell` filter for table cells instead.
"""
from __future__ import annotations

import functools
from typing import Any


@functools.cache
def environment():
    import jinja2

    env = jinja2.Environment(loader=jinja2.PackageLoader("ladder.diagnoser.report", "templates"),
                             autoescape=lambda name: bool(name and name.endswith(".html.j2")),
                             trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.filters["cell"] = markdown_cell
    env.filters["path"] = breakable_path
    return env


def render(name: str, **context: Any) -> str:
    return environment().get_template(name).render(**context)


def markup(html: str):
    """Trusted markup (an SVG we drew) that the HTML templates insert as it is."""
    import markupsafe

    return markupsafe.Markup(html)


def markdown_cell(value: Any) -> str:
    """Text that stays inside one Markdown table cell: pipes escaped, on one line."""
    return " ".join(str(value).split()).replace("|", "\\|")


def breakable_path(value: Any):
    """A path escaped for HTML that may wrap after its slashes and before its line range (`<wbr>`):
    in a narrow cell `lib/Dialect/TritonGPU/Transforms/Pipeliner/AssignLatencies.cpp:213-253` then
    breaks between folders instead of inside a name or a line number."""
    import markupsafe

    escaped = str(markupsafe.escape(str(value)))  # entities hold neither '/' nor ':'
    return markupsafe.Markup(escaped.replace("/", "/<wbr>").replace(":", "<wbr>:"))
