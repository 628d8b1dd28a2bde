"""The suite's terminal table: one line per operator (and per case), the summary, what went wrong."""
from __future__ import annotations

from typing import Any


def fmt(value: float | None, template: str) -> str:
    return "-" if value is None else template.format(value)


def render(rows: list[dict[str, Any]], summary: dict[str, Any], meta: dict[str, Any],
           per_case: bool = False) -> str:
    """The terminal table: one line per operator (and per case), then the summary and what went wrong."""
    header = ["operator", "cases", "initial ms", "eager ms", "eager/initial", "% roof", "eager % roof"]
    table = [header]
    for row in rows:
        total = len(row["cases"]) or "-"
        table.append([
            row["operator"],
            f"{row['cases_correct']}/{total}",
            fmt(row["initial_ms"], "{:.4g}"),
            fmt(row["eager_ms"], "{:.4g}"),
            fmt(row["speedup_vs_eager"], "{:.2f}x"),
            fmt(row["roofline_pct"], "{:.1f}"),
            fmt(row["eager_roofline_pct"], "{:.1f}"),
        ])
        if per_case:
            table += [[f"  {case['label']}", "ok" if case["correct"] else "NO",
                       fmt(case["initial_ms"], "{:.4g}"), fmt(case["eager_ms"], "{:.4g}"),
                       fmt(case["speedup_vs_eager"], "{:.2f}x"), fmt(case["roofline_pct"], "{:.1f}"),
                       fmt(case["eager_roofline_pct"], "{:.1f}")] for case in row["cases"]]
    widths = [max(len(line[i]) for line in table) for i in range(len(header))]
    lines = [f"ladder suite on {meta.get('backend')} ({meta.get('device') or 'unknown device'}); "
             "ms and ratios are geometric means over each operator's cases"]
    for position, line in enumerate(table):
        cells = [cell.ljust(width) if i == 0 else cell.rjust(width)
                 for i, (cell, width) in enumerate(zip(line, widths))]
        lines.append("  ".join(cells))
        if position == 0:
            lines.append("  ".join("-" * width for width in widths))
    lines.append("")
    scopes = [("all", summary)] + [(f"level {level}", part) for level, part in summary["by_level"].items()]
    for scope, part in scopes:
        line = f"{scope:>8}: {part['correct']}/{part['operators']} operators correct on every case"
        if meta.get("timed"):
            line += (f"; eager/initial geomean {fmt(part['speedup_vs_eager_geomean'], '{:.3f}x')}, "
                     f"median {fmt(part['speedup_vs_eager_median'], '{:.3f}x')}; % of roofline geomean "
                     f"{fmt(part['roofline_pct_geomean'], '{:.1f}')}, median "
                     f"{fmt(part['roofline_pct_median'], '{:.1f}')} (eager "
                     f"{fmt(part['eager_roofline_pct_geomean'], '{:.1f}')}) over {part['counted']} timed")
        lines.append(line)
    for row in rows:
        for problem in problems(row):
            lines.append(f"{row['operator']}: {problem}")
    compiled = meta.get("precompile")
    if compiled:
        entries = compiled["solutions"].values()
        lines.append(f"precompiled {sum(entry['kernels'] for entry in entries)} kernels for {compiled['target']} "
                     f"in {compiled['elapsed_s']} s ({compiled['jobs']} processes)")
        lines += [f"precompile: {error}" for entry in entries for error in entry["errors"]]
    if meta.get("stopped"):
        lines.append(f"stopped: {meta['stopped']}")
    if meta.get("elapsed_s") is not None:
        lines.append(f"suite time: {meta['elapsed_s']} s")
    if not meta.get("timed"):
        lines.append("not timed: this backend checks correctness only")
    return "\n".join(lines)


def problems(row: dict[str, Any]) -> list[str]:
    if row.get("error"):
        return [row["error"]]
    problems = []
    if row.get("rejected"):
        problems.append(f"rejected ({row['rejected']['stage']}): {row['rejected']['reason']}")
    elif not row["ok"]:
        problems += [f"case {case['label']}: {case.get('reason')}" for case in row["cases"] if not case["correct"]]
    if row.get("device_error"):
        problems.append(f"device error: {row['device_error']}")
    return problems


def one_line(row: dict[str, Any]) -> str:
    if not row["ok"]:
        return f"{row['operator']}: FAILED ({(problems(row) or ['not correct'])[0]})"
    if row["initial_ms"] is None:
        return f"{row['operator']}: correct on {row['cases_correct']} cases, not timed ({row['elapsed_s']} s)"
    return (f"{row['operator']}: ok, initial {fmt(row['initial_ms'], '{:.4g}')} ms, eager "
            f"{fmt(row['eager_ms'], '{:.4g}')} ms, eager/initial {fmt(row['speedup_vs_eager'], '{:.2f}x')}, "
            f"{fmt(row['roofline_pct'], '{:.1f}')}% of roofline ({row['elapsed_s']} s)")
