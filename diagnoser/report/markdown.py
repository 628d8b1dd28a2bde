"""The diagnosis as Markdown: for the terminal and for pull requests."""
from __future__ import annotations

from diagnoser.report import text


def render(report: dict) -> str:
    subject = report["subject"]
    out = [f"# ladder diagnose: {subject['solution']}", ""]
    context = [f"backend {subject['backend']}", f"target {subject['target']}"]
    if subject.get("problem"):
        context.insert(0, f"problem {subject['problem']}")
    if subject.get("device"):
        context.append(f"device {subject['device']}")
    out += [", ".join(context), ""]
    if report.get("error"):
        out += [f"**Stopped: {report['error']}.**", ""]
    out += [f"**Reached rung {report['reached']} of 4.** {report['gap']['why'].capitalize()}.", ""]
    out += _rungs(report) + _profile(report) + _findings(report) + _citations(report) + _warnings(report)
    return "\n".join(out).rstrip() + "\n"


def _rungs(report: dict) -> list[str]:
    lines = ["## Rungs", "", "| rung | ran | why | time |", "| --- | --- | --- | --- |"]
    for r in report["rungs"]:
        ran = {"ok": "yes", "failed": "failed"}.get(r["status"], "no")
        why = r["why"] + (f" (error: {r['error']})" if r.get("error") else "")
        lines.append(f"| {r['rung']} {r['title']} | {ran} | {_cell(why)} | {text.duration(r['seconds']) if r['ran'] else '-'} |")
    return lines + [""]


def _profile(report: dict) -> list[str]:
    profile = report.get("profile")
    if not profile:
        return []
    ceilings = profile.get("ceilings", {})
    lines = ["## Profile (rung 2)", ""]
    peaks = ", ".join(f"{dtype} {flops / 1e12:.0f} TFLOP/s" for dtype, flops in (ceilings.get("flops") or {}).items())
    if ceilings.get("bandwidth"):
        lines.append(f"Ceilings on {profile.get('device', 'this device')}: {ceilings['bandwidth'] / 1e12:.2f} TB/s"
                     f"{', ' + peaks if peaks else ''} ({ceilings.get('source', 'measured')}).")
    ncu = profile.get("ncu") or {}
    lines.append(f"Nsight Compute: {'used' if ncu.get('available') else 'not used'} ({ncu.get('why', 'unknown')}).")
    lines += ["", "| case | sizes | time | reference | GB/s | TFLOP/s | of floor | class | occupancy theor./achieved |",
              "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for c in profile.get("cases", []):
        lines.append(f"| {c['case']} | {text.params(c.get('params'))} | {text.seconds(c.get('time_s'))} |"
                     f" {text.seconds(c.get('ref_time_s'))} | {text.number(c.get('achieved_gbps'), 0)} |"
                     f" {text.number(c.get('achieved_tflops'), 2)} | {text.percent(c.get('efficiency'))} |"
                     f" {c.get('class', '-')} | {text.occupancy(c)} |")
    notes = [f"- case {c['case']}: {c['class']}: {c['why']}" for c in profile.get("cases", []) if c.get("why")]
    stalls = [f"- case {c['case']}: top stalls " + ", ".join(f"{s['reason']} {s['warps_per_issue']}" for s in c["ncu"]["top_stalls"])
              for c in profile.get("cases", []) if (c.get("ncu") or {}).get("top_stalls")]
    return lines + [""] + notes + stalls + ([""] if notes or stalls else [])


def _findings(report: dict) -> list[str]:
    lines = ["## Findings", ""]
    if not report["findings"]:
        return lines + ["None.", ""]
    for i, f in enumerate(report["findings"], 1):
        where = text.location(f.get("file"), f.get("line"))
        head = f"{i}. **{text.label(f)}** (rung {f['rung']}, confidence {f.get('confidence', 0):.2f})"
        if where:
            head += f" at {where}"
        if f.get("kernel"):
            head += f" in `{f['kernel']}`"
        lines += [head + f": {f['title']}"]
        lines += [f"   - {text.evidence(e)}" for e in f.get("evidence", [])]
        if f.get("fix"):
            lines.append(f"   - fix: {f['fix']}")
    return lines + [""]


def _citations(report: dict) -> list[str]:
    citations = report.get("citations") or []
    if not citations:
        return []
    lines = ["## Compiler source (rung 4)", ""]
    for c in citations:
        lines.append(f"- [{c.get('id', '')}] `{text.citation_label(c)}` ({c.get('pass') or 'no pass'},"
                     f" score {c.get('score', 0):.2f}): {c.get('statement', '')}")
        if c.get("summary"):
            lines.append(f"  - summary: {c['summary']}")
    return lines + [""]


def _warnings(report: dict) -> list[str]:
    return ["## Warnings", ""] + [f"- {w}" for w in report["warnings"]] + [""] if report.get("warnings") else []


def _cell(value: str) -> str:
    return value.replace("|", "\\|").replace("\n", " ")
