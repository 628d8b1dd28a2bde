"""Special-function work beside the tensor cores (source level, NVIDIA): nv.sfu-bound-loop.

An exponential, logarithm, reciprocal square root, sine or cosine runs on the SM's special-function
units (MUFU), 16 results per clock per SM on Hopper, while its tensor cores do 4096 fp16 flops per
clock. Attention's online softmax takes one exponential per score and two dots of 2 x head_dim flops
each per score, so at head_dim 64 the exponentials need as many clocks as the matmuls, at 128 half
as many. Issued one after the other, which is how a loop body runs within a warpgroup (the P @ V dot
waits for the exponentials, the next Q @ K^T for nothing but is issued after them), the tensor
cores idle for the whole exponential phase; only another warpgroup's matmuls (the schedulers'
interleaving, or explicit ping-pong and warp specialisation) or exponentials computed on the FMA
units hide it. The rule weighs, per iteration of each loop that runs a dot, the MUFU instructions
of the special-function calls in that loop against the dots' flops at the target's rates.
"""
from __future__ import annotations

from ladder.diagnoser.evidence import Finding

from ...context import TriageContext
from ...interp.report import Dot, KernelReport
from ..common import Findings, case_label, metric_evidence, source_evidence
from .measures import device, dot_flops, reports, runtime_loops
from .tile_fit import tensor_peak

# Report a loop that, with its special functions and dots run one after the other, reaches less
# than this share of the tensor-core ceiling: the gap rule's "at the roofline" line.
REACH_BELOW = 0.8


def detect_sfu_bound(ctx: TriageContext) -> list[Finding]:
    """nv.sfu-bound-loop: a loop whose special-function calls (exp, exp2, log, rsqrt, ...) take a
    quarter or more of the time its tl.dot calls take at the tensor-core ceiling, so that run one
    after the other the loop cannot reach `REACH_BELOW` of the roofline (attention at head_dim 64
    and 128). Per iteration of the innermost runtime loop holding a dot; the rates are the target
    table's (`sfu_ops_per_clock_per_sm`, `sm_clock_hz`, `sm_count`, the dot dtype's ceiling)."""
    found = Findings()
    sfu_rate = device(ctx, "sfu_ops_per_clock_per_sm") * device(ctx, "sm_clock_hz") * device(ctx, "sm_count")
    for name, report, analysis in reports(ctx):
        for loop_id, dots in _dots_by_loop(report).items():
            specials = [s for s in report.specials if runtime_loops(report, s.loops)[-1:] == (loop_id,)]
            if not specials:
                continue
            flops = sum(dot_flops(dot) for dot in dots)
            tensor_s = sum(dot_flops(dot) / tensor_peak(ctx, dot) for dot in dots)
            sfu_ops = sum(s.results for s in specials)
            ratio = (sfu_ops / sfu_rate) / tensor_s if tensor_s else 0.0
            reach = 1.0 / (1.0 + ratio)
            if reach >= REACH_BELOW:
                continue
            heaviest = max(specials, key=lambda s: s.results)
            calls = ", ".join(f"{s.op} on {'x'.join(map(str, s.shape)) or 'a scalar'} (line {s.line})"
                              for s in sorted(specials, key=lambda s: s.line))
            where = f" in case {case_label(analysis.case)}" if analysis is not None else ""
            detail = (f"each iteration of the loop at line {report.loops[loop_id].line} runs "
                      f"{flops:,} tensor-core flops in {len(dots)} dot(s) and "
                      f"{sfu_ops:,} special-function results ({calls}){where}; at {sfu_rate / 1e12:.1f} T/s "
                      f"the special-function units need {ratio:.0%} of the matmuls' time at their ceiling: "
                      f"run one after the other the loop reaches at most {reach:.0%} of the roofline, and only "
                      "overlapping them with another warpgroup's matmuls or moving part of them to the FMA "
                      "units goes past that")
            evidence = [source_evidence(ctx, heaviest.line, detail)]
            if analysis is None or analysis.launch.primary:
                evidence.append(metric_evidence("special-function time / tensor-core time", round(ratio, 2)))
            found.add(ctx, "nv.sfu-bound-loop", name, heaviest.line, "special functions rival the tensor cores",
                      0.7, evidence, analysis=analysis)
    return found.list()


def _dots_by_loop(report: KernelReport) -> dict[int, list[Dot]]:
    """The dots of each innermost runtime loop that holds one."""
    loops: dict[int, list] = {}
    for dot in report.dots:
        inner = runtime_loops(report, dot.loops)[-1:]
        if inner and len(dot.a_shape) >= 2 and len(dot.b_shape) >= 2:
            loops.setdefault(inner[0], []).append(dot)
    return loops

