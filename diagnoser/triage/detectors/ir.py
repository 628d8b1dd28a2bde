"""IR-level detectors: rung-3 facts (`ladder.diagnoser.evidence.FACT_KINDS`) matched to catalog patterns.

Each reads the facts of one kind and keeps those that show the pattern; the finding cites the
fact (its IR excerpt and source line). Facts are what the compiler actually did, so these
findings carry more confidence than the source-level estimates of the same pattern.
"""
from __future__ import annotations

from typing import Iterable

from ladder.diagnoser.evidence import Fact, Finding

from ..context import TriageContext
from .common import Findings, fact_evidence


def kernel_name(label: str) -> str:
    """`add[n:i32%16]#2` -> `add`: facts label specializations, findings name the function."""
    return label.split("[", 1)[0].split("#", 1)[0]


def _facts(ctx: TriageContext, *kinds: str) -> Iterable[Fact]:
    return (fact for fact in ctx.facts if fact.kind in kinds and isinstance(fact.value, dict))


def argument_terms(label: str) -> tuple[str, ...]:
    """`k[n:i32%16,d:tensordesc<fp16[128, 64]>,BLOCK=64,num_warps=4]` -> `("n:i32%16",)`: the
    runtime-argument terms of a fact label (what a case's sizes and alignments specialise),
    without the constexprs and options an autotuner's configs differ in, nor the block shape of
    a TMA descriptor, which a config's pre-hook sets."""
    inside = label.split("[", 1)[1].rsplit("]", 1)[0] if "[" in label else ""
    terms, depth, start = [], 0, 0
    for at, char in enumerate(inside + ","):
        depth += (char in "<[") - (char in ">]")
        if char == "," and depth == 0:
            terms.append(inside[start:at].strip())
            start = at + 1
    return tuple(term for term in terms if ":" in term and not term.split(":", 1)[1].startswith("tensordesc"))


class IRFindings(Findings):
    """Findings from facts. For an autotuned kernel every config is compiled (one fact label per
    config and argument specialization); a pattern found in only some configs of one
    specialization is dropped, since the tuner can avoid it there. One found in every config of
    one specialization (a case whose misaligned rows no config vectorises) and in none of another
    (the aligned cases) is kept: no config avoids it for that case."""

    def __init__(self, ctx: TriageContext) -> None:
        super().__init__(rung=3)
        self.ctx = ctx
        self.labels: dict[tuple, set[str]] = {}

    def list(self) -> list[Finding]:
        compiled: dict[str, set[str]] = {}
        for fact in self.ctx.facts:
            compiled.setdefault(kernel_name(fact.kernel), set()).add(fact.kernel)
        kept = []
        for finding in super().list():
            kernel = self.ctx.source.kernels.get(finding.kernel or "")
            fired = self.labels.get((finding.pattern, finding.kernel, finding.line), set())
            autotuned = kernel is not None and kernel.autotune is not None
            if autotuned and _tuner_avoids(fired, compiled.get(finding.kernel, set())):
                continue
            kept.append(finding)
        return kept


def _tuner_avoids(fired: set[str], compiled: set[str]) -> bool:
    """Some argument specialization the pattern fired in also compiled a config it did not fire in."""
    fired_in = {argument_terms(label) for label in fired}
    return any(argument_terms(label) in fired_in for label in compiled - fired)


def _add(found: IRFindings, ctx: TriageContext, pattern: str, fact: Fact, title: str, confidence: float,
         detail: str, per_kernel: bool = False, also: Fact | None = None) -> None:
    """`per_kernel`: the fact is about the whole kernel (launch, occupancy, spills), not a line;
    the finding then carries no line and joins the source finding of the same pattern and kernel.
    `also`: a second fact the verdict rests on (the launch behind a block's verdict), cited after."""
    evidence = fact_evidence(fact)
    evidence["detail"] = detail
    name = kernel_name(fact.kernel)
    line = None if per_kernel else fact.line
    found.add(ctx, pattern, name, line, title, confidence, [evidence] + ([fact_evidence(also)] if also else []))
    found.labels.setdefault((pattern, name, line), set()).add(fact.kernel)


def _num_warps(ctx: TriageContext, label: str) -> int:
    for fact in ctx.facts:
        if fact.kernel == label and fact.kind == "resources" and isinstance(fact.value, dict):
            return int(fact.value.get("num_warps") or 4)
    return 4


