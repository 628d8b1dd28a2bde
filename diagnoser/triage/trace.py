"""Record what a solution's forward launches, per case, without running any kernel.

The forward runs on PyTorch's `meta` device: tensors have shapes, strides and dtypes but no data,
so even the largest case costs nothing. Triton's launch entry points are replaced for the duration
by recorders that bind the arguments the way the JIT does (sizes, strides, alignment, constexprs,
num_warps/num_stages, the evaluated grid) and return without compiling. Torch operations called by
the forward are recorded too, in order, with the storage they read and write, which is what the
fusion and launch-count detectors need.

If the forward cannot run on meta tensors (it reads a value with `.item()`, or calls an op with no
Meta kernel such as `torch.bincount`), the case is traced again on the CPU, where random
floating-point inputs are allocated but not filled (integer inputs such as routing ids are real);
if that fails too, the trace says why and triage falls back to what the source alone shows.
Device queries the forward makes are answered for the target (`ladder.runner.capture.device_stand_in`).
"""
from __future__ import annotations

import contextlib
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Optional

from ladder.runner.hardware import compile_target

MAX_LAUNCHES_PER_CASE = 4096

# Torch functions that only read metadata, allocate, or make views: not compute.
NON_COMPUTE = {
    "size", "stride", "dim", "numel", "is_contiguous", "__get__", "__set__", "device", "dtype",
    "empty", "empty_like", "empty_strided", "new_empty", "view", "reshape", "view_as", "unsqueeze",
    "squeeze", "flatten", "unflatten", "expand", "expand_as", "t", "transpose", "permute", "as_strided",
    "storage_offset", "data_ptr", "untyped_storage", "element_size", "is_floating_point", "is_cuda",
    "requires_grad_", "detach", "_has_compatible_shallow_copy_type", "_set_grad_enabled", "_parse_to",
    "__len__", "__getitem__", "__iter__", "__format__", "__repr__", "__bool__", "__index__", "__int__",
    "get_device", "cpu", "cuda", "to", "type", "is_complex", "__hash__", "__eq__", "__ne__",
    "contiguous_format", "ndimension", "nelement", "_is_view", "is_leaf", "grad_fn", "shape",
    "_version", "new_tensor", "tensor", "as_tensor", "manual_seed", "npu", "chunk", "split", "unbind",
    "narrow", "select", "__setstate__", "__reduce_ex__", "__deepcopy__", "_get_tracing_state",
}


@dataclass
class ArgInfo:
    """One kernel argument as the JIT sees it."""

    kind: str                              # tensor | desc | int | float | bool | none | constexpr | other
    value: Any = None
    dtype: Optional[str] = None
    shape: tuple[int, ...] = ()
    strides: tuple[int, ...] = ()
    numel: int = 0
    elem_size: int = 0
    aligned: bool = True                   # data pointer 16-byte aligned (storage offset)
    storage: Optional[int] = None

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "storage"}


@dataclass
class LaunchRecord:
    kernel: str
    index: int
    grid: tuple[int, int, int]
    args: dict[str, ArgInfo]
    constexprs: dict[str, Any]
    num_warps: int
    num_stages: int
    options: dict[str, Any]
    autotune: Optional[dict[str, Any]] = None   # {"configs": [...], "key": [...]}
    heuristics: list[str] = field(default_factory=list)
    line: Optional[int] = None                  # launch site in the solution file
    group: int = 0                              # the launch this is a variant of (autotuned: one per config)
    variant: int = 0
    variants: int = 1

    @property
    def primary(self) -> bool:
        """The one record per real launch (an autotuned launch is recorded once per config)."""
        return self.variant == 0

    @property
    def programs(self) -> int:
        return max(1, math.prod(self.grid))

    def int_args(self) -> dict[str, int]:
        return {name: a.value for name, a in self.args.items() if a.kind == "int"}

    def tensors(self) -> dict[str, ArgInfo]:
        return {name: a for name, a in self.args.items() if a.kind == "tensor"}

    def operand_bytes(self) -> int:
        """Bytes of the memory the launch is given: its tensors and the tensors behind its host-side
        TMA descriptors (a descriptor-fed GEMM moves its operands as surely as a pointer-fed one). A
        tensor passed both ways (a descriptor for the main loop, its pointer for a tail) counts once."""
        tensors = self.tensors().values()
        passed = {(a.storage, a.numel) for a in tensors if a.storage is not None}
        behind = [a for a in self.args.values() if a.kind == "desc" and (a.storage, a.numel) not in passed]
        return sum(a.numel * a.elem_size for a in (*tensors, *behind))


