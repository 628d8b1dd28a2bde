"""Runner records -> one row per case -> one row per operator -> the summary across operators."""
from __future__ import annotations

import statistics
from typing import Any

from ladder.diagnoser.suite.operators import Operator


def geomean(values: list[float]) -> float | None:
    values = [value for value in values if value is not None and value > 0]
    return statistics.geometric_mean(values) if values else None


def median(values: list[float]) -> float | None:
    values = [value for value in values if value is not None]
    return statistics.median(values) if values else None


def case_row(case: dict[str, Any]) -> dict[str, Any]:
    """One case of a runner record, reduced to what the suite reports."""
    time_ms = case.get("time_ms") or {}
    initial_ms, eager_ms = time_ms.get("median"), case.get("reference_ms")
    roofline_pct = case.get("roofline_pct")
    # Same floor for both (the problem's flops/bytes): eager's position follows from the ratio.
    eager_roofline_pct = (roofline_pct * initial_ms / eager_ms
                          if roofline_pct is not None and initial_ms and eager_ms else None)
    row = {
        "case": case.get("case"),
        "label": case.get("label"),
        "params": case.get("params"),
        "correct": bool(case.get("correct")),
        "initial_ms": initial_ms,
        "initial_p10_ms": time_ms.get("p10"),
        "initial_p90_ms": time_ms.get("p90"),
        "eager_ms": eager_ms,
        "speedup_vs_eager": case.get("speedup"),
        "roofline_pct": roofline_pct,
        "eager_roofline_pct": eager_roofline_pct,
        "gbps": case.get("gbps"),
        "tflops": case.get("tflops"),
        "flops": case.get("flops"),
        "bytes": case.get("bytes"),
        "max_rel_err": case.get("max_rel_err"),
        "rtol": case.get("rtol"),
        "launches": case.get("launches"),
        "kernels": case.get("kernels"),
        "flags": case.get("flags") or [],
    }
    if not row["correct"]:
        row["reason"] = case.get("reason")
    return row


def operator_row(op: Operator, record: dict[str, Any]) -> dict[str, Any]:
    """An operator's row: per-case figures and their geometric means over the timed cases."""
    cases = [case_row(case) for case in record.get("cases", [])]
    timed = [case for case in cases if case["correct"] and case["initial_ms"] and case["eager_ms"]]
    row = {
        "operator": op.key,
        "level": op.level,
        "number": op.number,
        "name": op.name,
        "ok": bool(record.get("ok")),
        "base_seed": record.get("base_seed"),
        "cases_correct": sum(case["correct"] for case in cases),
        "cases": cases,
        "initial_ms": geomean([case["initial_ms"] for case in timed]),
        "eager_ms": geomean([case["eager_ms"] for case in timed]),
        "speedup_vs_eager": geomean([case["speedup_vs_eager"] for case in timed]),
        "roofline_pct": geomean([case["roofline_pct"] for case in timed]),
        "eager_roofline_pct": geomean([case["eager_roofline_pct"] for case in timed]),
    }
    rejected = record.get("rejected")
    if rejected:
        row["rejected"] = rejected
    if record.get("device_error"):
        row["device_error"] = record["device_error"]
    return row


def failed_row(op: Operator, reason: str) -> dict[str, Any]:
    """The row of an operator whose evaluation could not run at all (broken problem file, ...)."""
    return {"operator": op.key, "level": op.level, "number": op.number, "name": op.name, "ok": False,
            "cases_correct": 0, "cases": [], "initial_ms": None, "eager_ms": None,
            "speedup_vs_eager": None, "roofline_pct": None, "eager_roofline_pct": None,
            "error": reason}


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Across operators: geometric mean and median of the per-operator figures.

    Only operators correct on every case and timed count; the others are listed by name.
    """
    def over(selected: list[dict[str, Any]]) -> dict[str, Any]:
        counted = [row for row in selected if row["ok"] and row["speedup_vs_eager"] is not None]
        speedups = [row["speedup_vs_eager"] for row in counted]
        roofline = [row["roofline_pct"] for row in counted]
        return {
            "operators": len(selected),
            "correct": sum(row["ok"] for row in selected),
            "counted": len(counted),
            "speedup_vs_eager_geomean": geomean(speedups),
            "speedup_vs_eager_median": median(speedups),
            "roofline_pct_geomean": geomean(roofline),
            "roofline_pct_median": median(roofline),
            "eager_roofline_pct_geomean": geomean([row["eager_roofline_pct"] for row in counted]),
        }

    summary = over(rows)
    summary["by_level"] = {str(level): over([row for row in rows if row["level"] == level])
                           for level in sorted({row["level"] for row in rows})}
    summary["not_counted"] = [row["operator"] for row in rows
                              if not (row["ok"] and row["speedup_vs_eager"] is not None)]
    return summary