def _source_reports(ctx: TriageContext, kernel: str) -> list:
    """The source walks of a kernel, one per analysed launch (empty without cases)."""
    return [a.report for a in ctx.analyses if a.kernel.name == kernel]


def _covers(item: object, line: int | None) -> bool:
    end = getattr(item, "end_line", None) or item.line
    return line is not None and item.line <= line <= end


def _no_vector_to_gain(ctx: TriageContext, kernel: str, line: int | None) -> bool:
    """The source walk knows the accesses on this line and none would gain from being wider: strided
    (nv.strided-inner-axis), a gather or broadcast, too small a share of the bytes, or in a
    kernel whose every launch is too small for access width to matter."""
    from .source.access import latency_bound, worth_vectorising

    if latency_bound(ctx, kernel):
        return True
    verdicts = [worth_vectorising(report, access) for report in _source_reports(ctx, kernel)
                for access in report.accesses if _covers(access, line)]
    return bool(verdicts) and not any(verdicts)


# A narrow compiled access where some case's mask cuts a vector: the source rung's padding finding
# (0.65 where the addresses are misaligned, 0.45 where only the mask limits) is then confirmed by
# what the compiler did, and the two merge one corroboration above the source's figure.
CONFIRMS_PADDING = 0.65


def detect_ir_access(ctx: TriageContext) -> list[Finding]:
    """nv.scalar-access: a global load/store that became 32-bit-or-narrower PTX instructions
    although each thread holds enough elements for a wider vector (one element per thread is
    nv.tiny-block), on an access the source walk does not show to have no vector to gain. Where
    some case masks it against a size that is not a multiple of the vector, no hint is true: the
    fact then confirms the source rung's padding finding (`CONFIRMS_PADDING`) instead of
    claiming, at the IR's usual confidence, a fix that does not exist."""
    from .source.access import genuine_tail

    found = IRFindings(ctx)
    for fact in _facts(ctx, "global_access"):
        value = fact.value
        bits = value.get("vector_bits")
        shape = value.get("tensor_shape") or []
        if not bits or value.get("via") not in (None, "ld.global", "st.global") or not shape:
            continue
        elements = max(value.get("elements") or 1, 1)
        element_bits = max(bits // elements, 8)
        cap = min(_numel(shape) // (32 * _num_warps(ctx, fact.kernel)), 128 // element_bits)
        if cap <= 1 or _no_vector_to_gain(ctx, kernel_name(fact.kernel), fact.line):
            continue
        if elements >= cap or bits > 32:
            continue
        compiled = f"{value.get('op')} of {shape} {value.get('dtype')} compiles to {bits}-bit instructions"
        if genuine_tail(ctx, kernel_name(fact.kernel), fact.line):
            _add(found, ctx, "nv.scalar-access", fact, "global accesses not vectorized", CONFIRMS_PADDING,
                 f"{compiled} in {fact.kernel}; some case's mask cuts a vector, so no hint is true there")
            continue
        _add(found, ctx, "nv.scalar-access", fact, "global accesses not vectorized", 0.9, compiled)
    return found.list()


def _numel(shape: list[int]) -> int:
    total = 1
    for size in shape:
        total *= size
    return total


def detect_ir_spill(ctx: TriageContext) -> list[Finding]:
    """nv.register-spill: local-memory spill stores/loads in the compiled kernel."""
    found = IRFindings(ctx)
    for fact in _facts(ctx, "spill"):
        value = fact.value
        stores, loads = value.get("spill_stores_bytes", 0) or 0, value.get("spill_loads_bytes", 0) or 0
        # A few bytes spilled once, outside any loop, cost nothing measurable.
        if value.get("in_loop") or stores + loads >= 64 or (value.get("local_bytes") or 0) >= 64:
            _add(found, ctx, "nv.register-spill", fact, "registers spill to local memory",
                 0.95 if value.get("in_loop") else 0.85,
                 f"{stores} bytes spilled, {loads} bytes reloaded"
                 + (" inside a loop" if value.get("in_loop") else ""), per_kernel=True)
    return found.list()


def _gemm_epilogue(ctx: TriageContext, kernel: str, line: int | None, value: dict) -> bool:
    """A conversion of the accumulator (MMA layout) for the store of a dot's result: once per
    output tile, as in every GEMM epilogue; a persistent kernel's tile loop does not make it hot."""
    if not str(value.get("src") or "").startswith("mma"):
        return False
    return any(a.op == "store" and a.from_dot and _covers(a, line)
               for report in _source_reports(ctx, kernel) for a in report.accesses)


def detect_ir_layout(ctx: TriageContext) -> list[Finding]:
    """nv.hot-layout-conversion: a convert_layout through shared memory inside a loop, other than
    the accumulator's conversion for its store (a GEMM epilogue, once per tile)."""
    found = IRFindings(ctx)
    for fact in _facts(ctx, "convert_layout"):
        value = fact.value
        if _gemm_epilogue(ctx, kernel_name(fact.kernel), fact.line, value):
            continue
        if value.get("in_loop") and value.get("through_shared"):
            _add(found, ctx, "nv.hot-layout-conversion", fact, "layout conversion on a hot path", 0.85,
                 f"ttg.convert_layout {value.get('src')} -> {value.get('dst')} of {value.get('shape')} "
                 "goes through shared memory every iteration")
    return found.list()


def detect_ir_dot(ctx: TriageContext) -> list[Finding]:
    """nv.mma-v2-on-hopper (mma.sync on sm_90) and nv.no-tensor-core (a dot lowered to FMA)."""
    from .source.matmul import rows_below_wgmma

    found = IRFindings(ctx)
    for fact in _facts(ctx, "dot_lowering"):
        kind = fact.value.get("kind")
        if kind == "mma_sync" and rows_below_wgmma(ctx, kernel_name(fact.kernel)):
            continue  # fewer than 64 rows in every launch: mma.sync is the right instruction
        if kind == "mma_sync":
            _add(found, ctx, "nv.mma-v2-on-hopper", fact, "tl.dot uses mma.sync instead of wgmma", 0.95,
                 f"tt.dot lowered to MMA v{fact.value.get('mma_version')} (mma.sync/HMMA), not wgmma")
        elif kind == "fma":
            _add(found, ctx, "nv.no-tensor-core", fact, "matrix product on CUDA cores", 0.95,
                 f"tt.dot lowered to FMA (input_precision={fact.value.get('input_precision')})")
    return found.list()


def detect_ir_pipelining(ctx: TriageContext) -> list[Finding]:
    """nv.unpipelined-loop: a loop feeding a dot whose loads stayed synchronous, or a pipelined
    one in which a dot operand (by the source walk) is still loaded with ld.global every
    iteration: that operand's latency is exposed each K step."""
    found = IRFindings(ctx)
    pipelined = set()
    for fact in _facts(ctx, "pipelining"):
        value = fact.value
        if value.get("feeds_dot") and not value.get("pipelined"):
            _add(found, ctx, "nv.unpipelined-loop", fact, "dot loop without async copies", 0.9,
                 f"loop feeding tt.dot has {value.get('sync_loads')} synchronous loads and no cp.async/TMA "
                 f"(num_stages={value.get('requested_stages')})")
        elif value.get("feeds_dot") and value.get("sync_loads"):
            pipelined.add(fact.kernel)
    for fact in _facts(ctx, "global_access"):
        value = fact.value
        if fact.kernel not in pipelined or value.get("op") != "load" or value.get("via") != "ld.global" \
                or not value.get("in_loop"):
            continue
        operands = [a for report in _source_reports(ctx, kernel_name(fact.kernel)) for a in report.accesses
                    if a.op == "load" and a.dot_operand and a.loops and _covers(a, fact.line)]
        if operands:
            _add(found, ctx, "nv.unpipelined-loop", fact, "dot loop without async copies", 0.8,
                 f"the K loop is pipelined, but this dot operand ({value.get('tensor_shape')} {value.get('dtype')}) "
                 "is still loaded with ld.global every iteration, not cp.async/TMA")
    return found.list()


def detect_ir_occupancy(ctx: TriageContext) -> list[Finding]:
    """nv.smem-limits-occupancy: shared memory is the occupancy limiter, or too large to launch."""
    found = IRFindings(ctx)
    for fact in _facts(ctx, "occupancy"):
        value = fact.value
        if value.get("limiter") != "shared_memory":
            continue
        programs = value.get("programs_per_sm")
        warps = value.get("warps_per_sm") or 0
        if programs == 0:
            _add(found, ctx, "nv.smem-limits-occupancy", fact, "shared memory limits or prevents residency", 0.95,
                 "the kernel needs more shared memory than one block may have: it cannot launch", per_kernel=True)
        elif warps < 8:
            _add(found, ctx, "nv.smem-limits-occupancy", fact, "shared memory limits or prevents residency", 0.8,
                 f"shared memory allows {programs} program(s) per SM: {warps} warps resident", per_kernel=True)
    return found.list()


def detect_ir_reductions(ctx: TriageContext) -> list[Finding]:
    """nv.loop-carried-reduction: a cross-warp reduction inside a loop, unless the source walk
    shows every reduction on its line to be consumed within the iteration (see the source rule),
    or to reduce a tl.dot result of the iteration: that tile is in the MMA layout, whose warps
    split the reduced axis only when the dot's tiling does (mma.sync on a BLOCK_M below 64), so
    the fix is the dot's tile (nv.mma-v2-on-hopper, the config), not a reduction moved out."""
    found = IRFindings(ctx)
    for fact in _facts(ctx, "reduction_in_loop"):
        reductions = [r for report in _source_reports(ctx, kernel_name(fact.kernel))
                      for r in report.reductions if _covers(r, fact.line)]
        if reductions and all(r.used_in_loop or r.from_dot for r in reductions):
            continue
        if fact.value.get("cross_warp"):
            _add(found, ctx, "nv.loop-carried-reduction", fact, "cross-warp reduction every iteration", 0.85,
                 f"tt.reduce ({fact.value.get('op')}) over an axis spread across "
                 f"{fact.value.get('warps_along_axis')} warps, inside a loop")
    return found.list()


def detect_ir_index(ctx: TriageContext) -> list[Finding]:
    """nv.index-div-mod and nv.int64-index from the integer ops the kernel compiled to.

    Where the source walk knows the kernel, it says which of them are the author's: a division
    outside any loop counts only where it is per-element work on the bulk of the elements (not a
    tile's row indices, computed once per program), and 64-bit arithmetic only on lines where the
    author's own index expressions are 64-bit (not what the compiler generates to lower block
    pointers or tensor descriptors)."""
    from .source.access import INT64_WASTE, hot_divmods, index_int64_ops

    found = IRFindings(ctx)
    for fact in _facts(ctx, "divrem_in_loop"):
        value = fact.value
        if not value.get("per_element") or value.get("power_of_two"):
            continue
        reports = _source_reports(ctx, kernel_name(fact.kernel))
        if not value.get("in_loop") and reports and \
                not any(d.line == fact.line for report in reports for d in hot_divmods(report)):
            continue
        _add(found, ctx, "nv.index-div-mod", fact, "integer division in per-element index math", 0.8,
             f"per-element {value.get('op')} on {value.get('dtype')}" + (" inside a loop" if value.get("in_loop") else ""))
    for fact in _facts(ctx, "int64_index"):
        value = fact.value
        if not value.get("per_element") or (value.get("count") or 0) < 2:
            continue
        reports = _source_reports(ctx, kernel_name(fact.kernel))
        if reports and not any(op.line == fact.line for report in reports for op in index_int64_ops(report)):
            continue
        _add(found, ctx, "nv.int64-index", fact, INT64_WASTE, 0.6,
             f"{value.get('count')} 64-bit per-element integer ops ({', '.join(value.get('ops') or [])})")
    return found.list()


def detect_ir_atomics(ctx: TriageContext) -> list[Finding]:
    """nv.atomic-contention: atomics issued inside a loop."""
    found = IRFindings(ctx)
    for fact in _facts(ctx, "atomic"):
        value = fact.value
        if value.get("in_loop"):
            _add(found, ctx, "nv.atomic-contention", fact, "contended atomics", 0.75,
                 f"{value.get('op')} (sem={value.get('sem')}) inside a loop")
    return found.list()


def detect_ir_launch(ctx: TriageContext) -> list[Finding]:
    """nv.small-grid / npu.grid-exceeds-cores from the launches rung 3 recorded."""
    found = IRFindings(ctx)
    for fact in _facts(ctx, "launch"):
        value = fact.value
        programs, cores = value.get("programs") or 0, value.get("sm_count") or 0
        if not cores:
            continue
        if ctx.target == "ascend":
            limit = value.get("max_grid") or 65535
            if programs > limit:
                _add(found, ctx, "npu.grid-exceeds-cores", fact, "grid larger than the NPU's cores", 0.95,
                     f"{programs} programs exceed the coreDim limit {limit}", per_kernel=True)
        elif programs < cores // 2:
            # Corroboration only: whether the launch moves enough data to matter is rung 1's call.
            _add(found, ctx, "nv.small-grid", fact, "too few programs to fill the GPU", 0.45,
                 f"{programs} programs for {cores} SMs (case {value.get('case')})", per_kernel=True)
    return found.list()


def detect_ir_ascend(ctx: TriageContext) -> list[Finding]:
    """Triton-Ascend ttadapter facts: scalarised discrete access, fills before masked copies,
    int64/int compare fallbacks, unified-buffer overflow, padded tail axes."""
    found = IRFindings(ctx)
    for fact in _facts(ctx, "discrete_access"):
        _add(found, ctx, "npu.discrete-access", fact, "discrete access lowered to scalar loops", 0.9,
             f"{fact.value.get('op')} lowered to a scalar loop of {fact.value.get('elements')} iterations")
    for fact in _facts(ctx, "masked_load_fill"):
        _add(found, ctx, "npu.masked-load-fill", fact, "masked load fills before copying", 0.9,
             f"linalg.fill with {fact.value.get('fill')} before the masked copy")
    for fact in _facts(ctx, "int64_arith"):
        _add(found, ctx, "npu.int64-scalar-fallback", fact, "int64 arithmetic falls back to scalar", 0.9,
             f"{fact.value.get('count')} int64 vector {fact.value.get('op')} op(s)")
    for fact in _facts(ctx, "int_compare"):
        reports = _source_reports(ctx, kernel_name(fact.kernel))
        if reports and not any(w.line == fact.line for report in reports for w in report.wheres):
            continue  # a mask or loop bound, not the condition of a tl.where
        _add(found, ctx, "npu.where-condition-dtype", fact, "integer comparison on the vector unit", 0.6,
             f"{fact.value.get('dtype')} vector compare ({fact.value.get('predicate')}) runs as scalar code")
    for fact in _facts(ctx, "ub_usage"):
        if fact.value.get("fits") is False:
            # Every buffer of the IR counted live at once is an upper bound (the compiler reuses
            # some): an estimate within 10% of the limit only corroborates the source rung.
            need = (fact.value.get("bytes") or 0) * (fact.value.get("multibuffer_factor") or 1)
            limit = fact.value.get("limit") or 0
            _add(found, ctx, "npu.ub-overflow", fact, "working set exceeds the unified buffer",
                 0.9 if not limit or need > 1.1 * limit else 0.45,
                 f"{fact.value.get('bytes')} bytes x{fact.value.get('multibuffer_factor')} against {fact.value.get('limit')}")
    for fact in _facts(ctx, "unaligned_tail"):
        _add(found, ctx, "npu.unaligned-tail-axis", fact, "tail axis not aligned", 0.9,
             f"tail axis {fact.value.get('tail_bytes')} bytes padded to {fact.value.get('padded_bytes')}")
    return found.list()


def detect_ir_tile_fit(ctx: TriageContext) -> list[Finding]:
    """nv.tile-misfit from the compiled kernel: the K-loop dot became wgmma (its instrShape says
    which), and the programs resident per SM come from the compiled registers and shared memory;
    the shape is the source walk's. Launches the autotuner chooses among are left to the source
    rule, which judges every config; kernels nv.hardcoded-config reports are left to it, and
    chains of dots (attention) are not one GEMM (`launch_gemm`)."""
    from .source.tile_fit import fixed_across_shapes, launch_gemm, misfit

    found = IRFindings(ctx)
    fixed = fixed_across_shapes(ctx)
    for fact in _facts(ctx, "dot_lowering"):
        kernel = kernel_name(fact.kernel)
        if fact.value.get("kind") != "wgmma" or not fact.value.get("in_loop") or kernel in fixed:
            continue
        resident = next((f.value.get("programs_per_sm") for f in _facts(ctx, "occupancy") if f.kernel == fact.kernel), None)
        for analysis in ctx.analyses:
            if analysis.kernel.name != kernel or analysis.launch.variants > 1:
                continue
            launch = launch_gemm(ctx, analysis)
            if launch is None or launch[2].line != fact.line:
                continue
            tile, gemm, _ = launch
            verdict = misfit(ctx, tile, gemm, resident)
            if verdict is not None:
                current, best = verdict
                shape = fact.value.get("instr_shape") or []
                _add(found, ctx, "nv.tile-misfit", fact, "GEMM tile does not fit its shape", 0.8,
                     "compiled to wgmma" + (f" (N={shape[1]} per instruction)" if len(shape) > 1 else "")
                     + f" with {current.resident} program(s) resident per SM: on {gemm.m}x{gemm.n}x{gemm.k} the "
                     f"tile reaches about {current.reach:.0%} of the peak, {best.tile.text()} about {best.reach:.0%}")
    return found.list()


def detect_ir_tiny_block(ctx: TriageContext) -> list[Finding]:
    """nv.tiny-block from the launches rung 3 recorded and the blocks the compiler produced: the
    real grid (in script mode, the script's own launches), the compiled tensor of each global
    access and the warps, so no problem file or resolvable literal is needed. Same thresholds as
    the source rule: under one 16-byte vector per thread in the largest block, under 8 KiB per
    program, more than 2 x SM-count programs, and the programs resident per SM (compiled
    occupancy) keeping under 24 KiB of loads in flight. Not for a kernel with a dot or with an
    access in a loop (a program's work is then the loop's), nor TMA / cp.async copies. Where the
    source walk analysed the kernel with its cases, its verdict stands (it sees strides and
    interleaved lanes the facts do not): the finding then only joins the source finding it confirms."""
    from ladder.diagnoser.ir.mlir import element_bits

    from .source.tiles import (
        IN_FLIGHT_PER_SM,
        MAX_PROGRAMS_PER_SM,
        MAX_WARPS_PER_SM,
        detect_block_sizes,
    )

    walked = {a.kernel.name for a in ctx.analyses}
    confirmed = {(f.kernel, f.line) for f in detect_block_sizes(ctx) if f.pattern == "nv.tiny-block"} if walked else set()
    with_dot = {fact.kernel for fact in _facts(ctx, "dot_lowering")}
    found = IRFindings(ctx)
    for label in sorted({fact.kernel for fact in _facts(ctx, "launch")} - with_dot):
        launches = [f for f in _facts(ctx, "launch") if f.kernel == label and f.value.get("sm_count")]
        accesses = [f for f in _facts(ctx, "global_access") if f.kernel == label]
        blocks = [(f, _numel(f.value.get("tensor_shape") or [1]), element_bits(f.value.get("dtype") or "") or 32)
                  for f in accesses]
        if not launches or not blocks or any(f.value.get("in_loop") or f.value.get("via") not in (None, "ld.global", "st.global")
                                             for f in accesses):
            continue
        launch = max(launches, key=lambda f: f.value.get("programs") or 0)
        programs, sm_count = launch.value.get("programs") or 0, launch.value["sm_count"]
        warps = _num_warps(ctx, label)
        biggest, numel, bits = max(blocks, key=lambda block: block[1])
        per_thread = numel / (32 * warps)
        program_bytes = sum(n * b // 8 for _, n, b in blocks)
        resident = launch.value.get("programs_per_sm") or min(MAX_PROGRAMS_PER_SM, MAX_WARPS_PER_SM // warps)
        in_flight = resident * sum(n * b // 8 for f, n, b in blocks if f.value.get("op") == "load")
        kernel = kernel_name(label)
        if kernel in walked and (kernel, biggest.line) not in confirmed:
            continue
        if per_thread < max(128 // bits, 1) and program_bytes < 8192 and programs > 2 * sm_count \
                and in_flight < IN_FLIGHT_PER_SM:
            _add(found, ctx, "nv.tiny-block", biggest, "too little work per program", 0.85,
                 f"{programs} programs of {warps} warps each move {program_bytes} bytes; the compiled block "
                 f"{biggest.value.get('tensor_shape')} gives {per_thread:g} element(s) per thread, and the "
                 f"{resident} programs an SM holds keep {in_flight} bytes of loads in flight",
                 also=launch)
    return found.list()
