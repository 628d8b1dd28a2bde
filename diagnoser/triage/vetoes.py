"""IR vetoes: rung-3 facts that contradict a rung-1 finding, one named rule per contradiction.

A source-level finding predicts what the compiler will do; where the facts show what it did and
that contradicts the prediction, the facts win and the finding is vetoed with the reason (and the
facts) saying why. Which rule applies to which pattern is the catalog's data: each entry's `veto`
names its rule (or `none`, with why nothing in the IR can contradict it), so `ladder kb check`
sees every pattern's decision in one place and this module holds only the rules.

A rule returns a `Veto` or None. Rules about a kernel as a whole (spills, occupancy, grid) veto
only when every compiled specialization of the kernel agrees (an autotuned kernel compiles one per
config, a kernel specialized per case one per case); rules about a line need facts on that line.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from ladder.diagnoser.evidence import Fact, Finding

from .context import TriageContext
from .detectors.common import fact_evidence
from .detectors.ir import kernel_name

NO_VETO = "none"


@dataclass
class Veto:
    reason: str
    facts: list[Fact] = field(default_factory=list)

    def evidence(self) -> list[dict]:
        return [fact_evidence(fact) for fact in self.facts]


def _compiled(ctx: TriageContext, kernel: str, *kinds: str) -> list[Fact]:
    return [fact for fact in ctx.facts if kernel_name(fact.kernel) == kernel and fact.kind in kinds
            and isinstance(fact.value, dict)]


def _line_range(finding: Finding) -> tuple[int, int]:
    ends = [e.get("end_line") for e in finding.evidence if e.get("type") == "source" and e.get("end_line")]
    return finding.line, max([finding.line, *ends])


def _on_lines(facts: Iterable[Fact], finding: Finding) -> list[Fact]:
    first, last = _line_range(finding)
    return [fact for fact in facts if fact.line is not None and first <= fact.line <= last]


def _specializations(ctx: TriageContext, kernel: str) -> set[str]:
    return {fact.kernel for fact in ctx.facts if kernel_name(fact.kernel) == kernel}


def _every_specialization(ctx: TriageContext, kernel: str, facts: list[Fact]) -> bool:
    """The facts cover every compiled specialization of the kernel (one fact or more each)."""
    return bool(facts) and {fact.kernel for fact in facts} >= _specializations(ctx, kernel)


# ----------------------------------------------------------------------------------------- rules

def narrow_access(ctx: TriageContext, finding: Finding) -> Veto | None:
    """Every instruction the access became moves 64 bits or more: it is vectorised and (being
    vectorised) contiguous along the threads."""
    facts = [fact for fact in _on_lines(_compiled(ctx, finding.kernel or "", "global_access"), finding)
             if fact.value.get("via") in (None, "ld.global", "st.global") and fact.value.get("vector_bits")]
    widths = [fact.value["vector_bits"] for fact in facts]
    if widths and min(widths) >= 64:
        return Veto(f"the compiled accesses on line {finding.line} move {min(widths)} bits or more per instruction",
                    facts[:2])
    return None


def no_shared_conversion(ctx: TriageContext, finding: Finding) -> Veto | None:
    """The compiled kernel converts no layout through shared memory (inside a loop, for a finding
    about a loop)."""
    kernel = finding.kernel or ""
    if not _specializations(ctx, kernel):
        return None
    in_loop = any(e.get("in_loop") for e in finding.evidence if e.get("type") == "source")
    converts = [fact for fact in _compiled(ctx, kernel, "convert_layout") if fact.value.get("through_shared")
                and (fact.value.get("in_loop") or not in_loop)]
    if converts:
        return None
    return Veto("the compiled kernel converts no layout through shared memory" + (" inside a loop" if in_loop else ""))


def _spilled_bytes(fact: Fact) -> int:
    return (fact.value.get("spill_stores_bytes") or 0) + (fact.value.get("spill_loads_bytes") or 0)


def no_spills(ctx: TriageContext, finding: Finding) -> Veto | None:
    """ptxas reports 0 bytes spilled (stores and loads) and no local memory for every compiled
    specialization of the kernel: its registers fit."""
    kernel = finding.kernel or ""
    resources = _compiled(ctx, kernel, "resources")
    if not _every_specialization(ctx, kernel, resources) or _compiled(ctx, kernel, "spill"):
        return None
    if any(_spilled_bytes(fact) or fact.value.get("local_bytes") for fact in resources):
        return None
    registers = sorted({fact.value.get("registers") for fact in resources if fact.value.get("registers")})
    shown = f" ({'-'.join(map(str, registers[::max(len(registers) - 1, 1)]))} registers per thread)" if registers else ""
    return Veto(f"ptxas spills 0 bytes in every compiled specialization{shown}", resources[:2])


# Resident warps per SM from which a block held in registers costs no latency hiding worth a
# rewrite: a quarter of an SM's 64 (two 8-warp programs), with nothing spilled.
RESIDENT_WARPS = 16


def block_fits_registers(ctx: TriageContext, finding: Finding) -> Veto | None:
    """No spills in any specialization, and registers leave at least `RESIDENT_WARPS` warps
    resident per SM in each: the large block is held without the costs the pattern is about."""
    spills = no_spills(ctx, finding)
    occupancy = _compiled(ctx, finding.kernel or "", "occupancy")
    if spills is None or not _every_specialization(ctx, finding.kernel or "", occupancy):
        return None
    fewest = min(fact.value.get("warps_per_sm") or 0 for fact in occupancy)
    if fewest < RESIDENT_WARPS:
        return None
    return Veto(f"{spills.reason}, and {fewest} or more warps stay resident per SM", spills.facts + occupancy[:1])


def thread_holds_a_vector(ctx: TriageContext, finding: Finding) -> Veto | None:
    """The compiled block on the line gives every thread at least one 16-byte vector (the tensor's
    elements over 32 x num_warps threads): the program is not too small for its threads."""
    kernel = finding.kernel or ""
    accesses = [fact for fact in _on_lines(_compiled(ctx, kernel, "global_access"), finding)
                if fact.value.get("tensor_shape")]
    warps = {fact.kernel: fact.value.get("num_warps") or 4 for fact in _compiled(ctx, kernel, "resources")}
    if not accesses or not _every_specialization(ctx, kernel, accesses):
        return None
    for fact in accesses:
        numel, bits = _numel(fact.value["tensor_shape"]), _element_bits(fact)
        if bits is None or numel * bits < 128 * 32 * warps.get(fact.kernel, 4):
            return None
    return Veto(f"the compiled block on line {finding.line} gives every thread a 16-byte vector or more", accesses[:1])


def _numel(shape: list[int]) -> int:
    total = 1
    for size in shape:
        total *= size
    return total


def _element_bits(fact: Fact) -> int | None:
    from ladder.diagnoser.ir.mlir import element_bits

    dtype = fact.value.get("dtype")
    return element_bits(dtype) if dtype else None


def tensor_core_dot(ctx: TriageContext, finding: Finding) -> Veto | None:
    """The dot on the line compiled to a tensor-core instruction (wgmma, mma.sync, tcgen05) in
    every specialization."""
    dots = _on_lines(_compiled(ctx, finding.kernel or "", "dot_lowering"), finding)
    if dots and all(fact.value.get("kind") in ("wgmma", "mma_sync", "tcgen05") for fact in dots):
        kinds = sorted({fact.value["kind"] for fact in dots})
        return Veto(f"the dot on line {finding.line} compiles to {'/'.join(kinds)} on the tensor cores", dots[:1])
    return None


def wgmma_dot(ctx: TriageContext, finding: Finding) -> Veto | None:
    """The dot on the line compiled to wgmma (or tcgen05) in every specialization."""
    dots = _on_lines(_compiled(ctx, finding.kernel or "", "dot_lowering"), finding)
    if dots and all(fact.value.get("kind") in ("wgmma", "tcgen05") for fact in dots):
        return Veto(f"the dot on line {finding.line} compiles to wgmma", dots[:1])
    return None


def pipelined_loop(ctx: TriageContext, finding: Finding) -> Veto | None:
    """The loop on the line is pipelined (async copies or TMA) with no synchronous load left, in
    every specialization."""
    loops = [fact for fact in _on_lines(_compiled(ctx, finding.kernel or "", "pipelining"), finding)
             if fact.value.get("feeds_dot")]
    if loops and _every_specialization(ctx, finding.kernel or "", loops) and \
            all(fact.value.get("pipelined") and not fact.value.get("sync_loads") for fact in loops):
        return Veto(f"the compiled loop on line {finding.line} loads its operands with async copies/TMA only", loops[:1])
    return None


def shared_memory_not_binding(ctx: TriageContext, finding: Finding) -> Veto | None:
    """In every specialization the kernel launches and shared memory would allow more resident
    programs than another resource does: it is not what limits occupancy."""
    occupancy = _compiled(ctx, finding.kernel or "", "occupancy")
    if not _every_specialization(ctx, finding.kernel or "", occupancy):
        return None
    for fact in occupancy:
        programs = fact.value.get("programs_per_sm") or 0
        shared = (fact.value.get("limits") or {}).get("shared_memory")
        if programs == 0 or (shared is not None and shared <= programs):
            return None
    return Veto("in every compiled specialization another resource than shared memory limits residency", occupancy[:1])


def reduction_within_warp(ctx: TriageContext, finding: Finding) -> Veto | None:
    """Every reduction the compiled loop does on the line stays within a warp (shuffles only, no
    shared memory or barrier)."""
    reductions = _on_lines(_compiled(ctx, finding.kernel or "", "reduction_in_loop"), finding)
    if reductions and all(fact.value.get("cross_warp") is False for fact in reductions):
        return Veto(f"the compiled reduction on line {finding.line} stays within one warp", reductions[:1])
    return None


def grid_fills_sms(ctx: TriageContext, finding: Finding) -> Veto | None:
    """Every launch of the kernel rung 3 recorded has at least as many programs as SMs."""
    launches = _compiled(ctx, finding.kernel or "", "launch")
    if launches and all(fact.value.get("sm_count") and (fact.value.get("programs") or 0) >= fact.value["sm_count"]
                        for fact in launches):
        fewest = min(fact.value["programs"] for fact in launches)
        return Veto(f"every recorded launch has {fewest} programs or more for {launches[0].value['sm_count']} SMs",
                    launches[:1])
    return None


def no_divrem(ctx: TriageContext, finding: Finding) -> Veto | None:
    """The compiled kernel does no per-element division or remainder by a non-power-of-two on the
    finding's lines."""
    if not ctx.facts or not _specializations(ctx, finding.kernel or ""):
        return None
    hot = [fact for fact in _on_lines(_compiled(ctx, finding.kernel or "", "divrem_in_loop"), finding)
           if fact.value.get("per_element") and not fact.value.get("power_of_two")]
    if hot:
        return None
    return Veto(f"the compiled kernel divides no per-element value by a non-power-of-two on line {finding.line}")


