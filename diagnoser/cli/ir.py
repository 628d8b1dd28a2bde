"""`ladder ir`: the kernels a solution launches, their IR at any stage, and the facts read from it.

Exit status 3 (``ladder.diagnoser.cli.errors``) when the capture fails or nothing launched a Triton kernel.
"""
from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import click

from ladder.diagnoser.cli.command import LadderCommand
from ladder.diagnoser.cli.errors import CannotRun
from ladder.diagnoser.cli.streams import echo
from ladder.diagnoser.evidence import Fact
from ladder.runner.capture import STAGE_ORDER, CapturedKernel

log = logging.getLogger("ladder")

STAGES = ("ttir", "ttgir", "llir", "ptx", "sass", "ttadapter")


@click.command("ir", cls=LadderCommand)
@click.argument("solution", type=click.Path(dir_okay=False))
@click.option("--problem", type=click.Path(dir_okay=False), help="KernelBench problem file (default: problem.py "
              "beside the solution; none for a script that launches kernels itself).")
@click.option("--case", "case", type=int, help="Only this input case (default: every case).")
@click.option("--stage", type=click.Choice(STAGES), help="Print this stage's IR instead of the facts.")
@click.option("--facts", "facts_only", is_flag=True, help="Print only the facts (no kernel summary).")
@click.option("--target", default="sm90", show_default=True, help="sm90 (H100/H200), another smNN, or ascend.")
@click.option("--backend", type=click.Choice(["aot", "cuda"]), default="aot", show_default=True,
              help="aot compiles for the target on this machine; cuda captures the JIT on this GPU.")
@click.option("--kernel", "kernel_filter", help="Only kernels whose label contains this text.")
@click.option("--save", type=click.Path(dir_okay=False), help="Also write the captured kernels (all stages) as JSON.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def ir(solution: str, problem: str | None, case: int | None, stage: str | None, facts_only: bool, target: str,
       backend: str, kernel_filter: str | None, save: str | None, as_json: bool) -> None:
    """Capture every kernel SOLUTION launches and attribute its IR to source lines.

    SOLUTION is a KernelBench-style solution (class ModelNew) or any Python script that launches
    Triton kernels.
    """
    from ladder.diagnoser.ir import capture, extract_facts
    from ladder.runner.capture import save as save_kernels

    log.info(f"capturing kernels ({backend}, {target}) ...")
    try:
        kernels = capture(solution, problem, case=case, target=target, backend=backend)
    except Exception as error:  # a user's file or environment: one line, no traceback
        raise CannotRun(_one_line(error), kind="CaptureFailed") from error
    if kernel_filter:
        kernels = [kernel for kernel in kernels if kernel_filter in kernel.label]
    if not kernels:
        raise CannotRun(f"no Triton kernel was launched by {Path(solution).name}"
                        + (f" matching {kernel_filter!r}" if kernel_filter else ""), kind="NoTritonLaunch")
    if save:
        save_kernels(kernels, save)
    if stage:
        _print_stage(kernels, stage, as_json)
        return
    facts = extract_facts(kernels)
    if as_json:
        payload: Any = [fact.to_dict() for fact in facts]
        if not facts_only:
            payload = {"kernels": [_summary(kernel) for kernel in kernels], "facts": payload}
        echo(json.dumps(payload, indent=1, default=str))
        return
    for kernel in kernels:
        echo(kernel.label if facts_only else _summary_line(kernel))
        for fact in facts:
            if fact.kernel == kernel.label:
                echo(f"  {_where(fact):<24} {fact.kind:<18} {describe(fact)}")


def _one_line(error: BaseException) -> str:
    from ladder.runner.problem import one_line

    return one_line(error)


def _print_stage(kernels: list[CapturedKernel], stage: str, as_json: bool) -> None:
    missing = [kernel.label for kernel in kernels if stage not in kernel.stages]
    if len(missing) == len(kernels):
        available = sorted({name for kernel in kernels for name in kernel.stages}, key=_stage_rank)
        raise CannotRun(f"no {stage} stage for this target (available: {', '.join(available)})", kind="NoSuchStage")
    if as_json:
        echo(json.dumps({kernel.label: kernel.stages.get(stage) for kernel in kernels}, indent=1))
        return
    for kernel in kernels:
        if stage in kernel.stages:
            echo(f"// ===== {kernel.label} ({stage}) =====")
            echo(kernel.stages[stage].rstrip())


def _stage_rank(stage: str) -> int:
    return STAGE_ORDER.index(stage) if stage in STAGE_ORDER else len(STAGE_ORDER)


def _summary(kernel: CapturedKernel) -> dict[str, Any]:
    return {"kernel": kernel.label, "function": kernel.function, "file": kernel.file, "line": kernel.line,
            "target": kernel.target, "backend": kernel.backend, "signature": kernel.signature,
            "constexprs": kernel.constexprs, "attrs": kernel.attrs, "metadata": kernel.metadata,
            "resources": kernel.resources, "launches": kernel.launches, "config": kernel.config,
            "stages": sorted(kernel.stages, key=_stage_rank), "error": kernel.error}


