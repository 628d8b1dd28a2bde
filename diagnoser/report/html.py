"""The diagnosis as one self-contained HTML page: inline CSS and SVG plots, no scripts, no fetches.

Every finding's evidence is a link to where that evidence is shown: the IR fact in the facts
table, the metric in the case table, the compiler chunk in the citations.
"""
from __future__ import annotations

import json
from html import escape

from diagnoser.evidence import fact_of
from diagnoser.report import svg, text

STYLE = """
body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f3f3f3}code,pre{background:#f6f6f6;padding:1px 4px}pre{padding:6px;overflow-x:auto}
.skipped{color:#888}.failed{color:#b00}.finding{border-left:4px solid #1f77b4;padding:2px 12px;margin:1em 0}
.plots{display:flex;flex-wrap:wrap;gap:1em}:target{background:#fff6d5}
"""


def render(report: dict) -> str:
    subject = report["subject"]
    facts = report.get("facts") or []
    fact_ids = {_fact_key(f): f"fact-{i}" for i, f in enumerate(facts, 1)}
    case_ids = {text.params(c.get("params")) or "default": f"case-{c['case']}" for c in (report.get("profile") or {}).get("cases", [])}
    parts = [
        "<!doctype html>", '<html lang="en"><head><meta charset="utf-8">',
        f"<title>ladder diagnose: {escape(subject['solution'])}</title><style>{STYLE}</style></head><body>",
        f"<h1>ladder diagnose: <code>{escape(subject['solution'])}</code></h1>",
        f"<p>{escape(_context(subject))}</p>",
        f"<p><strong>Reached rung {report['reached']} of 4.</strong> {escape(report['gap']['why'].capitalize())}.</p>",
        _rungs(report), _profile(report), _findings(report, fact_ids, case_ids), _citations(report), _facts(facts),
        _warnings(report), "</body></html>",
    ]
    return "\n".join(p for p in parts if p)


def _context(subject: dict) -> str:
    bits = [f"problem {subject['problem']}"] if subject.get("problem") else []
    bits += [f"backend {subject['backend']}", f"target {subject['target']}"]
    if subject.get("device"):
        bits.append(f"device {subject['device']}")
    return ", ".join(bits)


def _rungs(report: dict) -> str:
    rows = []
    for r in report["rungs"]:
        status = {"ok": "ran", "failed": "failed"}.get(r["status"], "skipped")
        why = escape(r["why"]) + (f" <span class=failed>({escape(r['error'])})</span>" if r.get("error") else "")
        seconds = text.duration(r["seconds"]) if r["ran"] else "-"
        rows.append(f'<tr class="{status}"><td>{r["rung"]} {escape(r["title"])}</td><td>{status}</td><td>{why}</td><td>{seconds}</td></tr>')
    return "<h2>Rungs</h2><table><tr><th>rung</th><th>ran</th><th>why</th><th>time</th></tr>" + "".join(rows) + "</table>"


def _profile(report: dict) -> str:
    profile = report.get("profile")
    if not profile:
        return ""
    ceilings = profile.get("ceilings") or {}
    cases = profile.get("cases", [])
    peak = max((ceilings.get("flops") or {}).values(), default=None)
    case_peaks = [c.get("ceiling_flops") for c in cases if c.get("ceiling_flops")]
    plots = [svg.roofline(cases, ceilings.get("bandwidth"), max(case_peaks) if case_peaks else peak), svg.times(cases)]
    ncu = profile.get("ncu") or {}
    rows = []
    for c in cases:
        ncu_cells = _ncu_cells(c.get("ncu") or {})
        rows.append(
            f'<tr id="case-{c["case"]}"><td>{c["case"]}</td><td>{escape(text.params(c.get("params")))}</td>'
            f"<td>{text.seconds(c.get('time_s'))}</td><td>{text.seconds(c.get('ref_time_s'))}</td>"
            f"<td>{text.number(c.get('achieved_gbps'), 0)}</td><td>{text.number(c.get('achieved_tflops'), 2)}</td>"
            f"<td>{text.percent(c.get('efficiency'))}</td><td title=\"{escape(c.get('why', ''))}\">{escape(c.get('class', '-'))}</td>"
            f"<td>{text.occupancy(c)}</td>{ncu_cells}</tr>")
    head = ("<tr><th>case</th><th>sizes</th><th>time</th><th>reference</th><th>GB/s</th><th>TFLOP/s</th><th>of floor</th>"
            "<th>class</th><th>occupancy theor./achieved</th><th>SOL SM / memory</th><th>top stalls</th><th>bank conflicts ld/st</th></tr>")
    notes = "".join(f"<li>case {c['case']}: {escape(c.get('class') or '-')}: {escape(c['why'])}</li>" for c in cases if c.get("why"))
    unplaced = [str(c["case"]) for c in cases if c.get("time_s") and not (c.get("flops") and c.get("bytes"))]
    if unplaced:
        notes += f"<li>not on the roofline plot (no flops or bytes declared): case {', '.join(unplaced)}</li>"
    bandwidth = f"{ceilings['bandwidth'] / 1e12:.2f} TB/s" if ceilings.get("bandwidth") else "unknown bandwidth"
    peaks = ", ".join(f"{escape(d)} {f / 1e12:.0f} TFLOP/s" for d, f in (ceilings.get("flops") or {}).items())
    return (f"<h2>Profile (rung 2)</h2><p>Ceilings on {escape(str(profile.get('device', 'this device')))}: {bandwidth}"
            f"{', ' + peaks if peaks else ''} ({escape(str(ceilings.get('source', 'measured')))}). Nsight Compute:"
            f" {'used' if ncu.get('available') else 'not used'} ({escape(str(ncu.get('why', '')))}).</p>"
            f'<div class="plots">{"".join(p for p in plots if p)}</div>'
            f"<table>{head}{''.join(rows)}</table><ul>{notes}</ul>")


