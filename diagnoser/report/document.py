"""One diagnosis as the document both templates lay out: every number formatted, every piece of
evidence linked, nothing recomputed from the kernel.

`build(report, plots=True)` reads the JSON of `ladder diagnose --json` alone. Its parts, in
reading order: the subject and verdict, the rungs (each with why it ran or not), the profile (or
why there is none), the findings as cards with their evidence chains, the compiler citations, the
IR facts grouped per kernel specialization, and the warnings.
"""
from __future__ import annotations

from ladder.diagnoser.report import chains, plots, text
from ladder.diagnoser.report.cards import cards

VALUE_LIMIT = 140
NOT_RECORDED = "this report has no record of rung 2"


def build(report: dict, with_plots: bool = True) -> dict:
    subject = report["subject"]
    links = chains.Links.of(report)
    return {
        "solution": subject["solution"], "context": _context(subject), "reached": report.get("reached", 0),
        "verdict": (report.get("gap") or {}).get("why", "").capitalize(),
        "stopped": report.get("error"),  # why the climb ended early: nothing launched, a timeout, Ctrl-C
        "rungs": [_rung(r) for r in report.get("rungs") or []],
        "profile": _profile(report, with_plots),
        "cards": [chains.view(card, n, links) for n, card in enumerate(cards(report), 1)],
        "citations": [_citation(c) for c in report.get("citations") or []],
        "facts": _facts(report.get("facts") or [], links),
        "warnings": list(report.get("warnings") or []),
    }


def _context(subject: dict) -> str:
    bits = [f"problem {subject['problem']}"] if subject.get("problem") else []
    bits += [f"backend {subject.get('backend')}", f"target {subject.get('target')}"]
    if subject.get("device"):
        bits.append(f"device {subject['device']}")
    return ", ".join(bits)


def _rung(record: dict) -> dict:
    status = {"ok": "ran", "failed": "failed"}.get(record.get("status"), "skipped")
    return {"rung": record["rung"], "title": record.get("title", ""), "status": status, "why": record.get("why", ""),
            "error": record.get("error"), "summary": record.get("summary") or "",
            "seconds": text.duration(record.get("seconds") or 0.0) if record.get("ran") else "-"}


def _why_no_profile(report: dict) -> str:
    """Why rung 2 measured nothing, in the words its record gives (empty when it measured)."""
    if (report.get("profile") or {}).get("cases"):
        return ""
    record = next((r for r in report.get("rungs") or [] if r.get("rung") == 2), None)
    if record is None:
        return NOT_RECORDED
    if record.get("status") == "failed":
        return f"rung 2 failed: {record.get('error')}"
    if record.get("ran"):
        return "rung 2 ran but measured no case"
    return record.get("why") or "rung 2 did not run"


def _profile(report: dict, with_plots: bool) -> dict:
    profile = report.get("profile") or {}
    cases = profile.get("cases") or []
    if not cases:
        return {"measured": False, "why_not": _why_no_profile(report)}
    ceilings = profile.get("ceilings") or {}
    peaks = ", ".join(f"{dtype} {flops / 1e12:.0f} TFLOP/s" for dtype, flops in (ceilings.get("flops") or {}).items())
    bandwidth = f"{ceilings['bandwidth'] / 1e12:.2f} TB/s" if ceilings.get("bandwidth") else "unknown bandwidth"
    ncu = profile.get("ncu") or {}
    unplaced = [str(c["case"]) for c in cases if c.get("time_s") and not (c.get("flops") and c.get("bytes"))]
    drawn = plots.for_profile(profile) if with_plots else {"plots": [], "missing": ""}
    return {
        "measured": True, "device": str(profile.get("device") or "this device"),
        "ceilings": f"{bandwidth}{', ' + peaks if peaks else ''} ({ceilings.get('source', 'measured')})",
        "ncu": f"{'used' if ncu.get('available') else 'not used'} ({ncu.get('why', 'unknown')})",
        "plots": drawn["plots"], "plots_missing": drawn["missing"],
        "unplaced": ", ".join(unplaced),
        "cases": [_case_row(c) for c in cases], "split": _split(profile.get("split")),
        "notes": [f"case {c['case']}: {c.get('class') or '-'}: {c['why']}" for c in cases if c.get("why")]
        + _floor_notes(cases) + _guard_notes(cases),
    }


