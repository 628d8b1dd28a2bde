"""The pattern catalog (`kb/patterns/<id>.yaml`): loading and validation.

An entry is data, reviewed like code. The loader checks what a reviewer cannot eyeball reliably:
the schema, that the file name is the id, that every detector an entry names exists and can emit
that id, that IR facts and profile metrics it reads are ones the other rungs produce, that a
`mechanical` fix has a rewrite behind it, and that no stable id has disappeared.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

PATTERNS_DIR = Path(__file__).resolve().parents[2] / "kb" / "patterns"

# Ids are public: reports, journals and users refer to them. Add, never rename or remove.
STABLE_IDS = (
    "nv.scalar-access", "nv.strided-inner-axis", "nv.register-spill", "nv.oversized-block", "nv.tiny-block",
    "nv.no-tensor-core", "nv.mma-v2-on-hopper", "nv.unpipelined-loop", "nv.smem-limits-occupancy",
    "nv.hot-layout-conversion", "nv.loop-carried-reduction", "nv.gemm-no-grouped-order", "nv.small-grid",
    "nv.launch-bound", "nv.atomic-contention", "nv.unfused-epilogue", "nv.redundant-global-traffic",
    "nv.hardcoded-config", "nv.index-div-mod", "nv.int64-index", "nv.tile-misfit",
    "nv.sfu-bound-loop", "nv.short-k-loop",
    "npu.grid-exceeds-cores", "npu.ub-overflow", "npu.unaligned-tail-axis", "npu.int64-scalar-fallback",
    "npu.discrete-access", "npu.masked-load-fill", "npu.where-condition-dtype", "npu.no-multibuffer-overlap",
)
ID_RE = re.compile(r"^(nv|npu|any)\.[a-z0-9]+(-[a-z0-9]+)*$")
BACKENDS = ("nvidia", "ascend", "any")
STATUSES = ("accepted", "draft")
LEVEL_RUNG = {"source": 1, "profile": 2, "ir": 3}


class CatalogError(ValueError):
    """A catalog entry that does not validate (the message names the file and the field)."""


@dataclass
class Pattern:
    id: str
    title: str
    backend: str
    symptom: str
    detect: list[dict[str, Any]]
    fix: dict[str, Any]
    compiler: list[dict[str, Any]]
    confidence: float
    status: str = "accepted"
    veto: Optional[dict[str, Any]] = None   # {rule, fact, signal}: the rung-3 facts that contradict it
    path: Optional[Path] = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def detectors(self) -> list[str]:
        return [d["detector"] for d in self.detect if d.get("detector")]

    @property
    def mechanical(self) -> bool:
        return bool(self.fix.get("mechanical"))


def load_catalog(directory: Path | str = PATTERNS_DIR, include_drafts: bool = True) -> dict[str, Pattern]:
    """All entries under `directory`, validated, keyed by id (raises CatalogError on the first problem)."""
    directory = Path(directory)
    if not directory.is_dir():
        raise CatalogError(f"no catalog directory: {directory}")
    patterns: dict[str, Pattern] = {}
    for path in sorted(directory.glob("*.yaml")):
        pattern = load_entry(path)
        if pattern.id in patterns:
            raise CatalogError(f"{path.name}: duplicate id {pattern.id}")
        if pattern.status == "draft" and not include_drafts:
            continue
        patterns[pattern.id] = pattern
    if directory.resolve() == PATTERNS_DIR.resolve():
        missing = [i for i in STABLE_IDS if i not in patterns]
        if missing:
            raise CatalogError(f"catalog lost stable id(s): {', '.join(missing)}")
    return patterns


def load_entry(path: Path | str) -> Pattern:
    import yaml

    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as error:
        raise CatalogError(f"{path.name}: not valid YAML: {str(error).splitlines()[0]}") from None
    if not isinstance(data, dict):
        raise CatalogError(f"{path.name}: an entry is a mapping of fields")
    validate(data, path.name)
    if data["id"] != path.stem:
        raise CatalogError(f"{path.name}: file name must be the id ({data['id']}.yaml)")
    known = {"id", "title", "backend", "symptom", "detect", "fix", "compiler", "confidence", "status", "veto"}
    return Pattern(
        id=data["id"], title=data["title"], backend=data["backend"], symptom=data["symptom"].strip(),
        detect=data["detect"], fix=data["fix"], compiler=data["compiler"], confidence=float(data["confidence"]),
        status=data.get("status", "accepted"), veto=data.get("veto"), path=path,
        extra={k: v for k, v in data.items() if k not in known},
    )


def validate(data: dict[str, Any], where: str = "entry") -> None:
    """Schema and cross-reference checks of one entry (as parsed YAML)."""
    from ladder.diagnoser.evidence import FACT_KINDS

    from .detectors import DETECTORS
    from .detectors.profile import PROFILE_METRICS
    from .fixes import FIXES

    def fail(message: str) -> None:
        raise CatalogError(f"{where}: {message}")

    for key in ("id", "title", "backend", "symptom", "detect", "fix", "compiler", "confidence"):
        if key not in data:
            fail(f"missing field `{key}`")
    if not isinstance(data["id"], str) or not ID_RE.match(data["id"]):
        fail(f"id {data['id']!r} is not of the form nv.some-name / npu.some-name")
    for key in ("title", "symptom"):
        if not isinstance(data[key], str) or not data[key].strip():
            fail(f"`{key}` must be non-empty text")
    if data["backend"] not in BACKENDS:
        fail(f"backend must be one of {', '.join(BACKENDS)}")
    status = data.get("status", "accepted")
    if status not in STATUSES:
        fail(f"status must be one of {', '.join(STATUSES)}")
    confidence = data["confidence"]
    if not isinstance(confidence, (int, float)) or not 0 <= confidence <= 1:
        fail("confidence must be a number in [0, 1]")
    detect = data["detect"]
    if not isinstance(detect, list) or not detect:
        fail("`detect` must be a non-empty list of signals")
    for index, signal in enumerate(detect):
        label = f"detect[{index}]"
        if not isinstance(signal, dict):
            fail(f"{label} must be a mapping")
        level = signal.get("level")
        if level not in LEVEL_RUNG:
            fail(f"{label}.level must be one of {', '.join(LEVEL_RUNG)}")
        if signal.get("rung") != LEVEL_RUNG[level]:
            fail(f"{label}.rung must be {LEVEL_RUNG[level]} for level {level}")
        if not isinstance(signal.get("signal"), str) or not signal["signal"].strip():
            fail(f"{label}.signal must say what is checked")
        detector = signal.get("detector")
        if detector is None:
            if status != "draft":
                fail(f"{label}.detector is required (name one of triage's DETECTORS)")
            continue
        if detector not in DETECTORS:
            fail(f"{label}.detector {detector!r} does not exist")
        if DETECTORS[detector].level != level:
            fail(f"{label}: detector {detector} reads {DETECTORS[detector].level}, not {level}")
        if data["id"] not in DETECTORS[detector].patterns:
            fail(f"{label}: detector {detector} never emits {data['id']}")
        if level == "ir":
            fact = signal.get("fact")
            if fact not in FACT_KINDS:
                fail(f"{label}.fact {fact!r} is not a rung-3 fact kind")
        if level == "profile":
            metrics = signal.get("metrics") or []
            unknown = [m for m in metrics if m not in PROFILE_METRICS]
            if not metrics or unknown:
                fail(f"{label}.metrics must list metrics from PROFILE_METRICS (unknown: {unknown})")
    _validate_veto(data, status, fail)
    fix = data["fix"]
    if not isinstance(fix, dict):
        fail("`fix` must be a mapping")
    for key in ("summary", "how", "before", "after"):
        if not isinstance(fix.get(key), str) or not fix[key].strip():
            fail(f"fix.{key} must be non-empty text")
    if fix["before"].strip() == fix["after"].strip():
        fail("fix.before and fix.after are identical")
    if fix.get("mechanical") and data["id"] not in FIXES:
        fail("fix.mechanical is true but diagnoser.triage.fixes has no rewrite for this id")
    compiler = data["compiler"]
    if not isinstance(compiler, list) or (not compiler and status != "draft"):
        fail("`compiler` must list the passes/files that explain the pattern")
    for index, ref in enumerate(compiler):
        label = f"compiler[{index}]"
        if not isinstance(ref, dict) or not (ref.get("path") or ref.get("pass")):
            fail(f"{label} needs a `path` (relative to the compiler tree) or a `pass`")
        path = ref.get("path")
        if path is not None and (not isinstance(path, str) or path.startswith("/") or ".." in path.split("/")):
            fail(f"{label}.path must be relative to the compiler source tree")
        lines = ref.get("lines")
        if lines is not None:
            if not (isinstance(lines, list) and len(lines) == 2 and all(isinstance(x, int) for x in lines)
                    and 0 < lines[0] <= lines[1]):
                fail(f"{label}.lines must be [start, end] with 0 < start <= end")
        if not isinstance(ref.get("why", ""), str):
            fail(f"{label}.why must be text")


def _validate_veto(data: dict[str, Any], status: str, fail: Any) -> None:
    """`veto`: which rung-3 facts contradict a rung-1 finding of this pattern. Required of accepted
    NVIDIA entries (every rung-1 prediction there is checked against what the compiler did):
    `rule` names a rule of `ladder.diagnoser.triage.vetoes.VETOES` and `fact` the fact kind(s) it reads,
    or `rule: none` and `signal` says why nothing in the IR can contradict the finding."""
    from ladder.diagnoser.evidence import FACT_KINDS

    from .vetoes import NO_VETO, VETOES

    veto = data.get("veto")
    if veto is None:
        if data["backend"] == "nvidia" and status != "draft":
            fail("`veto` is required: the rung-3 rule that contradicts the pattern, or `rule: none` and why")
        return
    if not isinstance(veto, dict):
        fail("`veto` must be a mapping of rule, fact and signal")
    rule = veto.get("rule")
    if rule != NO_VETO and rule not in VETOES:
        fail(f"veto.rule {rule!r} is not a rule of diagnoser.triage.vetoes (or `{NO_VETO}`)")
    if not isinstance(veto.get("signal"), str) or not veto["signal"].strip():
        fail("veto.signal must say what contradicts the finding (or why nothing in the IR can)")
    if rule != NO_VETO:
        facts = veto.get("fact")
        facts = [facts] if isinstance(facts, str) else facts
        if not facts or not isinstance(facts, list) or any(kind not in FACT_KINDS for kind in facts):
            fail(f"veto.fact {veto.get('fact')!r} must name the rung-3 fact kind(s) the rule reads")


def check_compiler_refs(patterns: dict[str, Pattern], tree: Path | str) -> list[str]:
    """Problems with `compiler` references against a compiler source tree: missing files, line
    ranges past the end of the file, pass names no Passes.td defines."""
    tree = Path(tree)
    problems = []
    pass_names = known_pass_names(tree)
    for pattern in patterns.values():
        for ref in pattern.compiler:
            path = ref.get("path")
            if path:
                file = tree / path
                if not file.is_file():
                    problems.append(f"{pattern.id}: {path} does not exist in {tree}")
                    continue
                lines = ref.get("lines")
                if lines:
                    count = len(file.read_text(errors="replace").splitlines())
                    if lines[1] > count:
                        problems.append(f"{pattern.id}: {path}:{lines[0]}-{lines[1]} is past the end ({count} lines)")
            name = ref.get("pass")
            if name and name not in pass_names:
                problems.append(f"{pattern.id}: pass {name!r} is not defined in any Passes.td")
    return problems


def known_pass_names(tree: Path | str) -> set[str]:
    """CLI names of every `def X : Pass<"cli-name", ...>` in the tree's TableGen files."""
    names = set()
    for td in Path(tree).rglob("*.td"):
        try:
            text = td.read_text(errors="replace")
        except OSError:
            continue
        names.update(re.findall(r'def\s+\w+\s*:\s*Pass\s*<\s*"([^"]+)"', text))
    return names


