"""Reports of an optimization run, rendered from its journal alone: JSON, Markdown, one HTML page.

``build(journal)`` condenses the journal into one document (nothing is measured again); Markdown
and HTML render that document. The HTML page is self-contained (jinja2 template, matplotlib plots
inlined as SVG): the speedup of every round with the best so far, each case's roofline position
before and after, each case's time against the initial version, eager PyTorch and torch.compile,
and every accepted change with the evidence that led to it.
"""
from __future__ import annotations

from typing import Any

from ladder.diagnoser.optimize.journal import Journal, own_seconds


def build(journal: Journal) -> dict[str, Any]:
    header, rounds = journal.header(), journal.rounds()
    initial = {c["case"]: c for c in header["best"]["cases"]}
    best = journal.best()
    compiled = header.get("torch_compile_ms") or {}
    cases = []
    for case in best["cases"]:
        first = initial.get(case["case"], {})
        cases.append({"case": case["case"], "label": case.get("label"), "initial_ms": first.get("time_ms"),
                      "best_ms": case.get("time_ms"), "eager_ms": first.get("eager_ms") or case.get("eager_ms"),
                      "torch_compile_ms": compiled.get(str(case["case"])),
                      "roofline_before": first.get("roofline_pct"), "roofline_after": case.get("roofline_pct"),
                      "speedup_vs_initial": case.get("speedup_vs_initial")})
    trajectory, candidates, changes = [], [], []
    for record in rounds:
        trajectory.append({"round": record["round"], "best_vs_initial": record["best"]["geomean_vs_initial"],
                           "model_use": model_use(record.get("proposals", []))})
        for proposal in record.get("proposals", []):
            outcome = proposal.get("outcome") or {}
            candidates.append({"round": record["round"], "proposer": record.get("proposer"), "id": proposal["id"],
                               "summary": proposal["summary"],
                               "vs_initial": outcome.get("geomean_vs_initial"), "accepted": outcome.get("accepted"),
                               "reason": outcome.get("reason")})
            if outcome.get("accepted") and proposal["id"] == record.get("accepted"):
                changes.append({"round": record["round"], "proposer": record.get("proposer"), "summary": proposal["summary"],
                                "patterns": proposal.get("patterns", []), "evidence": proposal.get("evidence", []),
                                "speedup_vs_best": outcome.get("geomean_vs_best"), "diff": proposal.get("diff")})
    return {"run": str(journal.folder), "problem": header["problem"], "solution": header["solution"],
            "proposer": header["proposer"], "continued_from": header.get("continued_from"),
            "device": header.get("device"), "devices": cards(header, rounds), "rounds": len(rounds),
            "best_round": best["round"], "geomean_vs_initial": best["geomean_vs_initial"],
            "geomean_vs_eager": best.get("geomean_vs_eager"),
            "geomean_vs_compile": _geomean_vs_compile(cases), "cases": cases, "trajectory": trajectory,
            "candidates": candidates, "changes": changes,
            "model_use": model_use([p for r in rounds for p in r.get("proposals", [])]),
            "seconds": round(sum(own_seconds(r) for r in rounds), 1)}


def cards(header: dict[str, Any], rounds: list[dict[str, Any]]) -> list[str]:
    """Every card the run was timed on: a run resumed on another machine has rounds on two. Each
    ratio is still timed on one card (a gate times the initial version beside its candidates), but a
    reader comparing runs must know which card gave which."""
    return sorted({record["device"] for record in [header, *rounds] if record.get("device")})


def timed_on(document: dict[str, Any]) -> str:
    """The cards the run's rounds were timed on, for its opening line: naming only the card that
    opened it had a run resumed on an H100 read as the H200's. A run that recorded no card (a gate
    with no device) still renders, as the line always did."""
    return " and ".join(document.get("devices") or [str(document.get("device"))])


