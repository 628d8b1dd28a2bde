"""Retrospective synthesis: a draft catalog entry from a verified fix in an optimization journal.

A journal is JSON lines, one object per round (design.md). Read here, with the names tried in
order:
- `round`;  `rung` / `rung_reached`;  `target` / `backend` (on the round or a header line);
- the outcome: `outcome.{compiled, correct, speedup, time_ms, baseline_ms, accepted}` or the
  same keys at the top level;
- the proposal: `proposal.summary` / `proposal` (text) / `proposal_summary` / `summary`;
- `diff` (unified diff of the solution);
- the evidence: `evidence` (findings, or evidence items of type source/fact/metric/chunk) and
  `evidence_ids`.
Only a round that compiled, was correct and was faster than the baseline can be learned from;
the entry is written with `status: draft` for a person to review, name and give a detector.
"""
from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any, Optional

from .catalog import PATTERNS_DIR, CatalogError, load_catalog, validate

DRAFTS_DIR = PATTERNS_DIR / "drafts"
# The most lines a draft's before/after snippet keeps; the draft names the candidate file for the rest.
SNIPPET_LINES = 40


class LearnError(ValueError):
    """The journal or the requested round cannot give a draft (one line, for the user)."""


def read_journal(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        raise LearnError(f"no such journal: {path}")
    rounds = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise LearnError(f"{path.name}:{number}: not a JSON object ({error.msg})") from None
        if not isinstance(record, dict):
            raise LearnError(f"{path.name}:{number}: a journal line is one JSON object")
        rounds.append(record)
    if not rounds:
        raise LearnError(f"{path.name}: the journal is empty")
    return rounds


def _outcome(record: dict[str, Any]) -> dict[str, Any]:
    outcome = dict(record.get("outcome") or {})
    for key in ("compiled", "correct", "speedup", "time_ms", "baseline_ms", "accepted"):
        if key not in outcome and key in record:
            outcome[key] = record[key]
    if "speedup" not in outcome and outcome.get("time_ms") and outcome.get("baseline_ms"):
        outcome["speedup"] = outcome["baseline_ms"] / outcome["time_ms"]
    return outcome


def verified(record: dict[str, Any]) -> tuple[bool, str]:
    """(learnable, why not): compiled, correct on every case, faster than the baseline."""
    outcome = _outcome(record)
    if outcome.get("compiled") is False:
        return False, "it did not compile"
    if outcome.get("correct") is not True:
        return False, "it was not verified correct"
    speedup = outcome.get("speedup")
    if not isinstance(speedup, (int, float)) or speedup <= 1.0:
        return False, "it was not faster than the baseline" if isinstance(speedup, (int, float)) else "it has no timing"
    if outcome.get("accepted") is False:
        return False, "the gate did not accept it"
    return True, ""


def choose_round(rounds: list[dict[str, Any]], wanted: Optional[int]) -> dict[str, Any]:
    numbered = [r for r in rounds if isinstance(r.get("round"), int)]
    if wanted is not None:
        record = next((r for r in numbered if r["round"] == wanted), None)
        if record is None:
            raise LearnError(f"round {wanted} is not in the journal")
        ok, why = verified(record)
        if not ok:
            raise LearnError(f"round {wanted} cannot be learned from: {why}")
        return record
    good = [r for r in numbered if verified(r)[0]]
    if not good:
        raise LearnError("no round in the journal compiled, was correct and was faster: nothing to learn")
    return max(good, key=lambda r: _outcome(r)["speedup"])


def _summary(record: dict[str, Any]) -> str:
    proposal = record.get("proposal")
    if isinstance(proposal, dict) and proposal.get("summary"):
        return str(proposal["summary"])
    for value in (proposal, record.get("proposal_summary"), record.get("summary")):
        if isinstance(value, str) and value.strip():
            return value.strip()
    raise LearnError(f"round {record.get('round')} has no proposal summary to name the fix")


def _hunks(diff: str) -> list[list[str]]:
    """The body lines of each hunk of a unified diff (a context line that lost its space counts as "")."""
    hunks: list[list[str]] = []
    for line in diff.splitlines():
        if line.startswith("@@"):
            hunks.append([])
        elif hunks and not line.startswith(("---", "+++", "\\")):
            hunks[-1].append(line if line else " ")
    return hunks


def _diff_sides(diff: str) -> tuple[str, str]:
    """Both sides of the hunk that changes the most lines, each with the hunk's context lines.

    Removed and added lines alone lose the lines they sit between (a loop's header, the line that
    defines what the change uses), so neither side would read as code; a rewrite's first hunk is
    often an import, so the largest one is the change. Where a side parses as Python and holds
    Triton kernels, it is cut down to the kernels the other side does not have word for word: a
    rewrite's hunk is the whole file, and its helpers and imports would fill the snippet."""
    changed = [h for h in _hunks(diff) if any(line[0] in "+-" for line in h)]
    if not changed:
        return "", ""
    main = max(changed, key=lambda h: sum(line[0] in "+-" for line in h))
    before = [line[1:] for line in main if line[0] in " -"]
    after = [line[1:] for line in main if line[0] in " +"]
    kernels_before, kernels_after = _kernels("\n".join(before)), _kernels("\n".join(after))
    if kernels_before and kernels_after:
        before = [line for k in kernels_before if k not in kernels_after for line in (*k.splitlines(), "")]
        after = [line for k in kernels_after if k not in kernels_before for line in (*k.splitlines(), "")]
    return _clip(before), _clip(after)


def _kernels(source: str) -> list[str]:
    """The source of each `@triton.jit` function of `source`, decorators included.

    A hunk may end inside a statement; what comes before the top-level statement holding the first
    syntax error is read then (none if nothing parses)."""
    import ast

    lines = source.splitlines()
    while lines:
        try:
            tree = ast.parse("\n".join(lines))
            break
        except SyntaxError as error:
            failing = min(error.lineno or len(lines), len(lines))
            cut = max((i for i, line in enumerate(lines[:failing])
                       if line[:1].strip() and not line.startswith((")", "]", "}", "#"))), default=0)
            lines = lines[:min(cut, len(lines) - 1)]
    else:
        return []
    return ["\n".join(lines[node.decorator_list[0].lineno - 1:node.end_lineno]) for node in tree.body
            if isinstance(node, ast.FunctionDef) and any("jit" in ast.unparse(d) for d in node.decorator_list)]


def _clip(lines: list[str]) -> str:
    """At most SNIPPET_LINES of a snippet, saying how much was left out and where the rest is."""
    if len(lines) > SNIPPET_LINES:
        rest = len(lines) - SNIPPET_LINES
        lines = lines[:SNIPPET_LINES] + [f"# ... {rest} more lines (the whole change: learned_from.candidate)"]
    return _dedent("\n".join(lines))


def _dedent(text: str) -> str:
    import textwrap

    return textwrap.dedent(text).strip("\n") + "\n" if text.strip() else ""


def _target(rounds: list[dict[str, Any]], record: dict[str, Any]) -> str:
    for source in (record, *rounds):
        value = str(source.get("target") or source.get("backend") or "")
        if value:
            return "ascend" if value.split(":")[0].lower() in ("ascend", "npu") else "nvidia"
    return "nvidia"


SLUG_FILLER = {"the", "a", "an", "of", "to", "and", "in", "for", "with"}
# A later round's docstring often starts from the one it builds on ("round 4's TMA main loops, each
# beside persistent configs"): the id names what changed, not which round it kept, and a
# possessive's "s" is no word ("GEMM's operands" is gemm-operands, not gemm-s-operands).
EARLIER_ROUNDS = re.compile(r"\brounds? \d+(?:(?:, | and | or )\d+)*(?:['\u2019]s)?")
POSSESSIVE = re.compile(r"['\u2019]s\b")


def _slug(text: str, words: int = 4) -> str:
    text = POSSESSIVE.sub("", EARLIER_ROUNDS.sub("", text.lower()))
    tokens = [t for t in re.findall(r"[a-z0-9]+", text) if t not in SLUG_FILLER]
    return "-".join(tokens[:words]) or "fix"


def _evidence(record: dict[str, Any]) -> list[dict[str, Any]]:
    items = []
    for item in record.get("evidence") or record.get("findings") or []:
        if isinstance(item, dict):
            items.append(item)
            items.extend(e for e in item.get("evidence", []) if isinstance(e, dict))
    return items


def _candidate(journal: Path, record: dict[str, Any]) -> Optional[str]:
    """The accepted candidate's source file, which holds the whole change the snippets excerpt."""
    accepted = record.get("accepted")
    for proposal in record.get("proposals") or []:
        if isinstance(proposal, dict) and proposal.get("id") == accepted and proposal.get("file"):
            path = Path(journal).parent / proposal["file"]
            return str(path) if path.is_file() else None
    return None


def _named_change(candidate: Optional[str]) -> Optional[str]:
    """What the accepted candidate says it changed: the first sentence of its module docstring, less
    the operator named before a colon ("Linear + Swish + scale: operands through TMA descriptors
    ..."). An agent's round summary leads with the evidence it answered, which names a case ("N = 3000
    at 54% of the roofline ..."), so an id or title cut from it names the case, not the fix."""
    if candidate is None:
        return None
    try:
        doc = ast.get_docstring(ast.parse(Path(candidate).read_text()))
    except (OSError, SyntaxError, ValueError):
        return None
    first = " ".join((doc or "").strip().split("\n\n")[0].split())
    first = re.split(r"(?<=[a-z0-9)])\. ", first)[0].rstrip(".")
    _, colon, change = first.partition(": ")
    return (change if colon and change else first) or None


def _proposer(rounds: list[dict[str, Any]], record: dict[str, Any]) -> str:
    """Who proposed the round: its own `proposer`, else the run's (a run continued from another
    proposer's run keeps that proposer's rounds, each marked with its own)."""
    for source in (record, *rounds):
        if source.get("proposer"):
            return str(source["proposer"])
    return ""


def draft_from_journal(journal: Path, round_: Optional[int] = None, pattern_id: Optional[str] = None,
                       taken: Optional[set[str]] = None) -> dict[str, Any]:
    """A draft entry from the round (default: the best verified one); its id avoids the catalog's and `taken`."""
    from .detectors.profile import PROFILE_METRICS
    from ladder.diagnoser.evidence import FACT_KINDS

    rounds = read_journal(Path(journal))
    record = choose_round(rounds, round_)
    outcome = _outcome(record)
    summary = _summary(record)
    diff = record.get("diff") or ""
    before, after = _diff_sides(diff)
    if not before.strip() and not after.strip():
        raise LearnError(f"round {record['round']} has no diff to turn into a before/after snippet")
    target = _target(rounds, record)
    prefix = "npu" if target == "ascend" else "nv"
    try:
        catalog = load_catalog()
    except CatalogError:
        catalog = {}
    existing = set(catalog) | set(taken or ())
    proposer, candidate = _proposer(rounds, record), _candidate(journal, record)
    # a rules round's candidate keeps the initial version's docstring: its summary names the fix
    named = _named_change(candidate) if proposer != "rules" else None
    pattern_id = pattern_id or f"{prefix}.{_slug(named or summary)}"
    base, n = pattern_id, 2
    while pattern_id in existing:
        pattern_id, n = f"{base}-{n}", n + 1
    evidence = _evidence(record)
    patterns = sorted({e["pattern"] for e in evidence if e.get("pattern")} | {
        i for i in record.get("evidence_ids") or [] if isinstance(i, str) and re.match(r"^(nv|npu)\.", i)})
    detect = []
    for pattern in patterns:
        detect.append({"rung": 1, "level": "source", "signal": f"seen together with {pattern} in the round that was fixed"})
    for kind in sorted({e.get("kind") for e in evidence if e.get("type") == "fact" and e.get("kind") in FACT_KINDS}):
        detect.append({"rung": 3, "level": "ir", "fact": kind, "signal": f"the {kind} fact that the round's evidence cited"})
    metrics = sorted({e.get("name") for e in evidence if e.get("type") == "metric" and e.get("name") in PROFILE_METRICS})
    if metrics:
        detect.append({"rung": 2, "level": "profile", "metrics": metrics, "signal": "the metrics the round's evidence cited"})
    if not detect:
        rung = record.get("rung") or record.get("rung_reached") or 1
        level = {1: "source", 2: "profile", 3: "ir", 4: "ir"}.get(int(rung), "source")
        signal = {"rung": 3 if level == "ir" else int(rung), "level": level,
                  "signal": f"reached at rung {rung}; describe the signal before accepting this entry"}
        if level == "ir":
            signal["fact"] = "global_access"
        if level == "profile":
            signal["metrics"] = ["time_ns"]
        detect.append(signal)
    compiler = []
    for chunk in (e for e in evidence if e.get("type") == "chunk" and e.get("path")):
        ref = {"path": chunk["path"], "why": f"retrieved as evidence in round {record['round']}"}
        if isinstance(chunk.get("start"), int) and isinstance(chunk.get("end"), int) and 0 < chunk["start"] <= chunk["end"]:
            ref["lines"] = [chunk["start"], chunk["end"]]
        if chunk.get("pass"):
            ref["pass"] = chunk["pass"]
        compiler.append(ref)
    speedup = float(outcome["speedup"])
    timing = ""
    if outcome.get("baseline_ms") and outcome.get("time_ms"):
        timing = f" ({outcome['baseline_ms']:.4g} ms -> {outcome['time_ms']:.4g} ms)"
    titles = sorted({e.get("title") for e in evidence if e.get("title")})
    answered = [p for p in (record.get("proposal") or {}).get("patterns") or [] if p in catalog]
    how = f"{summary}\n(From the accepted diff of round {record['round']}; generalise before accepting.)"
    if answered and proposer != "rules":
        how += (f"\nA fix of its own for what {', '.join(answered)} find"
                f"{'s' if len(answered) == 1 else ''}, not the catalog's mechanical one: add it to that entry or keep "
                "it as its own.")
    symptom = (f"Learned from round {record['round']} of {Path(journal).name}: the fix below made the kernel "
               f"{speedup:.2f}x faster{timing} and stayed correct on every case."
               + (f" Evidence at the time: {'; '.join(titles)}." if titles else ""))
    draft = {
        "id": pattern_id,
        "title": (named or summary)[:100],
        "backend": target,
        "status": "draft",
        "symptom": symptom,
        "detect": detect,
        "fix": {"summary": summary, "mechanical": False, "how": how,
                "before": before or "# (nothing removed)\n", "after": after or "# (nothing added)\n"},
        "compiler": compiler,
        "confidence": round(min(0.6, 0.3 + 0.1 * speedup), 2),
        "learned_from": {"journal": str(journal), "round": record["round"], "speedup": round(speedup, 3),
                         "rung": record.get("rung") or record.get("rung_reached"),
                         **{key: value for key, value in (("proposer", proposer), ("candidate", candidate)) if value}},
    }
    try:
        validate(draft, f"draft {pattern_id}")
    except CatalogError as error:
        raise LearnError(str(error)) from None
    return draft


def covered_by(record: dict[str, Any], catalog: dict[str, Any], proposer: str) -> list[str]:
    """The catalog entries whose own mechanical fix the round's accepted change applied: a win the
    catalog already explains, with nothing new to learn from it.

    Only the rules proposer's `patterns` name the catalog fixes it applied; a model's or an agent's
    name the findings its own rewrite says it answers, which is a fix to learn."""
    if proposer != "rules":
        return []
    patterns = (record.get("proposal") or {}).get("patterns") or []
    return [p for p in patterns if p in catalog and catalog[p].mechanical]


def learn_from_runs(root: Path) -> list[dict[str, Any]]:
    """Every accepted round of every journal under ``root`` (``ladder suite --optimize``'s runs):
    either the catalog entries that already cover it, or a draft entry for a fix no entry covers
    (ids distinct across the drafts of one call)."""
    catalog = load_catalog()
    learned, taken = [], set()
    for journal in sorted(Path(root).rglob("journal.jsonl")):
        rounds = read_journal(journal)
        for record in rounds:
            if record.get("kind") != "round" or not record.get("accepted"):
                continue
            entry = {"journal": str(journal), "round": record["round"],
                     "proposer": _proposer(rounds, record), "summary": (record.get("proposal") or {}).get("summary")}
            covering = covered_by(record, catalog, entry["proposer"])
            if covering:
                entry["covered_by"] = covering
            else:
                try:
                    entry["draft"] = draft_from_journal(journal, record["round"], taken=taken)
                    taken.add(entry["draft"]["id"])
                except LearnError as why:
                    entry["not_learned"] = str(why)
            learned.append(entry)
    return learned


def to_yaml(draft: dict[str, Any]) -> str:
    import yaml

    class Dumper(yaml.SafeDumper):
        pass

    def text(dumper, value):
        style = "|" if "\n" in value else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    Dumper.add_representer(str, text)
    return yaml.dump(draft, Dumper=Dumper, sort_keys=False, allow_unicode=True, width=100)


def write_draft(draft: dict[str, Any], out: Optional[Path]) -> Optional[Path]:
    """Write the draft (default kb/patterns/drafts/<id>.yaml); `-` prints it instead."""
    text = to_yaml(draft)
    if out is not None and str(out) == "-":
        print(text, end="")
        return None
    path = Path(out) if out is not None else DRAFTS_DIR / f"{draft['id']}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path
