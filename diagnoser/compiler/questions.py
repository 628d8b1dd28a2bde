"""Rung 4's questions: the IR facts and findings that remain unexplained, as retrieval queries.

Each question carries what a retrieved chunk must show to count as an answer: the passes that
make the decision behind the fact (matched against the chunk's `pass` metadata) and the names the
code uses for the ops and concepts involved (matched against its text, symbol and path). A chunk
with neither is about something else, however similar its words.

Only *noteworthy* facts are asked about: the ones that look like a cause of slowness on the
target (a scalar access, a spill, a layout conversion in a loop, a dot that is not a wgmma on
Hopper, an unpipelined K-loop, ...). Facts already cited by a catalogued finding come last: the
catalog names the pattern, and the compiler code explains it only if there is room.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field

from ladder.diagnoser.evidence import fact_of


# Method names every pass or pattern has: they say nothing about which code is meant.
GENERIC_NAMES = {"runOnOperation", "matchAndRewrite", "__init__", "__call__", "rewrite", "build"}


@dataclass
class Question:
    query: str
    describe: str  # what this kernel's case is, in words, for the statement
    passes: tuple[str, ...] = ()
    terms: tuple[str, ...] = ()
    about: dict = field(default_factory=dict)  # {kind: fact|finding, kernel, file, line, fact_kind|pattern}
    evidence: list[dict] = field(default_factory=list)
    pattern: str | None = None
    paths: tuple[str, ...] = ()  # files the catalog names for this pattern


def _where(fact: dict) -> str:
    if fact.get("file") and fact.get("line"):
        return f" at {fact['file'].rsplit('/', 1)[-1]}:{fact['line']}"
    return ""


def _kernel(fact: dict) -> str:
    return f"`{fact['kernel'].split('[', 1)[0]}`" if fact.get("kernel") else "the kernel"


# kind -> (is it noteworthy?, query, describe, passes, terms)
def _global_access(v, f, hopper):
    shape = v.get("tensor_shape")
    if (v.get("vector_bits") or 128) >= 128 or (shape is not None and math.prod(shape) <= 1):
        return None  # already 128-bit wide, or a single scalar by design
    return ("load store vectorization vector width contiguity divisibility alignment AxisInfo",
            f"the {v.get('op', 'access')}{_where(f)} in {_kernel(f)} moves {v.get('vector_bits')} bits per"
            f" instruction{' (' + v['via'] + ')' if v.get('via') else ''}",
            ("coalesce",), ("AxisInfo", "contiguity", "divisibility", "getVec", "vectorSize", "alignment",
                            "vector width", "vectoriz"))


def _spill(v, f, hopper):
    if not (v.get("spill_stores_bytes") or v.get("spill_loads_bytes") or v.get("local_bytes")):
        return None
    return ("register pressure spills to local memory maxnreg ptxas num_warps registers per thread",
            f"{_kernel(f)} spills {v.get('spill_stores_bytes') or v.get('local_bytes')} bytes to local memory{_where(f)}",
            ("ptxas", "allocate"), ("maxnreg", "spill", "ptxas", "num_warps", "registers"))


def _convert_layout(v, f, hopper):
    if not (v.get("in_loop") or v.get("through_shared")):
        return None
    where = "inside a loop" if v.get("in_loop") else "through shared memory"
    return ("convert_layout inside loop remove layout conversions rematerialize hoist out of loop",
            f"a layout conversion {v.get('src', '?')} -> {v.get('dst', '?')}{_where(f)} runs {where}",
            ("remove-layout-conversions",), ("ConvertLayoutOp", "convert_layout", "rematerializ", "hoist"))


def _dot_lowering(v, f, hopper):
    kind = v.get("kind")
    if kind == "wgmma" or (kind == "mma_sync" and not hopper):
        return None
    if kind == "fma":
        return ("tt.dot lowered to FMA instead of tensor cores mma version input precision accelerate matmul",
                f"the tt.dot{_where(f)} lowers to FMA (operands {v.get('operand_dtype')}, precision {v.get('input_precision')})",
                ("accelerate-matmul",), ("DotOp", "FMA", "mmaVersion", "supportMMA", "inputPrecision"))
    return ("wgmma MMAv3 requirements Hopper warps per CTA instruction shape fall back to mma v2 accelerate matmul",
            f"the tt.dot{_where(f)} lowers to {kind} (MMA v{v.get('mma_version')}), not wgmma, on Hopper",
            ("accelerate-matmul",), ("wgmma", "MMAv3", "mmaV3", "getMMAVersionSafe", "supportMMA", "versionMajor"))


def _pipelining(v, f, hopper):
    if v.get("pipelined") or v.get("async_copies") or v.get("tma") or v.get("feeds_dot") is False:
        return None  # pipelined, or a loop with no tt.dot (the pipeliner only schedules those)
    return ("software pipelining K loop num_stages async copy cp.async schedule loop latencies",
            f"the loop feeding tl.dot{_where(f)} is not pipelined (num_stages={v.get('requested_stages')}, no async copies)",
            ("pipeline", "schedule-loops", "assign-latencies"), ("num_stages", "numStages", "AsyncCopy", "pipelin", "latenc"))


def _barrier(v, f, hopper):
    if not v.get("count"):
        return None
    return ("barrier insertion shared memory membar analysis inside loop",
            f"{v['count']} CTA barrier(s) sit inside a loop{_where(f)}",
            ("membar",), ("Membar", "barrier", "bar.sync"))


def _occupancy(v, f, hopper):
    if (v.get("occupancy") or 1) >= 0.25:
        return None
    limiter = v.get("limiter") or "resources"
    describe = (f"{_kernel(f)} keeps {v.get('warps_per_sm')} warps per SM resident ({v['occupancy']:.0%} occupancy,"
                f" limited by {limiter})")
    if limiter.startswith("shared"):
        return ("occupancy limited by shared memory per program allocation num_stages buffers", describe,
                ("allocate-shared-memory",), ("Allocation", "sharedMem", "numStages", "shared memory"))
    if limiter.startswith("register"):
        # ptxas allocates registers; Triton's part is the maxnreg option it hands to ptxas (make_cubin).
        return ("ptxas make_cubin maxnreg maxrregcount registers per thread occupancy", describe,
                (), ("maxrregcount", "maxnreg", "ptxas", "n_regs"))
    return (f"occupancy limited by {limiter} num_warps num_ctas threads per block", describe,
            (), ("num_warps", "numWarps", "threadsPerWarp"))


def _int64(v, f, hopper):
    if not v.get("in_loop"):
        return None
    return ("64-bit integer index arithmetic pointer offsets i64 addptr",
            f"index arithmetic{_where(f)} is done in 64-bit integers inside a loop",
            (), ("i64", "int64", "addptr", "AddPtrOp"))


def _divrem(v, f, hopper):
    return ("integer division remainder in index computation divsi remsi lowering",
            f"an integer {v.get('op', 'div/rem')}{_where(f)} runs {'in a loop' if v.get('in_loop') else 'per element'}",
            (), ("DivSIOp", "RemSIOp", "divsi", "remsi", "div.s32", "rem.s32"))


def _atomic(v, f, hopper):
    if not v.get("in_loop") and v.get("sem") not in ("acq_rel", "seq_cst"):
        return None
    return ("atomic rmw lowering memory semantics scope acq_rel relaxed",
            f"an atomic {v.get('op')} ({v.get('sem')}, {v.get('scope')}){_where(f)}",
            (), ("AtomicRMW", "atomic", "MemSemantic", "scope"))


def _reduction(v, f, hopper):
    if not v.get("cross_warp"):
        return None
    return ("reduction across warps shared memory barrier ReduceOp lowering inside loop",
            f"a cross-warp {v.get('op', 'reduction')}{_where(f)} runs inside a loop",
            (), ("ReduceOp", "warp", "shared", "accumulate"))


def _discrete(v, f, hopper):
    return ("discrete memory access lowered to scalar loop TritonToUnstructure gather",
            f"the access{_where(f)} is lowered to a scalar loop", ("unstructure",), ("Unstructure", "discrete", "gather"))


def _masked_fill(v, f, hopper):
    return ("masked load other value fill before copy mask analysis",
            f"the masked load{_where(f)} fills its default value before the copy",
            ("mask", "structured"), ("fill", "mask", "other", "MaskState"))


def _int64_arith(v, f, hopper):
    return ("int64 arithmetic compare scalar fallback vector unsupported",
            f"64-bit arithmetic{_where(f)} falls back to scalar code", (), ("i64", "int64", "scalar"))


def _ub_usage(v, f, hopper):
    if not v.get("limit") or (v.get("bytes") or 0) <= v["limit"] / 2:
        return None
    return ("unified buffer overflow multibuffer on-chip buffer size",
            f"{_kernel(f)} uses {v['bytes']} bytes of the {v['limit']}-byte unified buffer",
            (), ("ub", "multibuffer", "UB", "buffer"))


ASK = {
    "global_access": _global_access, "spill": _spill, "convert_layout": _convert_layout,
    "dot_lowering": _dot_lowering, "pipelining": _pipelining, "barrier_in_loop": _barrier,
    "occupancy": _occupancy, "int64_index": _int64, "divrem_in_loop": _divrem, "atomic": _atomic,
    "reduction_in_loop": _reduction, "discrete_access": _discrete, "masked_load_fill": _masked_fill,
    "int64_arith": _int64_arith, "ub_usage": _ub_usage,
}


def from_fact(fact: dict, target: str = "sm90") -> Question | None:
    """The question a fact raises, or None when it is not a sign of slowness."""
    ask = ASK.get(fact.get("kind"))
    value = fact.get("value") if isinstance(fact.get("value"), dict) else {}
    asked = ask(value, fact, target.startswith("sm9")) if ask else None
    if asked is None:
        return None
    topic, describe, passes, terms = asked
    op_terms = tuple(_ops_in(fact.get("excerpt", "")))
    about = {"kind": "fact", "fact_kind": fact["kind"], "kernel": fact.get("kernel"), "file": fact.get("file"),
             "line": fact.get("line")}
    parts = {"topic": topic, "ir_ops": " ".join(op_terms), "passes": " ".join(passes)}
    return Question(query=" ".join(parts[name] for name in QUERY_PARTS if parts[name]).strip(), describe=describe,
                    passes=passes, terms=terms + op_terms, about=about, evidence=[{"type": "fact", **fact}])


# What a fact's query is made of, in order: the topic in words (what the code that decides it talks
# about), the IR op names quoted in the fact's excerpt, and the names of the passes that decide it
# (matched by the index against the pass each chunk implements and the files it names).
# bench/index/rung4_queries.py measures what each part adds.
QUERY_PARTS = ("topic", "ir_ops", "passes")


def _ops_in(excerpt: str) -> list[str]:
    """IR op names quoted in an excerpt (`ttg.convert_layout`, `tt.dot`, `ld.global.v4`)."""
    return sorted(set(re.findall(r"\b(?:tt|ttg|ttng|scf|arith|nvgpu|nvvm|hivm|linalg)\.[a-z_]+\b", excerpt)))


def from_finding(finding: dict, compiler_refs: list[dict]) -> Question:
    """A finding's question: its title plus the compiler code its catalog entry names
    (`compiler` refs: path, symbol, why), whose files and symbols a chunk must match."""
    symbols = tuple(dict.fromkeys(part for ref in compiler_refs if ref.get("symbol")
                                  for part in re.split(r"::|\.", ref["symbol"].split()[0])
                                  if len(part) > 3 and part not in GENERIC_NAMES))
    stems = tuple(ref["path"].rsplit("/", 1)[-1].split(".")[0] for ref in compiler_refs)
    why = " ".join(ref.get("why", "") for ref in compiler_refs)
    where = f" at {finding['file'].rsplit('/', 1)[-1]}:{finding['line']}" if finding.get("file") and finding.get("line") else ""
    about = {"kind": "finding", "pattern": finding.get("pattern"), "kernel": finding.get("kernel"),
             "file": finding.get("file"), "line": finding.get("line")}
    return Question(query=" ".join([finding.get("title", ""), *symbols, why]).strip(),
                    describe=f"{finding.get('pattern') or 'an uncatalogued finding'}{where}: {finding.get('title', '')}",
                    terms=symbols + stems, about=about, pattern=finding.get("pattern"),
                    paths=tuple(ref["path"] for ref in compiler_refs),
                    evidence=[{"type": "fact", **fact_of(e)} for e in finding.get("evidence", []) if e.get("type") == "fact"])


# What makes two facts of a kind the same question (everything else is detail of one instance).
SIGNATURE = {
    "global_access": ("vector_bits",), "convert_layout": ("src", "dst", "in_loop"),
    "dot_lowering": ("kind", "mma_version"), "pipelining": ("feeds_dot", "pipelined"),
    "spill": (), "occupancy": ("limiter",), "barrier_in_loop": (), "int64_index": ("in_loop",),
    "divrem_in_loop": ("op",), "atomic": ("op", "sem"), "reduction_in_loop": ("op",),
}


def _group(fact: dict) -> tuple:
    """Facts one question answers together: same kind and signature (a load and a store of the same
    width, say), same function whatever its specialization."""
    value = fact.get("value") if isinstance(fact.get("value"), dict) else {"value": fact.get("value")}
    keys = SIGNATURE.get(fact.get("kind"), tuple(k for k in value if k not in ("op", "via")))
    signature = {k: value.get(k) for k in keys}
    base = (fact.get("kernel") or "").split("[", 1)[0]
    return fact.get("kind"), json.dumps(signature, sort_keys=True, default=str), base


def _key(fact: dict) -> str:
    return json.dumps({k: fact.get(k) for k in ("kernel", "kind", "file", "line", "value")}, sort_keys=True, default=str)


def questions(facts: list[dict], findings: list[dict], catalog: dict[str, list[dict]] | None = None,
              target: str = "sm90", limit: int = 6) -> list[Question]:
    """The questions rung 4 asks, most useful first, one per distinct (kind, value, kernel).

    Order: noteworthy facts no catalogued finding cites; uncatalogued findings; findings whose
    catalog entry names compiler code; then facts the catalog already covers.
    """
    catalog = catalog or {}
    covering = {_key(fact_of(e)): f["pattern"] for f in findings if f.get("pattern")
                for e in f.get("evidence", []) if e.get("type") == "fact"}
    groups: dict[tuple, list[dict]] = {}
    for fact in facts:
        if from_fact(fact, target) is None:
            continue
        groups.setdefault(_group(fact), []).append(fact)
    fresh, known = [], []
    for group in groups.values():
        question = from_fact(group[0], target)
        lines = sorted({f["line"] for f in group[1:] if f.get("line") and f.get("line") != group[0].get("line")})
        if lines:
            question.describe += f" (likewise at line{'s' if len(lines) > 1 else ''} {', '.join(map(str, lines))})"
        question.evidence = [{"type": "fact", **f} for f in group]
        patterns = {covering.get(_key(f)) for f in group}
        question.pattern = next(iter(patterns)) if len(patterns) == 1 else None
        (known if None not in patterns else fresh).append(question)
    uncatalogued = [from_finding(f, []) for f in findings if not f.get("pattern") and f.get("rung", 0) < 4]
    first_of_pattern = {}
    for finding in findings:
        if catalog.get(finding.get("pattern")):
            first_of_pattern.setdefault(finding["pattern"], finding)
    catalogued = [from_finding(f, catalog[p]) for p, f in first_of_pattern.items()]
    return (fresh + uncatalogued + catalogued + known)[:limit]
