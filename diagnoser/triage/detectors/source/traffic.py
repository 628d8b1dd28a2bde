"""Global traffic beyond what the work needs (source level, NVIDIA), judged over the kernels of one
forward: an intermediate one kernel writes and another reads back where the first could have
applied the work before its store (nv.unfused-epilogue), and data read more than once, by several
passes of one program or by several kernels (nv.redundant-global-traffic).
"""
from __future__ import annotations

from collections import defaultdict
from typing import Any, Iterable

import numpy as np

from ladder.diagnoser.evidence import Finding

from ...context import TriageContext
from ...interp.report import KernelReport
from ..common import Findings, source_evidence
from .measures import MIN_ACCESS_SHARE, reports, runtime_loops, trips


def _written_params(report: KernelReport) -> dict[str, None]:
    """The parameters the kernel stores through, in the order of its first access to each: a set's
    order changes from one process to the next, and with it which of two tied tensors a finding named."""
    return dict.fromkeys(a.base for a in report.accesses if a.op in ("store", "atomic") and a.base)


def _read_params(report: KernelReport) -> dict[str, None]:
    """The parameters the kernel loads through, in the order of its first access to each."""
    return dict.fromkeys(a.base for a in report.accesses if a.op == "load" and a.base)


# Torch ops that fill, copy or permute data without computing on it: not an epilogue to fuse (the
# catalog's pattern is elementwise or reduction work done in a separate pass). Reading through an
# index (`x[idx]`) is not recorded as compute either, so writing through one is treated alike.
DATA_MOVEMENT = {"zeros", "zeros_like", "zero_", "fill_", "full", "full_like", "contiguous", "clone", "copy_",
                 "__setitem__", "index_put_", "index_copy_", "cat", "stack"}


def _forward_bytes(launches: Iterable[Any]) -> int:
    """Bytes the forward's kernels touch: the sum of their tensor and descriptor arguments."""
    return sum(launch.operand_bytes() for launch in launches)


def _real_share(size: int, total: int) -> bool:
    """An intermediate worth a finding: a real share of the forward's traffic (a per-row
    statistic, a scalar loss or a routing table beside the real data costs nothing measurable)."""
    return size >= MIN_ACCESS_SHARE * total


def detect_unfused(ctx: TriageContext) -> list[Finding]:
    """nv.unfused-epilogue: elementwise or reduction work done by a separate launch (or torch op)
    over data another kernel of the same forward just wrote to global memory, which the producer
    could have applied before its store: the intermediate makes an HBM round trip.

    The consumer is a Triton kernel without a K loop (a chain of GEMMs is no epilogue) or a torch op
    that computes (copies and fills are not work to fuse); the intermediate is a real share of the
    forward's traffic. That the intermediate is also returned does not matter: fused, the producer
    still writes it once and the consumer's re-read disappears. A torch op that prepares a kernel's
    input the same way could be fused into the kernel's loads."""
    found = Findings()
    reports = {(a.case_index, a.launch.index): a.report for a in ctx.analyses}
    by_kernel = {a.kernel.name: a.report for a in ctx.analyses}
    for trace in ctx.traces:
        written: dict[int, tuple[Any, int]] = {}
        read_by: dict[int, set] = {}
        primaries = [launch for launch in trace.launches if launch.primary]
        total = _forward_bytes(primaries)
        for launch in primaries:
            report = reports.get((trace.index, launch.index)) or by_kernel.get(launch.kernel)
            if report is None:
                continue
            tensors, read = launch.tensors(), _read_params(report)
            epilogue_like = not any(runtime_loops(report, d.loops) for d in report.dots)
            for param in (read if epilogue_like else ()):
                arg = tensors.get(param)
                if arg is None or arg.storage not in written:
                    continue
                producer, size = written[arg.storage]
                if producer.line == launch.line:
                    continue  # one kernel launched in a loop accumulating into its own output
                # Fused, the consumer's re-reads of what the producer already read go too.
                shared = sum(a.numel * a.elem_size for p, a in tensors.items()
                             if p in read and a.storage in read_by.get(id(producer), set()))
                if not _real_share(size + shared, total):
                    continue
                detail = (f"{launch.kernel} reads `{param}` ({size / 2**20:.1f} MiB), which {producer.kernel} wrote "
                          "earlier in the same forward" + (f", and re-reads {shared / 2**20:.1f} MiB of its inputs"
                                                           if shared else "")
                          + ": an HBM round trip the producer could avoid by applying this work before its store")
                found.add(ctx, "nv.unfused-epilogue", launch.kernel, launch.line, "work split across kernels", 0.8,
                          [source_evidence(ctx, launch.line, detail)], trace.case)
            read_by[id(launch)] = {tensors[p].storage for p in read if p in tensors}
            for param in _written_params(report):
                arg = tensors.get(param)
                if arg is not None and arg.storage is not None:
                    written[arg.storage] = (launch, arg.numel * arg.elem_size)
        for op in trace.torch_ops:
            if op.name in DATA_MOVEMENT:
                continue
            after = [(s, w) for s, w in written.items() if s in op.reads and w[0].index < op.index]
            if after:
                _, (producer, size) = after[-1]
                if _real_share(size, total):
                    detail = (f"torch `{op.name}` runs on the output of {producer.kernel} ({size / 2**20:.0f} MiB) after "
                              "the kernel: a separate pass over HBM the kernel's epilogue could do")
                    found.add(ctx, "nv.unfused-epilogue", producer.kernel, op.line, "work split across kernels", 0.75,
                              [source_evidence(ctx, op.line, detail)], trace.case)
            elif op.index < len(trace.launches) and trace.launches[op.index].primary:
                consumer = trace.launches[op.index]
                report = reports.get((trace.index, consumer.index))
                args = consumer.tensors()
                prepared = [args[p] for p in (_read_params(report) if report else set())
                            if p in args and args[p].storage in op.writes]
                size = max((a.numel * a.elem_size for a in prepared), default=0)
                if prepared and _real_share(size, total):
                    detail = (f"torch `{op.name}` prepares the input of {consumer.kernel} ({size / 2**20:.0f} MiB): "
                              "fuse it into the kernel's loads")
                    found.add(ctx, "nv.unfused-epilogue", consumer.kernel, op.line, "work split across kernels", 0.7,
                              [source_evidence(ctx, op.line, detail)], trace.case)
    return found.list()