def _ncu_cells(ncu: dict) -> str:
    if not ncu:
        return "<td>-</td><td>-</td><td>-</td>"
    sol = f"{text.number(ncu.get('sm_pct'), 0)}% / {text.number(ncu.get('memory_pct'), 0)}%"
    stalls = ", ".join(f"{escape(s['reason'])} {s['warps_per_issue']}" for s in ncu.get("top_stalls", [])) or "-"
    conflicts = f"{text.number(ncu.get('smem_ld_conflict_pct'), 0)}% / {text.number(ncu.get('smem_st_conflict_pct'), 0)}%"
    return f"<td>{sol}</td><td>{stalls}</td><td>{conflicts}</td>"


def _fact_key(fact: dict) -> str:
    return json.dumps({k: fact.get(k) for k in ("kernel", "kind", "file", "line", "stage", "value")}, sort_keys=True)


def _findings(report: dict, fact_ids: dict, case_ids: dict) -> str:
    if not report["findings"]:
        return "<h2>Findings</h2><p>None.</p>"
    chunk_ids = {text.citation_label(c): c.get("id") for c in report.get("citations") or []}
    blocks = []
    for i, f in enumerate(report["findings"], 1):
        where = text.location(f.get("file"), f.get("line"))
        items = "".join(f"<li>{_evidence_link(e, fact_ids, chunk_ids, case_ids)}</li>" for e in f.get("evidence", []))
        fix = f"<p>fix: {escape(f['fix'])}</p>" if f.get("fix") else ""
        blocks.append(
            f'<div class="finding" id="finding-{i}"><h3>{i}. {escape(text.label(f))}'
            f" <small>(rung {f['rung']}, confidence {f.get('confidence', 0):.2f})</small></h3>"
            f"<p>{escape(f['title'])}{' at <code>' + escape(where) + '</code>' if where else ''}"
            f"{' in <code>' + escape(f['kernel']) + '</code>' if f.get('kernel') else ''}</p><ul>{items}</ul>{fix}</div>")
    return "<h2>Findings</h2>" + "".join(blocks)


def _evidence_link(item: dict, fact_ids: dict, chunk_ids: dict, case_ids: dict) -> str:
    label = escape(text.evidence(item))
    target = None
    if item.get("type") == "fact":
        target = fact_ids.get(_fact_key(fact_of(item)))
    elif item.get("type") == "chunk":
        target = chunk_ids.get(text.citation_label(item))
    elif item.get("type") == "metric" and item.get("case") is not None:
        case = item["case"]
        target = f"case-{case}" if isinstance(case, int) else case_ids.get(case)
    return f'<a href="#{target}">{label}</a>' if target else label


def _citations(report: dict) -> str:
    citations = report.get("citations") or []
    if not citations:
        return ""
    items = []
    for c in citations:
        summary = f"<p>summary: {escape(c['summary'])}</p>" if c.get("summary") else ""
        excerpt = f"<pre>{escape(c['excerpt'])}</pre>" if c.get("excerpt") else ""
        items.append(f'<li id="{escape(str(c.get("id", "")))}"><code>{escape(text.citation_label(c))}</code>'
                     f" ({escape(str(c.get('pass') or 'no pass'))}, score {c.get('score', 0):.2f}):"
                     f" {escape(c.get('statement', ''))}{summary}{excerpt}</li>")
    return "<h2>Compiler source (rung 4)</h2><ul>" + "".join(items) + "</ul>"


def _facts(facts: list[dict]) -> str:
    if not facts:
        return ""
    rows = []
    for i, f in enumerate(facts, 1):
        rows.append(f'<tr id="fact-{i}"><td>{escape(str(f.get("kernel")))}</td><td>{escape(f.get("kind", ""))}</td>'
                    f"<td>{escape(text.location(f.get('file'), f.get('line')))}</td><td>{escape(f.get('stage', ''))}</td>"
                    f"<td>{escape(text.compact(f.get('value')))}</td><td><code>{escape(f.get('excerpt', ''))}</code></td></tr>")
    return ("<h2>IR facts (rung 3)</h2><table><tr><th>kernel</th><th>kind</th><th>line</th><th>stage</th><th>value</th>"
            "<th>excerpt</th></tr>" + "".join(rows) + "</table>")


def _warnings(report: dict) -> str:
    if not report.get("warnings"):
        return ""
    return "<h2>Warnings</h2><ul>" + "".join(f"<li>{escape(w)}</li>" for w in report["warnings"]) + "</ul>"