@dataclass
class TorchOp:
    name: str
    index: int                       # position among launches: the op ran after `index` launches
    line: Optional[int]
    reads: list[int]
    writes: list[int]
    numel: int


@dataclass
class CaseTrace:
    index: int
    case: dict[str, Any]
    launches: list[LaunchRecord] = field(default_factory=list)
    torch_ops: list[TorchOp] = field(default_factory=list)
    error: Optional[str] = None
    truncated: bool = False
    output_storages: list[int] = field(default_factory=list)
    input_storages: list[int] = field(default_factory=list)
    note: Optional[str] = None               # how the case was traced, when not on meta tensors


class _TooManyLaunches(Exception):
    pass


def _dtype_name(dtype: Any) -> str:
    text = str(dtype).replace("torch.", "")
    return {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16", "float64": "fp64", "bool": "int1"}.get(text, text)


def _is_tensor(value: Any) -> bool:
    import torch

    return isinstance(value, torch.Tensor)


def _storage(tensor: Any) -> Optional[int]:
    """The identity of the memory under a tensor (views of one buffer share it), or None."""
    import torch

    with torch._C.DisableTorchFunction():
        try:
            return tensor.untyped_storage()._cdata
        except (RuntimeError, AttributeError):
            return None


def describe(value: Any) -> ArgInfo:
    """ArgInfo of one argument (tensors are described without touching their data)."""
    import torch

    if isinstance(value, torch.Tensor):
        with torch._C.DisableTorchFunction():
            offset_bytes = value.storage_offset() * value.element_size()
            return ArgInfo("tensor", None, _dtype_name(value.dtype), tuple(value.shape), tuple(value.stride()),
                           value.numel(), value.element_size(), offset_bytes % 16 == 0, _storage(value))
    if isinstance(value, bool):
        return ArgInfo("bool", value)
    if isinstance(value, int):
        return ArgInfo("int", value)
    if isinstance(value, float):
        return ArgInfo("float", value)
    if value is None:
        return ArgInfo("none")
    if type(value).__name__ == "TensorDescriptor" and isinstance(getattr(value, "base", None), torch.Tensor):
        # A host-side TMA descriptor: its box (block_shape) is what one load or store moves.
        return ArgInfo("desc", tuple(int(b) for b in value.block_shape), _dtype_name(value.base.dtype),
                       tuple(int(d) for d in value.shape), tuple(int(d) for d in value.strides),
                       value.base.numel(), value.base.element_size(), storage=_storage(value.base))
    inner = getattr(value, "value", None)
    if type(value).__name__ == "constexpr":
        return describe(inner)
    return ArgInfo("other", str(value))


class Recorder:
    """Holds the launches and torch ops of the case being traced."""

    def __init__(self, solution_file: Optional[str]) -> None:
        self.solution_file = str(Path(solution_file).resolve()) if solution_file else None
        self.current: Optional[CaseTrace] = None
        self.in_forward = False
        # Tensors whose storage a record names, held until the case ends: a freed storage's id
        # would otherwise be reused by the next allocation and two tensors would look like one.
        self.alive: list[Any] = []

    def caller_line(self) -> Optional[int]:
        frame = sys._getframe(2)
        while frame is not None:
            if self.solution_file and str(Path(frame.f_code.co_filename).resolve()) == self.solution_file:
                return frame.f_lineno
            frame = frame.f_back
        return None

    def launch(self, fn: Any, args: tuple, kwargs: dict, grid: Any,
               autotune: Optional[dict] = None, heuristics: Optional[list[str]] = None) -> None:
        """Record one launch of the Python function `fn` behind a @triton.jit kernel."""
        import inspect

        if self.current is None:
            return
        if len(self.current.launches) >= MAX_LAUNCHES_PER_CASE:
            self.current.truncated = True
            raise _TooManyLaunches()
        parameters = inspect.signature(fn).parameters
        names = list(parameters)
        constexpr_names = {name for name, p in parameters.items() if _is_constexpr_annotation(p.annotation)}
        options = {k: v for k, v in kwargs.items() if k not in names}
        bound: dict[str, Any] = dict(zip(names, args))
        bound.update({name: kwargs[name] for name in names if name in kwargs})
        for name, parameter in parameters.items():
            if name not in bound and parameter.default is not parameter.empty:
                bound[name] = parameter.default
        described = {name: describe(value) for name, value in bound.items()}
        self.alive.extend(value for value in bound.values() if _is_tensor(value))
        constexprs = {}
        for name in constexpr_names:
            if name in bound:
                value = bound[name]
                constexprs[name] = getattr(value, "value", value) if type(value).__name__ == "constexpr" else value
                described[name] = ArgInfo("constexpr", constexprs[name])
        grid_value = grid(dict(bound)) if callable(grid) else grid
        grid3 = tuple(int(g) for g in tuple(grid_value)[:3]) + (1,) * (3 - len(tuple(grid_value)[:3]))
        variant = (autotune or {}).get("variant", 0)
        index = len(self.current.launches)
        record = LaunchRecord(
            kernel=fn.__name__, index=index, grid=grid3, args=described,
            constexprs=constexprs, num_warps=int(options.get("num_warps", 4)),
            num_stages=int(options.get("num_stages", 3)),
            options={k: v for k, v in options.items() if k not in ("debug", "instrumentation_mode")},
            autotune=autotune, heuristics=heuristics or [], line=self.caller_line(),
            group=index - variant, variant=variant, variants=(autotune or {}).get("variants", 1))
        self.current.launches.append(record)


def _pre_hook(config: Any, nargs: dict[str, Any]) -> None:
    """A config's pre-hook, as the autotuner runs it before each benchmark: kernels with TMA
    descriptors set each descriptor's box to the config's block sizes there. On meta tensors a hook
    that touches data fails; the launch is then recorded as the arguments stand."""
    if getattr(config, "pre_hook", None) is None:
        return
    try:
        config.pre_hook(nargs)
    except Exception:  # user code on meta tensors: nothing to learn from its failure
        pass


@contextlib.contextmanager
def _patched_triton(recorder: Recorder) -> Iterator[None]:
    from triton.runtime import autotuner as autotuner_module
    from triton.runtime import jit as jit_module

    classes = [jit_module.JITFunction]
    interpreter = sys.modules.get("triton.runtime.interpreter")
    if interpreter is not None and hasattr(interpreter, "InterpretedFunction"):
        classes.append(interpreter.InterpretedFunction)
    saved = [(cls, cls.run) for cls in classes]
    saved_autotune = autotuner_module.Autotuner.run
    saved_heuristics = autotuner_module.Heuristics.run
    pending: dict[str, Any] = {}

    def jit_run(self: Any, *args: Any, grid: Any = None, warmup: bool = False, **kwargs: Any) -> None:
        if warmup:
            return None
        autotune = pending.pop("autotune", None)
        heuristics = pending.pop("heuristics", None)
        recorder.launch(self.fn, args, kwargs, grid, autotune, heuristics)
        return None

    def autotune_run(self: Any, *args: Any, **kwargs: Any) -> None:
        # One record per config: which one the tuner would pick is unknown, so detectors judge
        # the whole space (a config-dependent pattern counts only if every config has it).
        configs = [{"kwargs": dict(c.kwargs), "num_warps": c.num_warps, "num_stages": c.num_stages}
                   for c in self.configs]
        for variant, config in enumerate(self.configs):
            pending["autotune"] = {"configs": configs, "key": list(self.keys), "variant": variant,
                                   "variants": len(self.configs)}
            _pre_hook(config, {**dict(zip(self.arg_names, args)), **kwargs, **config.all_kwargs()})
            self.fn.run(*args, **kwargs, **config.all_kwargs())
        return None

    def heuristics_run(self: Any, *args: Any, **kwargs: Any) -> None:
        for name, heuristic in self.values.items():
            kwargs[name] = heuristic({**dict(zip(self.arg_names, args)), **kwargs})
        pending["heuristics"] = list(self.values)
        return self.fn.run(*args, **kwargs)

    for cls in classes:
        cls.run = jit_run
    autotuner_module.Autotuner.run = autotune_run
    autotuner_module.Heuristics.run = heuristics_run
    try:
        yield
    finally:
        for cls, run in saved:
            cls.run = run
        autotuner_module.Autotuner.run = saved_autotune
        autotuner_module.Heuristics.run = saved_heuristics


def _device_mode(recorder: Recorder, device: str = "meta"):
    """A TorchFunctionMode that keeps every tensor on `device` (meta, or the CPU) whatever device
    the code names, and records compute ops."""
    import torch
    from torch.overrides import TorchFunctionMode

    def to_device(value: Any) -> Any:
        if isinstance(value, (str, torch.device)) and str(value).split(":")[0] in ("cuda", "npu", "cpu", "meta"):
            return torch.device(device)
        return value

    class DeviceMode(TorchFunctionMode):
        def __torch_function__(self, func, types_, args=(), kwargs=None):
            kwargs = dict(kwargs or {})
            name = getattr(func, "__name__", str(func))
            if "device" in kwargs:
                kwargs["device"] = torch.device(device)
            if name in ("cuda", "npu", "cpu", "pin_memory") and args and isinstance(args[0], torch.Tensor):
                return args[0]
            if name == "to":
                args = tuple(to_device(a) for a in args)
                if "device" in kwargs:
                    kwargs["device"] = torch.device(device)
            result = func(*args, **kwargs)
            if recorder.in_forward and recorder.current is not None and name not in NON_COMPUTE:
                if not (name == "contiguous" and result is (args[0] if args else None)):
                    self._record(name, args, kwargs, result)
            return result

        def _record(self, name, args, kwargs, result):
            reads, writes, numel = [], [], 0
            with torch._C.DisableTorchFunction():
                for value in list(args) + list(kwargs.values()):
                    for tensor in _tensors_in(value):
                        reads.append(tensor.untyped_storage()._cdata)
                        numel = max(numel, tensor.numel())
                for tensor in _tensors_in(result):
                    writes.append(tensor.untyped_storage()._cdata)
                    numel = max(numel, tensor.numel())
            if name.endswith("_") and reads:
                writes.append(reads[0])
            recorder.alive.extend(_tensors_in([args, kwargs, result]))
            trace = recorder.current
            trace.torch_ops.append(TorchOp(name, len(trace.launches), recorder.caller_line(), reads, writes, numel))

    return DeviceMode()


def _is_constexpr_annotation(annotation: Any) -> bool:
    if isinstance(annotation, str):
        return annotation.split(".")[-1] == "constexpr"
    return getattr(annotation, "__name__", "") == "constexpr" or type(annotation).__name__ == "constexpr"


def _tensors_in(value: Any) -> Iterator[Any]:
    import torch

    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _tensors_in(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _tensors_in(item)


# A case the meta device cannot run (an op with no Meta kernel, `.item()`, `.tolist()`) is traced
# again on the CPU, with random floating-point fills left unfilled; only when its inputs and
# parameters fit in this much memory.
CPU_TRACE_MAX_BYTES = 2 << 30


def trace_cases(solution_path: str, problem_path: Optional[str], target: str = "nvidia") -> list[CaseTrace]:
    """Run the forward once per case of the problem on meta tensors and record every launch; a
    case whose forward needs real values is traced on the CPU instead (`CaseTrace.note` says so).

    Device queries (core counts, properties) are answered for `target` (`nvidia` or `ascend`)."""
    from ladder.runner.capture import device_stand_in, torch_npu_stand_in
    from ladder.runner.problem import ProblemError, load_problem, load_solution

    try:  # module-level device queries (DEVICE = driver.active.get_active_torch_device()) too
        with torch_npu_stand_in(), device_stand_in(compile_target(target)):
            problem = load_problem(problem_path)
            model_new = load_solution(solution_path)
    except ProblemError as error:
        return [CaseTrace(0, {}, error=str(error))]
    recorder = Recorder(solution_path)
    traces = []
    for index, case in enumerate(problem.cases):
        trace, footprint = _trace_case(recorder, problem, model_new, index, case, "meta", target)
        if trace.error is not None:
            why = trace.error
            if footprint is not None and footprint > CPU_TRACE_MAX_BYTES:
                trace.error = f"{why}; not retried on the CPU: inputs and parameters take {footprint / 2**30:.1f} GiB"
            else:
                retry, _ = _trace_case(recorder, problem, model_new, index, case, "cpu", target)
                if retry.error is None:
                    retry.note = f"traced on the CPU with unfilled random inputs (on meta tensors: {_first_sentence(why)})"
                    trace = retry
                else:
                    trace.error = f"{why}; on the CPU: {retry.error}"
        traces.append(trace)
    return traces


def trace_script(script_path: str, target: str = "nvidia") -> list[CaseTrace]:
    """A script's own launches (`ladder diagnose train.py`): the script run once as `__main__` on
    meta tensors, every launch recorded with the arguments the script really passes, so the
    detectors see its real shapes. One trace (case 0, no case values); launches past
    `MAX_LAUNCHES_PER_CASE` are cut (a training loop repeats itself). Torch ops are not recorded:
    a script does not say which of them are its hot path and which prepare data or log, so the
    fusion rules that read them stay out of it. The script's prints are
    swallowed (ladder's own output must stay parseable); when it fails part way (`.item()` on a
    meta tensor), the launches recorded until then are kept and the trace's note says why."""
    import io

    import torch

    from ladder.runner.capture import device_stand_in, torch_npu_stand_in
    from ladder.runner.capture.workload import run_script
    from ladder.runner.problem import one_line

    recorder = Recorder(script_path)
    trace = CaseTrace(0, {})
    recorder.current = trace
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()), \
                torch_npu_stand_in(), _patched_triton(recorder), device_stand_in(compile_target(target)), \
                torch.device("meta"), _device_mode(recorder, "meta"), torch.no_grad():
            run_script(script_path)
    except _TooManyLaunches:
        pass
    except Exception as error:  # the user's script: keep what it launched before failing
        if trace.launches:
            trace.note = f"the script stopped on meta tensors after {len(trace.launches)} launch(es): {one_line(error)}"
        else:
            trace.error = one_line(error)
    finally:
        recorder.current = None
        recorder.alive.clear()
    return [trace]


def _trace_case(recorder: Recorder, problem: Any, model_new: Any, index: int, case: dict[str, Any], device: str,
                target: str) -> tuple[CaseTrace, Optional[int]]:
    """One case's forward on `device` (meta, or cpu for data-dependent forwards), recorded; with the
    bytes its inputs and parameters take (None when they were never built)."""
    import torch

    from ladder.runner.capture import cpu_stand_in, device_stand_in
    from ladder.runner.problem import one_line

    trace = CaseTrace(index, dict(case))
    recorder.current = trace
    footprint = None
    fills = cpu_stand_in() if device == "cpu" else contextlib.nullcontext()
    try:
        with _patched_triton(recorder), device_stand_in(compile_target(target)), \
                torch.device(device), _device_mode(recorder, device), fills, torch.no_grad():
            with problem.applied(case):
                torch.manual_seed(index)
                init_inputs = problem.get_init_inputs()
                inputs = problem.get_inputs()
            model = model_new(*init_inputs)
            footprint = _bytes(inputs) + _bytes(init_inputs) + _bytes(list(model.parameters()) + list(model.buffers()))
            trace.input_storages = [t.untyped_storage()._cdata for t in _tensors_in(inputs)]
            recorder.in_forward = True
            try:
                output = model(*inputs)
            finally:
                recorder.in_forward = False
            trace.output_storages = [t.untyped_storage()._cdata for t in _tensors_in(output)]
    except _TooManyLaunches:
        pass
    except Exception as error:  # the user's forward: say why, keep going
        trace.error = one_line(error)
    finally:
        recorder.current = None
        recorder.alive.clear()
    return trace, footprint


def _first_sentence(text: str) -> str:
    return text.split(". ")[0].rstrip(".")


def _bytes(values: Any) -> int:
    import torch

    with torch._C.DisableTorchFunction():
        return sum(t.numel() * t.element_size() for t in _tensors_in(values))