def no_int64_index(ctx: TriageContext, finding: Finding) -> Veto | None:
    """The compiled kernel does no per-element 64-bit integer arithmetic on the finding's lines (for
    the 64-bit-where-32-suffices finding; the 32-bit-overflow one is about the absence of it)."""
    from .detectors.source.access import INT64_WASTE

    if finding.title != INT64_WASTE or not _specializations(ctx, finding.kernel or ""):
        return None
    wide = [fact for fact in _on_lines(_compiled(ctx, finding.kernel or "", "int64_index"), finding)
            if fact.value.get("per_element")]
    if wide:
        return None
    return Veto(f"the compiled kernel does no per-element 64-bit integer arithmetic on line {finding.line}")


VETOES: dict[str, Callable[[TriageContext, Finding], Veto | None]] = {
    "narrow_access": narrow_access,
    "no_shared_conversion": no_shared_conversion,
    "no_spills": no_spills,
    "block_fits_registers": block_fits_registers,
    "thread_holds_a_vector": thread_holds_a_vector,
    "tensor_core_dot": tensor_core_dot,
    "wgmma_dot": wgmma_dot,
    "pipelined_loop": pipelined_loop,
    "shared_memory_not_binding": shared_memory_not_binding,
    "reduction_within_warp": reduction_within_warp,
    "grid_fills_sms": grid_fills_sms,
    "no_divrem": no_divrem,
    "no_int64_index": no_int64_index,
}


def veto_by_ir(ctx: TriageContext, findings: list[Finding], rules: dict[str, str]) -> tuple[list[Finding], list[dict]]:
    """The findings the facts do not contradict, and a vetoed record (`agreement.vetoed_record`)
    for each rung-1 finding they do. `rules`: catalog id -> the name of its veto rule."""
    from ladder.diagnoser.agreement import vetoed_record

    if not ctx.facts:
        return findings, []
    kept, vetoed = [], []
    for finding in findings:
        rule = VETOES.get(rules.get(finding.pattern or "", NO_VETO))
        veto = rule(ctx, finding) if rule is not None and finding.rung == 1 and finding.line is not None else None
        if veto is None:
            kept.append(finding)
        else:
            vetoed.append(vetoed_record(finding.to_dict(), 3, veto.reason, veto.evidence()))
    return kept, vetoed
