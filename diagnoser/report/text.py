"""Formatting shared by the Markdown and HTML reports: numbers, locations and evidence as text."""
from __future__ import annotations

import os

from ladder.diagnoser.evidence import fact_of


def seconds(value: float | None) -> str:
    if value is None:
        return "-"
    if value >= 1:
        return f"{value:.2f} s"
    if value >= 1e-3:
        return f"{value * 1e3:.3f} ms"
    return f"{value * 1e6:.1f} us"


def duration(value: float) -> str:
    """How long a rung took: tenths of a second are enough."""
    return f"{value:.1f} s"


def percent(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def number(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def location(file: str | None, line: int | None) -> str:
    if not file:
        return ""
    name = os.path.relpath(file) if os.path.isabs(file) and not os.path.relpath(file).startswith("..") else file
    return f"{name}:{line}" if line else name


def params(values: dict | None) -> str:
    return ", ".join(f"{k}={v}" for k, v in (values or {}).items())


def evidence(item: dict) -> str:
    """One evidence item as a line: what it is and where it points."""
    kind = item.get("type")
    if kind == "source":
        return f"source {location(item.get('file'), item.get('line'))}: `{one_line(item.get('text', ''))}`"
    if kind == "fact":
        fact = fact_of(item)
        where = location(fact.get("file"), fact.get("line"))
        excerpt = f" `{one_line(fact['excerpt'])}`" if fact.get("excerpt") else ""
        return (f"IR fact {fact.get('kind')} ({fact.get('stage') or '?'}, {fact.get('kernel')}"
                f"{', ' + where if where else ''}): {compact(fact.get('value'))}{excerpt}")
    if kind == "metric":
        unit = f" {item['unit']}" if item.get("unit") else ""
        return f"metric {item.get('name')} = {item.get('value')}{unit}"
    if kind == "chunk":
        return (f"compiler source {item.get('path')}:{item.get('start')}-{item.get('end')}"
                f" ({item.get('pass') or 'no pass'}, score {item.get('score', 0):.2f})")
    return compact(item)


def one_line(text: str, limit: int = 200) -> str:
    """Multi-line IR excerpts on one line (` | ` between lines), cut at `limit` characters."""
    joined = " | ".join(line.strip() for line in str(text).splitlines() if line.strip())
    return joined if len(joined) <= limit else joined[: limit - 3] + "..."


def compact(value) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {compact(v)}" for k, v in value.items()) + "}"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def occupancy(case: dict) -> str:
    occ = case.get("occupancy") or {}
    theoretical = occ.get("theoretical")
    achieved = occ.get("achieved")
    return f"{percent(theoretical)} / {percent(achieved)}"


def citation_label(citation: dict) -> str:
    return f"{citation['path']}:{citation['start']}-{citation['end']}"


def shorten(text: str, limit: int) -> str:
    """`text` on one line, cut to `limit` characters with an ellipsis (the full text goes in a tooltip)."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "\u2026"


def fact_value(value) -> str:
    """A fact's value as `key: value` pairs, without the braces of a dict."""
    text = compact(value)
    return text[1:-1] if isinstance(value, dict) and text.startswith("{") else text


def kernel_parts(name: str | None) -> tuple[str, str]:
    """`softmax_kernel[n_cols:i32%16,...]` -> ("softmax_kernel", "[n_cols:i32%16,...]"): the
    function and the specialization the JIT compiled it for (divisibility by 16 marked `%16`)."""
    base, bracket, rest = str(name or "").partition("[")
    return base, bracket + rest