def render(pattern: Pattern) -> str:
    """A readable text rendering of an entry (used by `ladder explain`)."""
    lines = [f"{pattern.id}: {pattern.title}  [{pattern.backend}, confidence {pattern.confidence:.2f}"
             + (", DRAFT" if pattern.status == "draft" else "") + "]", "", "Symptom:", _indent(pattern.symptom), "",
             "Detect:"]
    for signal in pattern.detect:
        what = signal.get("fact") or ", ".join(signal.get("metrics") or []) or ""
        lines.append(_indent(f"rung {signal['rung']} ({signal['level']}"
                             + (f", {signal['detector']}" if signal.get("detector") else "")
                             + (f", {what}" if what else "") + f"): {' '.join(signal['signal'].split())}"))
    if pattern.veto:
        veto = pattern.veto
        what = "" if veto["rule"] == "none" else f" ({veto['rule']}, {veto.get('fact')})"
        lines.append(_indent(f"rung-3 veto{what}: {' '.join(veto['signal'].split())}"))
    lines += ["", _indent("Fix: " + pattern.fix["summary"].strip()
                          + ("  (mechanical rewrite available)" if pattern.mechanical else ""), 0),
              _indent(pattern.fix["how"].strip()), "", "  before:", _indent(pattern.fix["before"].rstrip(), 4),
              "  after:", _indent(pattern.fix["after"].rstrip(), 4)]
    return "\n".join(lines)


def _indent(text: str, spaces: int = 2, width: int = 100) -> str:
    """Indent, wrapping long prose lines (code lines are kept as they are)."""
    import textwrap

    out = []
    for line in text.splitlines():
        if len(line) + spaces > width and not line.startswith(" "):
            out.extend(textwrap.wrap(line, width=width, initial_indent=" " * spaces, subsequent_indent=" " * spaces))
        else:
            out.append(" " * spaces + line if line else "")
    return "\n".join(out)