def detect_redundant_traffic(ctx: TriageContext) -> list[Finding]:
    """nv.redundant-global-traffic: the same addresses loaded by several passes of one program
    when the data would fit on chip (or in three or more passes, where an online algorithm
    needs two), or the same tensor read again by a later kernel of the forward."""
    found = Findings()
    for name, report, analysis in reports(ctx):
        case = analysis.case if analysis else None
        by_base: dict[str, list] = defaultdict(list)
        for access in report.accesses:
            if access.op == "load" and access.base and access.shape and not access.dot_operand:
                by_base[access.base].append(access)
        for base, loads in by_base.items():
            if len(loads) < 2:
                continue
            passes = [loads[0]]
            for load in loads[1:]:
                if _overlaps(load, passes[0]) and load.loops != passes[0].loops:
                    passes.append(load)
                elif analysis is None and load.loops != passes[0].loops:
                    passes.append(load)
            if len(passes) < 2:
                continue
            extent = max(_program_extent(report, p) for p in passes)
            bytes_extent = extent * passes[0].elem_bits // 8
            fits = bytes_extent <= 64 * 1024
            if len(passes) < 3 and not fits:
                continue
            lines = ", ".join(str(p.line) for p in passes)
            detail = (f"`{base}` is read by {len(passes)} passes (lines {lines}); each program's data is "
                      f"{bytes_extent / 1024:.0f} KiB" + (", which fits on chip" if fits else
                                                          "; an online (single-read) formulation needs fewer passes"))
            found.add(ctx, "nv.redundant-global-traffic", name, passes[1].line, "the same data read more than once",
                      0.8 if analysis else 0.6, [source_evidence(ctx, passes[1].line, detail)], case, analysis=analysis)
    _reread_across_kernels(ctx, found)
    return found.list()


def _reread_across_kernels(ctx: TriageContext, found: Findings) -> None:
    """A tensor read by one kernel and again, unchanged, by a later kernel of the same forward,
    both memory-bound (no dot loop), when the first kernel's share of it per program fits on chip
    (a fused kernel would read it once) and it is a real share of the forward's traffic."""
    reports = {(a.case_index, a.launch.group): a for a in ctx.analyses if a.launch.primary}
    for trace in ctx.traces:
        launches = [(launch, reports.get((trace.index, launch.group))) for launch in trace.launches if launch.primary]
        launches = [(launch, a) for launch, a in launches if a is not None]
        total = sum(launch.operand_bytes() for launch, _ in launches) or 1
        first_reader: dict[int, tuple] = {}
        for launch, analysis in launches:
            report = analysis.report
            tensors = launch.tensors()
            memory_bound = not any(runtime_loops(report, d.loops) for d in report.dots)
            for param in _read_params(report):
                arg = tensors.get(param)
                if arg is None or arg.storage is None:
                    continue
                earlier = first_reader.get(arg.storage)
                size = arg.numel * arg.elem_size
                if earlier is None:
                    first_reader[arg.storage] = (launch, analysis, param) if memory_bound else None
                    continue
                if not memory_bound or size < max(1 << 20, MIN_ACCESS_SHARE * total):
                    continue
                first, first_analysis, first_param = earlier
                if first.line == launch.line:
                    continue  # one launch site in a loop: each launch takes its own piece (an offset argument)
                loads = [a for a in first_analysis.report.accesses if a.op == "load" and a.base == first_param]
                per_program = sum(_program_extent(first_analysis.report, a) * a.elem_bits // 8 for a in loads)
                if not loads or per_program > 64 * 1024:
                    continue
                detail = (f"{launch.kernel} reads `{param}` ({size / 2**20:.0f} MiB) again after {first.kernel} read it in "
                          f"the same forward; {first.kernel}'s programs hold {per_program / 1024:.0f} KiB of it each, "
                          "so one fused kernel could read it once")
                found.add(ctx, "nv.redundant-global-traffic", launch.kernel, launch.line,
                          "the same data read more than once", 0.7, [source_evidence(ctx, launch.line, detail)],
                          trace.case)
            for param in _written_params(report):
                arg = tensors.get(param)
                if arg is not None:
                    first_reader.pop(arg.storage, None)  # new data: a later read is no re-read


def _overlaps(a: Any, b: Any) -> bool:
    if a.sample_offsets is None or b.sample_offsets is None:
        return a.info == b.info and a.shape == b.shape
    return bool(np.intersect1d(np.asarray(a.sample_offsets).ravel(), np.asarray(b.sample_offsets).ravel()).size)


def _program_extent(report: KernelReport, access: Any) -> int:
    return access.numel * trips(report, access.loops)
