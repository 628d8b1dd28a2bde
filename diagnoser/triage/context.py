"""Everything the detectors read, built once per triage: the data each detector takes in.

- `source`: the static model of the solution file (kernels, launch sites);
- `traces`: per case, what the forward launched (runner cases on meta tensors), when a problem
  is known;
- `analyses`: every distinct (kernel, launch configuration) of every case, with the kernel walked
  for those arguments (see `interp`);
- `static`: each launched kernel walked with only what the source says (literal launch
  arguments), for when no problem is given;
- `facts` (rung 3) and `metrics` (rung 2) as given.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any, Optional

from ladder.diagnoser.evidence import Fact

from .interp import Binding, KernelReport, walk_kernel
from .source import Kernel, LaunchSite, SourceModule, static_value
from .trace import ArgInfo, CaseTrace, LaunchRecord

# Distinct launch configurations walked per kernel and case: a forward that launches a kernel per
# row would otherwise be walked thousands of times for the same conclusion.
MAX_CONFIGS_PER_KERNEL = 4


@dataclass
class LaunchAnalysis:
    case_index: int
    case: dict[str, Any]
    launch: LaunchRecord
    kernel: Kernel
    report: KernelReport
    repeats: int = 1                 # launches in this case with the same configuration


@dataclass
class TriageContext:
    source: SourceModule
    target: str = "nvidia"                       # nvidia | ascend
    solution_path: Optional[str] = None
    problem_path: Optional[str] = None
    traces: list[CaseTrace] = field(default_factory=list)
    analyses: list[LaunchAnalysis] = field(default_factory=list)
    static: dict[str, KernelReport] = field(default_factory=dict)
    facts: list[Fact] = field(default_factory=list)
    metrics: dict[str, Any] = field(default_factory=dict)
    device: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def file(self) -> Optional[str]:
        return self.solution_path

    @property
    def has_cases(self) -> bool:
        return any(t.launches for t in self.traces)

    def kernel_names(self) -> list[str]:
        names = [k.name for k in self.source.launched_kernels()]
        for analysis in self.analyses:
            if analysis.kernel.name not in names:
                names.append(analysis.kernel.name)
        return names


def bindings_from_launch(launch: LaunchRecord) -> dict[str, Binding]:
    bindings = {}
    for name, arg in launch.args.items():
        bindings[name] = _binding(arg)
    return bindings


def _binding(arg: ArgInfo) -> Binding:
    if arg.kind == "tensor":
        return Binding("ptr", dtype=arg.dtype or "fp32", aligned=arg.aligned)
    if arg.kind == "constexpr":
        return Binding("constexpr", arg.value)
    if arg.kind == "int":
        return Binding("int", arg.value)
    if arg.kind == "bool":
        return Binding("constexpr", arg.value)
    if arg.kind == "float":
        return Binding("float", arg.value)
    if arg.kind == "desc":
        return Binding("desc", arg.value, dtype=arg.dtype or "fp32", strides=arg.strides)
    return Binding("none")


def _config_key(launch: LaunchRecord) -> tuple:
    parts = [launch.kernel, launch.num_warps, launch.num_stages, launch.grid]
    for name, arg in sorted(launch.args.items()):
        if arg.kind == "tensor":
            parts.append((name, arg.dtype, arg.aligned, arg.shape, arg.strides))
        else:
            parts.append((name, arg.kind, str(arg.value)))
    return tuple(parts)


def analyse_traces(source: SourceModule, traces: list[CaseTrace]) -> list[LaunchAnalysis]:
    """Walk each distinct launch configuration of each case once (every config of an autotuned
    launch is a configuration of its own)."""
    analyses: list[LaunchAnalysis] = []
    for trace in traces:
        seen: dict[tuple, LaunchAnalysis] = {}
        walked_groups: dict[str, set[int]] = {}
        for launch in trace.launches:
            kernel = source.kernels.get(launch.kernel)
            if kernel is None:
                continue
            key = _config_key(launch)
            if key in seen:
                seen[key].repeats += 1
                continue
            groups = walked_groups.setdefault(launch.kernel, set())
            if launch.group not in groups and len(groups) >= MAX_CONFIGS_PER_KERNEL:
                continue
            groups.add(launch.group)
            report = walk_kernel(source, kernel, bindings_from_launch(launch), launch.num_warps, launch.grid)
            analysis = LaunchAnalysis(trace.index, trace.case, launch, kernel, report)
            seen[key] = analysis
            analyses.append(analysis)
    return analyses


def static_launch_values(source: SourceModule, site: LaunchSite) -> dict[str, Any]:
    """Keyword values at a launch site that the source alone determines (literals, constants,
    and simple assignments earlier in the same function)."""
    env = dict(source.constants)
    if site.function is not None:
        for node in ast.walk(site.function):
            if isinstance(node, ast.Assign) and getattr(node, "lineno", 0) < site.line:
                value = static_value(node.value, env)
                for target in node.targets:
                    _bind_static(target, value, env)
    values = {}
    for name, node in site.keywords.items():
        value = static_value(node, env)
        if value is not None:
            values[name] = value
    return values


def _bind_static(target: ast.expr, value: Any, env: dict[str, Any]) -> None:
    if isinstance(target, ast.Name):
        if value is not None:
            env[target.id] = value
        else:
            env.pop(target.id, None)
    elif isinstance(target, (ast.Tuple, ast.List)):
        values = value if isinstance(value, tuple) and len(value) == len(target.elts) else [None] * len(target.elts)
        for element, item in zip(target.elts, values):
            _bind_static(element, item, env)


def static_reports(source: SourceModule) -> dict[str, KernelReport]:
    """Each launched kernel walked with the launch site's literal arguments only."""
    reports = {}
    for site in source.launches:
        if site.kernel in reports:
            continue
        kernel = source.kernels[site.kernel]
        values = static_launch_values(source, site)
        bindings: dict[str, Binding] = {}
        for param in kernel.params:
            if param.name in values:
                bindings[param.name] = Binding("constexpr" if param.constexpr else "int", values[param.name])
        num_warps = values.get("num_warps", 4)
        reports[site.kernel] = walk_kernel(source, kernel, bindings, int(num_warps) if isinstance(num_warps, int) else 4,
                                           (1, 1, 1), pids=[(0, 0, 0)])
    return reports