def _floor_notes(cases: list[dict]) -> list[str]:
    """The cases whose floor is not the memory their arguments span: left unknown (the case ran
    faster than that floor) or placed from the DRAM traffic Nsight Compute measured (a gather)."""
    return [f"case {c['case']}: " + (c.get("floor_note") or f"floor from {c.get('bytes_source')}")
            for c in cases if c.get("floor_note") or c.get("spanned_bytes")]


def _guard_notes(cases: list[dict]) -> list[str]:
    """What the judge's honesty guards saw in the forward (rung 2 benches it as code under diagnosis,
    so it was timed all the same): one line per thing seen, naming the cases it held for."""
    seen: dict[str, list[str]] = {}
    for case in cases:
        for note in case.get("guard_notes") or []:
            seen.setdefault(note, []).append(str(case["case"]))
    return [f"case{'s' if len(held) > 1 else ''} {', '.join(held)}: not a kernel-only forward, timed as it is: {note}"
            for note, held in seen.items()]


def _split(split: dict | None) -> dict | None:
    """The worst multi-kernel case kernel by kernel (`ladder.diagnoser.profile.split`), or why it has none."""
    if not split:
        return None
    if split.get("error"):
        return {"case": split["case"], "error": split["error"]}
    rows = [{"kernel": k["kernel"], "line": k.get("line") or "-", "launches": k.get("launches"),
             "time": text.seconds(k.get("seconds")), "share": text.percent(k.get("share")),
             "floor": text.percent(k.get("efficiency")), "class": k.get("class") or "-", "why": k.get("why") or ""}
            for k in split["kernels"]]
    rows.append({"kernel": "outside Triton kernels", "line": "-", "launches": "-", "floor": "-", "class": "-",
                 "time": text.seconds(split["outside_s"]), "share": text.percent(split["outside_share"]), "why": ""})
    return {"case": split["case"], "label": split.get("label"), "forward": text.seconds(split["forward_s"]),
            "rows": rows, "note": split.get("note")}


def _case_row(case: dict) -> dict:
    ncu = case.get("ncu") or {}
    return {
        "case": case["case"], "anchor": f"case-{case['case']}", "sizes": text.params(case.get("params")),
        "time": text.seconds(case.get("time_s")), "reference": text.seconds(case.get("ref_time_s")),
        "gbps": text.number(case.get("achieved_gbps"), 0), "tflops": text.number(case.get("achieved_tflops"), 2),
        "floor": text.percent(case.get("efficiency")), "class": case.get("class") or "-", "why": case.get("why") or "",
        "occupancy": text.occupancy(case),
        "sol": f"{text.number(ncu.get('sm_pct'), 0)}% / {text.number(ncu.get('memory_pct'), 0)}%" if ncu else "-",
        "stalls": ", ".join(f"{s['reason']} {s['warps_per_issue']}" for s in ncu.get("top_stalls", [])) or "-",
        "conflicts": (f"{text.number(ncu.get('smem_ld_conflict_pct'), 0)}% / "
                      f"{text.number(ncu.get('smem_st_conflict_pct'), 0)}%") if ncu else "-",
    }


def _citation(citation: dict) -> dict:
    return {"id": str(citation.get("id", "")), "label": text.citation_label(citation),
            "pass": citation.get("pass") or "no pass", "score": f"{citation.get('score', 0):.2f}",
            "symbol": citation.get("symbol") or "", "statement": citation.get("statement", ""),
            "summary": citation.get("summary") or "", "excerpt": citation.get("excerpt") or ""}


def _facts(facts: list[dict], links: chains.Links) -> list[dict]:
    """Rung 3's facts grouped by the kernel specialization they were compiled for, in table order."""
    groups: dict[str, dict] = {}
    for fact in facts:
        base, variant = text.kernel_parts(fact.get("kernel"))
        group = groups.setdefault(str(fact.get("kernel")), {"kernel": base, "variant": variant, "rows": [],
                                                            "cases": links.cases_of(fact.get("kernel"))})
        value = text.fact_value(fact.get("value"))
        group["rows"].append({
            "anchor": links.facts.get(chains.fact_key(fact)), "kind": fact.get("kind", ""),
            "where": text.location(fact.get("file"), fact.get("line")), "line": fact.get("line"),
            "stage": fact.get("stage") or "", "value": text.shorten(value, VALUE_LIMIT), "value_full": value,
            **chains.excerpt(fact.get("excerpt"))})
    return list(groups.values())