def _summary_line(kernel: CapturedKernel) -> str:
    used = kernel.resources
    parts = [f"{kernel.label}  ({Path(kernel.file or '?').name}:{kernel.line})",
             f"warps={kernel.metadata.get('num_warps')} stages={kernel.metadata.get('num_stages')}"]
    if used.get("registers") is not None:
        parts.append(f"regs={used['registers']} shared={used.get('shared_bytes')}B "
                     f"spills={used.get('spill_stores_bytes', 0) + used.get('spill_loads_bytes', 0)}B")
    if kernel.config:
        parts.append(f"config #{kernel.config['index']}{' (default)' if kernel.config['default'] else ''}")
    cases = [case for case in kernel.cases if case is not None]
    parts.append(f"launches={len(kernel.launches)}" + (f" cases={','.join(map(str, cases))}" if cases else ""))
    if kernel.error:
        parts.append(f"ERROR {kernel.error}")
    return "  ".join(parts)


def _where(fact: Fact) -> str:
    return f"{Path(fact.file).name}:{fact.line}" if fact.file else "?"


def describe(fact: Fact) -> str:
    """One line a kernel engineer reads at a glance."""
    v = fact.value
    describers = {
        "global_access": lambda: ((f"{v['op']} {'x'.join(map(str, v['tensor_shape']))} {v['dtype']} tile"
                                   if v["via"] == "tma" else
                                   f"{v['op']} {v['vector_bits'] or '?'}-bit ({v['elements'] or '?'} x {v['dtype']})")
                                  + f" via {v['via']}" + (" masked" if v["masked"] else "")
                                  + (" in loop" if v["in_loop"] else "")),
        "spill": lambda: f"{v['spill_stores_bytes']} B stored / {v['spill_loads_bytes']} B loaded "
                         f"({v['stl']} STL, {v['ldl']} LDL)",
        "convert_layout": lambda: f"{v['src']} -> {v['dst']} {v['shape']}" + (" in loop" if v["in_loop"] else "")
                                  + (" through shared memory" if v["through_shared"] else ""),
        "layout": lambda: f"{v['alias']}: {v['encoding']}" + (f" v{v['mma_version']}" if v["mma_version"] else ""),
        "dot_lowering": lambda: f"{v['kind']} {v['operand_dtype']}->{v['accumulator_dtype']}"
                                + (f" instr {v['instr_shape']}" if v["instr_shape"] else "")
                                + (f" sass {v['sass']}" if v["sass"] else ""),
        "pipelining": lambda: ("pipelined" if v["pipelined"] else "NOT pipelined")
                              + f" (num_stages={v['requested_stages']}, async copies={v['async_copies']}, "
                                f"tma={v['tma']}, buffers={v['buffers']})" + (" feeds dot" if v["feeds_dot"] else ""),
        "barrier_in_loop": lambda: f"{v['count']} x {v['instruction']} per iteration (loop at line {v['loop_line']})",
        "resources": lambda: f"{v['registers']} regs, {v['shared_bytes']} B shared, {v['spills']} B spilled, "
                             f"{v['num_warps']} warps",
        "occupancy": lambda: f"{v['programs_per_sm']} programs/SM, {v['occupancy']:.0%} of warps, "
                             f"limited by {v['limiter']}",
        "int64_index": lambda: f"{', '.join(v['ops'])}" + (" per element" if v["per_element"] else "")
                               + (" in loop" if v["in_loop"] else ""),
        "divrem_in_loop": lambda: f"{v['op']} on {v['dtype']}" + (" per element" if v["per_element"] else "")
                                  + (" in loop" if v["in_loop"] else "")
                                  + (" (constant divisor)" if v["constant_divisor"] else ""),
        "atomic": lambda: f"{v['op']} {v['sem']} scope={v['scope']} {v['dtype']}" + (" in loop" if v["in_loop"] else ""),
        "reduction_in_loop": lambda: f"{v['op']} over axis {v['axis']}" + (" across warps" if v["cross_warp"] else ""),
        "launch": lambda: f"grid {v['grid']} = {v['programs']} programs x{v['count']}"
                          + (f" (case {v['case']})" if v["case"] is not None else "")
                          + (f", {v['waves']} waves on {v['sm_count']} cores" if v.get("waves") is not None else "")
                          + (f", over the {v['max_grid']} grid limit" if v.get("max_grid")
                             and v["programs"] > v["max_grid"] else ""),
        "discrete_access": lambda: f"{v['op']} of {v['elements']} x {v['dtype']} one element at a time"
                                   + (" in loop" if v["in_loop"] else ""),
        "masked_load_fill": lambda: f"fills {v['shape']} {v['dtype']} with {v['fill']} before the copy",
        "int64_arith": lambda: f"{v['op']} on {v['dtype']} {v['shape']} (scalar code)",
        "int_compare": lambda: f"cmpi {v['predicate']} on {v['dtype']} {v['shape']} (scalar code)",
        "ub_usage": lambda: f"{v['bytes']} B of buffers vs {v['limit']} B unified buffer"
                            + ("" if v["fits"] else f" (does not fit x{v['multibuffer_factor']} buffering)"),
        "unaligned_tail": lambda: f"{v['shape']} {v['dtype']}: {v['tail_bytes']} B tail padded to {v['padded_bytes']} B",
        "core_mode": lambda: f"{v['mode']} ({v['cores']}), {v['matmuls']} matmul(s)",
    }
    make = describers.get(fact.kind)
    return make() if make else ", ".join(f"{key}={value}" for key, value in v.items())