def model_use(proposals: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Tokens and dollars the proposals' requests cost (None for proposers that use no model)."""
    costs = [p.get("cost") or {} for p in proposals]
    if not any("prompt_tokens" in cost for cost in costs):
        return None
    dollars = [cost["dollars"] for cost in costs if cost.get("dollars") is not None]
    return {"requests": sum("prompt_tokens" in cost for cost in costs),
            "prompt_tokens": sum(cost.get("prompt_tokens") or 0 for cost in costs),
            "completion_tokens": sum(cost.get("completion_tokens") or 0 for cost in costs),
            "dollars": round(sum(dollars), 6) if dollars else None}


def _geomean_vs_compile(cases: list[dict[str, Any]]) -> float | None:
    from ladder.diagnoser.optimize.gate import geomean

    return geomean([c["torch_compile_ms"] / c["best_ms"] for c in cases if c.get("torch_compile_ms") and c.get("best_ms")])


# ---------------------------------------------------------------------------------- Markdown


def markdown(document: dict[str, Any]) -> str:
    lines = [f"# ladder optimize: {document['problem']}", "",
             (f"{document['rounds']} rounds with the {document['proposer']} proposer on {timed_on(document)}; best from "
             f"round {document['best_round']}: **{document['geomean_vs_initial']:.3f}x** over the initial version "
             f"(geomean over cases){_vs('eager', document['geomean_vs_eager'])}"
             f"{_vs('torch.compile', document['geomean_vs_compile'])}."), "", *_continued_lines(document),
             *_model_use_lines(document),
             "| case | initial ms | best ms | eager ms | torch.compile ms | x initial | % roofline before -> after |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for case in document["cases"]:
        lines.append(f"| {case['label']} | {formatted(case['initial_ms'])} | {formatted(case['best_ms'])} | "
                     f"{formatted(case['eager_ms'])} | {formatted(case['torch_compile_ms'])} | "
                     f"{formatted(case['speedup_vs_initial'], '{:.2f}x')} | "
                     f"{formatted(case['roofline_before'], '{:.1f}')} -> {formatted(case['roofline_after'], '{:.1f}')} |")
    lines += ["", "## Accepted changes", ""]
    if not document["changes"]:
        lines.append("None: no candidate passed the gate.")
    for change in document["changes"]:
        lines.append(f"- round {change['round']} ({change['proposer']}): {change['summary']} "
                     f"({formatted(change['speedup_vs_best'], '{:.3f}x')} over the best before it)")
        for finding in change["evidence"]:
            where = f" line {finding['line']}" if finding.get("line") else ""
            lines.append(f"  - evidence: {finding.get('pattern')}{where}: {finding.get('title')}")
    lines += ["", "## Every candidate", "", "| round | candidate | x initial | outcome |", "| --- | --- | --- | --- |"]
    for candidate in document["candidates"]:
        lines.append(f"| {candidate['round']} | {candidate['summary']} | {formatted(candidate['vs_initial'], '{:.3f}x')} | "
                     f"{'accepted' if candidate['accepted'] else 'not accepted'}: {candidate['reason']} |")
    return "\n".join(lines) + "\n"


def _continued_lines(document: dict[str, Any]) -> list[str]:
    origin = document.get("continued_from")
    if not origin:
        return []
    return [(f"Continued from {origin['run']}: rounds 1-{origin['after_round']} are the {origin['proposer']} "
             f"proposer's (it stopped: {origin['stopped']}), copied with its baseline and best."), ""]


def _model_use_lines(document: dict[str, Any]) -> list[str]:
    use = document.get("model_use")
    if not use:
        return []
    spent = f", about ${use['dollars']:.4f}" if use.get("dollars") is not None else ""
    return [(f"Model use: {use['requests']} requests, {use['prompt_tokens']} prompt and {use['completion_tokens']} "
            f"completion tokens{spent}."), ""]


def _vs(what: str, value: float | None) -> str:
    return f", {value:.3f}x over {what}" if value else ""


def formatted(value: Any, template: str = "{:.4g}") -> str:
    """A figure for a table cell: "-" where there is none."""
    return "-" if value is None else template.format(value)


# ---------------------------------------------------------------------------------- HTML

def html(document: dict[str, Any]) -> str:
    """The run as one page (the shared report templates' `optimize.html.j2`, plots inlined)."""
    from ladder.diagnoser.report import templating

    plots = [templating.markup(svg) for svg in (trajectory_plot(document), roofline_plot(document),
                                                times_plot(document)) if svg]
    return templating.render("optimize.html.j2", d=document, plots=plots, n=formatted, timed_on=timed_on(document))


def _figure() -> tuple[Any, Any]:
    from ladder.diagnoser.report.plots import new_figure

    return new_figure((5.4, 3.4))


def _svg(figure: Any, name: str) -> str:
    from ladder.diagnoser.report.plots import to_svg

    figure.tight_layout()
    return to_svg(figure, name)


def _legend_below(axes: Any, columns: int, gap: float = 0.1) -> None:
    """The legend under the axes, in one row: inside them it covered the first bars or points."""
    axes.legend(loc="upper center", bbox_to_anchor=(0.5, -gap), fontsize=8, frameon=False, ncol=columns)


def _case_ticks(axes: Any, cases: list[dict[str, Any]]) -> None:
    """`case N` under each group; the sizes are in the cases table (five long size labels,
    rotated, crowded each other under the bars)."""
    axes.set_xticks(list(range(len(cases))), [f"case {c['case']}" for c in cases], fontsize=8)


def _height(value: float | None) -> float:
    """A bar's height; NaN (no bar) when the value was not recorded, never a bar of 0."""
    return float("nan") if value is None else value


def trajectory_plot(document: dict[str, Any]) -> str | None:
    if not document["trajectory"]:
        return None
    figure, axes = _figure()
    rounds = [0] + [point["round"] for point in document["trajectory"]]
    best = [1.0] + [point["best_vs_initial"] for point in document["trajectory"]]
    axes.step(rounds, best, where="post", label="best so far", color="#1f77b4")
    tried = [(c["round"], c["vs_initial"]) for c in document["candidates"] if c["vs_initial"]]
    if tried:
        axes.scatter(*zip(*tried), s=14, color="#999999", label="candidates", zorder=3)
    axes.set_xlabel("round")
    axes.set_ylabel("speedup over the initial version")
    axes.set_title("Speedup per round")
    _legend_below(axes, 2, gap=0.18)
    return _svg(figure, "trajectory")


def roofline_plot(document: dict[str, Any]) -> str | None:
    cases = [c for c in document["cases"] if c["roofline_before"] is not None or c["roofline_after"] is not None]
    if not cases:
        return None
    figure, axes = _figure()
    positions = range(len(cases))
    axes.bar([p - 0.2 for p in positions], [_height(c["roofline_before"]) for c in cases], 0.4, label="initial")
    axes.bar([p + 0.2 for p in positions], [_height(c["roofline_after"]) for c in cases], 0.4, label="best")
    _case_ticks(axes, cases)
    axes.set_ylabel("% of the roofline floor")
    axes.set_title("Roofline position per case")
    _legend_below(axes, 2)
    return _svg(figure, "roofline")


def times_plot(document: dict[str, Any]) -> str | None:
    from ladder.diagnoser.report.plots import seconds_axis

    series = [("initial", "initial_ms"), ("best", "best_ms"), ("eager", "eager_ms"), ("torch.compile", "torch_compile_ms")]
    cases = document["cases"]
    if not any(c["best_ms"] for c in cases):
        return None
    figure, axes = _figure()
    width = 0.8 / len(series)
    for index, (label, key) in enumerate(series):
        axes.bar([p - 0.4 + width * (index + 0.5) for p in range(len(cases))], [_height(c[key]) for c in cases], width,
                 label=label)
    axes.set_yscale("log")
    axes.yaxis.set_major_formatter(seconds_axis(1e-3))
    times = [c[key] for c in cases for _, key in series if c[key]]
    if max(times) / min(times) < 10:  # within one decade: no major tick may fall inside, so label 2x and 5x
        from matplotlib.ticker import LogLocator

        axes.yaxis.set_minor_locator(LogLocator(subs=(2.0, 5.0)))
        axes.yaxis.set_minor_formatter(seconds_axis(1e-3))
    _case_ticks(axes, cases)
    axes.set_ylabel("median time (log scale)")
    axes.set_title("Time per case")
    _legend_below(axes, len(series))
    return _svg(figure, "times")
