"""Runtime guards: what candidate code actually did while the runner watched.

Instruments installed in the process that runs candidate code, before any candidate is imported:

- ``LaunchTracer`` counts Triton launches and records, per launch, the kernel name, the stream, the
  thread and the memory of its tensor arguments. Launches are counted through Triton's
  ``knobs.runtime.launch_enter_hook`` (fired by the launcher for every launch, whichever Python
  path led there), except under the interpreter, whose launches bypass the launcher and are counted
  in ``InterpretedFunction.run``. Argument memory comes from wrapping the Python entry points
  (``JITFunction.run``, ``InterpretedFunction.run``); ``Autotuner.run``/``Heuristics.run`` are wrapped
  only to mark "inside Triton" so their own torch calls (benchmarking configs) are not blamed on
  the candidate. Launches made while an autotuner benchmarks its configs are marked ``tuning``
  (``ladder.runner.capture.tuning``): the guards see every launch, but only the others are the forward's
  own (``Window.forward_launches``), so an autotuned forward counts one launch per kernel, not the
  hundreds its first call makes while the autotuner times each config. The Python callbacks
  Triton runs on the candidate's behalf (heuristics, autotune pre/post hooks, config pre-hooks,
  prune and perf-model functions, a custom ``do_bench``, grid callables) are candidate code: while
  one runs, "inside Triton" is suspended, so the recorders see what it does; and a torch call that
  candidate code makes itself from inside Triton's machinery (a hook Triton calls that no one
  adopted, a kernel body under the interpreter) is the candidate's too
  (``LaunchTracer.triton_is_acting``).
- ``TorchOpRecorder`` (a ``TorchFunctionMode``) watches every torch call the candidate's forward
  makes outside Triton's machinery: allocation, views, shape queries and constants (zeros, full, arange) are allowed,
  anything else is recorded as a torch compute op. Every tensor the forward allocates with
  ``torch.empty*`` is filled with the poison pattern on the spot, so elements a kernel never writes
  are caught even when the allocator hands back memory holding an earlier correct answer. Not in
  timed calls, where the fill would be timed with the forward (``recording``'s ``poison_fresh``).
- ``BypassRecorder`` (a ``TorchDispatchMode``) backs the function-level recorder up one level
  down: an aten op that reaches the dispatcher without passing through a torch function the
  recorder judged (TorchScript, ``DisableTorchFunction``, C++ entry points) is recorded as compute.
- ``ladder.runner.plain``: a forward's outputs must be dense tensors, tuples or lists of them, or
  numbers, and a kernel's arguments plain values; any other object would run the candidate's code
  whenever the runner or Triton reads it.
- ``poison`` / ``unwritten_count``: the poison pattern is all bytes 0xFF (a NaN for every float
  type, -1 for signed integers), recognisable in outputs as "never written".
"""
from __future__ import annotations

import contextlib
import itertools
import threading
from dataclasses import dataclass
from typing import Any, Callable, Iterator, NamedTuple

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

from ladder.runner.capture.tuning import AutotuneWatch
from ladder.runner.own_builtins import BUILTINS as __builtins__  # noqa: F401  (see that module)
from ladder.runner.plain import foreign_argument, tensors_in
from ladder.runner.seal import reading, seal_window, tally

POISON_BYTE = 0xFF


# ---------------------------------------------------------------- memory spans and poison


def storage_span(tensor: torch.Tensor) -> tuple[int, int]:
    """(start address, size in bytes) of the whole storage behind a tensor."""
    storage = tensor.untyped_storage()
    return storage.data_ptr(), storage.nbytes()


def spans_overlap(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[0] + b[1] and b[0] < a[0] + a[1]


INPUT_ALIAS = "which shares memory with an input (a view of it, not a result a kernel wrote)"


def shares_memory(tensor: torch.Tensor, spans: list[tuple[int, int]]) -> bool:
    """Whether the tensor's storage overlaps one of ``spans`` (a window's kernel arguments; a call's
    inputs, where an output that is a view of one did no work to be right)."""
    return any(spans_overlap(storage_span(tensor), span) for span in spans)


def poison(tensor: torch.Tensor) -> None:
    """Fill the tensor's whole storage with the poison pattern."""
    if tensor.untyped_storage().nbytes():
        tensor.untyped_storage().fill_(POISON_BYTE)


def unwritten_count(tensor: torch.Tensor) -> int:
    """How many elements still hold the poison pattern (every byte 0xFF)."""
    if tensor.numel() == 0:
        return 0
    raw = tensor.detach().reshape(-1).contiguous().view(torch.uint8).reshape(tensor.numel(), tensor.element_size())
    return int((raw == POISON_BYTE).all(dim=1).sum().item())


# ---------------------------------------------------------------- launches


class Launch(NamedTuple):  # a tuple: no field of a launch recorded changes afterwards
    kernel: str
    stream: int | None
    thread: int
    tuning: bool = False  # made while an autotuner benchmarked its configs: not the forward's own


@dataclass
class Window:
    """What Triton did while one owner (a solution's forward, a compiled reference) was running.

    What it holds is read after the call, to judge it: its records are tuples the tracer replaces
    whole (``_extended``), and the window is sealed as it is made and as each record is added
    (``ladder.runner.seal``: its attributes, its class, no method shadowed), so candidate code can
    neither add a span of its own in place nor answer ``wrote`` or ``streams`` for it."""

    owner: str
    thread: int
    launches: tuple[Launch, ...] = ()
    argument_spans: tuple[tuple[int, int], ...] = ()

    def streams(self) -> set[int]:
        return {launch.stream for launch in self.launches if launch.stream is not None}

    def foreign_threads(self) -> int:
        return sum(1 for launch in self.launches if launch.thread != self.thread)

    def forward_launches(self) -> list[Launch]:
        """The launches of the forward itself: all but those an autotuner made timing its configs."""
        return [launch for launch in self.launches if not launch.tuning]

    def tuning_launches(self) -> int:
        return sum(1 for launch in self.launches if launch.tuning)

    def wrote(self, tensor: torch.Tensor) -> bool:
        """Whether the tensor's memory was passed to some Triton kernel in this window."""
        return shares_memory(tensor, self.argument_spans)


class LaunchTracer:
    """Counts Triton launches per window; launches outside every window are counted in ``stray``.

    A launch's stream is the stream that was current when the candidate called into Triton (read at
    the outermost wrapped entry point), not the one the launch itself reports: an autotuner that
    benchmarks configs inside a CUDA-graph capture launches on its own capture stream, which is not
    the candidate's doing. Launches that bypass the wrapped entry points (a compiled kernel called
    directly) report their own stream.
    """

    def __init__(self, hook_fires: bool, current_stream: Callable[[], int | None] = lambda: None):
        self.hook_fires = hook_fires
        self.current_stream = current_stream
        # Set where candidate code runs (``ladder.runner.sentinel``): whether the torch call being recorded
        # was made by candidate code itself.
        self.called_by_candidate: Callable[[], bool] | None = None
        # Set where candidate code runs: refuses a request of the candidate's (raises).
        self.refuse: Callable[[str], None] | None = None
        self.sentinel: Any = None  # set where candidate code runs: whose seal covers each window (``watch``)
        self.window: Window | None = None
        # Launches outside every window, a count that only grows: a list of them could be emptied in
        # place by candidate code; the runner reads how far the count moved during a call (``strays_since``).
        self.stray = itertools.count()
        self._inside = threading.local()
        self._originals: list[tuple[type, str, Any]] = []
        self._autotune = AutotuneWatch()

    # -- windows

    @contextlib.contextmanager
    def watch(self, owner: str) -> Iterator[Window]:
        window = Window(owner=owner, thread=threading.get_ident())
        _extended(self, window)
        previous, self.window = self.window, window
        try:
            yield window
        finally:
            self.window = previous

    def strays_since(self, mark: int) -> int:
        """How many launches happened outside every window since ``mark`` (a reading of ``stray``)."""
        return reading(self.stray) - mark

    def inside_triton(self) -> bool:
        return getattr(self._inside, "depth", 0) > 0

    def triton_is_acting(self) -> bool:
        """Whether a torch call made now is Triton's own: inside its machinery, and not made by
        candidate code Triton called back without knowing it for one (a pre-run or launch hook, a
        config's pre-hook made after the autotuner was built, a kernel body under the interpreter)."""
        return self.inside_triton() and not (self.called_by_candidate is not None and self.called_by_candidate())

    @contextlib.contextmanager
    def candidate_code(self) -> Iterator[None]:
        """Suspend "inside Triton" while a callback of the candidate's runs from Triton's machinery."""
        depth = getattr(self._inside, "depth", 0)
        self._inside.depth = 0
        try:
            yield
        finally:
            self._inside.depth = depth

    def as_candidate(self, function: Callable | None) -> Callable | None:
        """``function`` wrapped so that it runs as candidate code (None stays None)."""
        if function is None or getattr(function, "__ladder_candidate__", False):
            return function
        tracer = self

        def callback(*args, **kwargs):
            with tracer.candidate_code():
                return function(*args, **kwargs)

        callback.__ladder_candidate__ = True
        callback.__wrapped__ = function
        return callback

    # -- installation

    def install(self) -> None:
        from triton import knobs
        from triton.runtime.autotuner import Autotuner, Heuristics
        from triton.runtime.jit import JITFunction

        if self.hook_fires:
            knobs.runtime.launch_enter_hook.add(self._on_launch_hook)
        self._wrap(JITFunction, "run", record_arguments=True, count=False)
        self._wrap(Autotuner, "run", record_arguments=False, count=False)
        self._wrap(Heuristics, "run", record_arguments=False, count=False)
        if not self.hook_fires:
            from triton.runtime.interpreter import InterpretedFunction

            self._wrap(InterpretedFunction, "run", record_arguments=True, count=True)
        self._wrap_init(Autotuner, self._candidate_autotune_callbacks)
        self._wrap_init(Heuristics, self._candidate_heuristics)
        self._autotune.install()

    def tuning(self) -> bool:
        """Whether an autotuner on this thread is benchmarking its configs right now."""
        return self._autotune.tuning()

    def _wrap_init(self, owner: type, adopt: Callable[[Any], None]) -> None:
        """Every instance built from now on gets its candidate callbacks wrapped (``as_candidate``)."""
        original = owner.__init__

        def init(self_, *args, **kwargs):
            original(self_, *args, **kwargs)
            adopt(self_)

        init.__wrapped__ = original
        self._originals.append((owner, "__init__", original))
        owner.__init__ = init

    def _candidate_autotune_callbacks(self, tuner: Any) -> None:
        if tuner.user_defined_pre_hook:
            tuner.pre_hook = self.as_candidate(tuner.pre_hook)
        if tuner.user_defined_post_hook:
            tuner.post_hook = self.as_candidate(tuner.post_hook)
        tuner.perf_model = self.as_candidate(tuner.perf_model)
        tuner.early_config_prune = self.as_candidate(tuner.early_config_prune)
        tuner._do_bench = self.as_candidate(tuner._do_bench)
        for config in tuner.configs:
            config.pre_hook = self.as_candidate(getattr(config, "pre_hook", None))

    def _candidate_heuristics(self, heuristics: Any) -> None:
        heuristics.values = {name: self.as_candidate(value) for name, value in heuristics.values.items()}

    def uninstall(self) -> None:
        from triton import knobs

        knobs.runtime.launch_enter_hook.remove(self._on_launch_hook)
        self._autotune.uninstall()
        for owner, name, original in reversed(self._originals):
            setattr(owner, name, original)
        self._originals.clear()

    def _wrap(self, owner: type, name: str, record_arguments: bool, count: bool) -> None:
        original = getattr(owner, name)
        tracer = self

        def run(self_, *args, grid=None, warmup=False, **kwargs):
            if callable(grid):
                grid = tracer.as_candidate(grid)
            hooks = getattr(self_, "pre_run_hooks", None)
            if hooks:  # the kernel's pre-run hooks are the candidate's, however they were registered
                hooks[:] = [tracer.as_candidate(hook) for hook in hooks]
            if tracer.refuse is not None and not tracer.inside_triton():
                for value in (*args, *kwargs.values()):
                    foreign = foreign_argument(value)
                    if foreign:
                        tracer.refuse(f"passed a {foreign} object to a Triton kernel (Triton reads its attributes "
                                      "and hashes it inside its launcher, running its code unrecorded)")
            if not tracer.inside_triton():
                tracer._inside.entry_stream = tracer.current_stream()
            # From here on, torch calls (the tracer's own included) are Triton's, not the candidate's.
            tracer._inside.depth = getattr(tracer._inside, "depth", 0) + 1
            try:
                if not warmup:
                    if record_arguments and tracer.window is not None:
                        spans = (storage_span(t) for value in (*args, *kwargs.values()) for t in tensors_in(value))
                        _extended(tracer, tracer.window, argument_spans=tuple(spans))
                    if count:
                        tracer._record(getattr(getattr(self_, "fn", None), "__name__", "kernel"), None)
                return original(self_, *args, grid=grid, warmup=warmup, **kwargs)
            finally:
                tracer._inside.depth -= 1

        run.__wrapped__ = original
        self._originals.append((owner, name, original))
        setattr(owner, name, run)

    def _on_launch_hook(self, metadata) -> None:
        data = metadata.get() if metadata is not None else {}
        stream = self._inside.entry_stream if self.inside_triton() else data.get("stream")
        self._record(str(data.get("name", "kernel")), stream)

    def _record(self, kernel: str, stream: int | None) -> None:
        launch = Launch(kernel=kernel, stream=stream, thread=threading.get_ident(), tuning=self.tuning())
        if self.window is None:
            next(self.stray)
        else:
            _extended(self, self.window, launches=(launch,))


def _extended(tracer: LaunchTracer, window: Window, **added: tuple) -> None:
    """Add to ``window``'s records, each replaced whole, and seal the window as it is now (once the
    tracer's sentinel holds a seal). Not a method: candidate code that reached the tracer would call it
    to add a span of its own."""
    for name, values in added.items():
        setattr(window, name, getattr(window, name) + values)
    if tracer.sentinel is not None:
        seal_window(tracer.sentinel, window)


# ---------------------------------------------------------------- torch calls


ALLOCATION = frozenset({"empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided"})
CONSTANTS = frozenset({"zeros", "zeros_like", "new_zeros", "zero_", "ones", "ones_like", "new_ones", "full",
                       "full_like", "new_full", "fill_", "tensor", "as_tensor", "scalar_tensor", "arange"})
VIEWS = frozenset({"view", "view_as", "t", "transpose", "permute",
                   "expand", "expand_as", "unsqueeze", "squeeze", "unflatten", "narrow", "select",
                   "split", "chunk", "unbind", "as_strided", "movedim", "swapaxes", "swapdims", "detach",
                   "__iter__", "broadcast_to", "broadcast_tensors", "view_as_real", "view_as_complex",
                   "atleast_1d", "atleast_2d", "atleast_3d"})
# Views where the strides allow, copies where they do not (``x.t().contiguous()`` is a whole
# transpose): free only when the result shares the input's memory, as basic indexing is.
VIEWS_OR_COPIES = frozenset({"reshape", "reshape_as", "contiguous", "flatten", "ravel", "__getitem__"})
QUERIES = frozenset({"size", "stride", "dim", "ndimension", "numel", "nelement", "data_ptr", "storage_offset",
                     "is_contiguous", "element_size", "__get__", "__len__", "is_floating_point", "is_complex",
                     "get_device", "__hash__", "__getstate__"})
# Constants built from host data: free only for a few plain numbers (``small_host_data``).
HOST_DATA = frozenset({"tensor", "as_tensor", "scalar_tensor"})
MAX_HOST_CONSTANTS = 64
# Grad-mode switches (``torch.no_grad()`` and friends in a forward) compute nothing.
GRAD_MODE = frozenset({"_set_grad_enabled", "set_grad_enabled", "is_grad_enabled", "_enter_inference_mode",
                       "_exit_inference_mode", "is_inference_mode_enabled", "_DisableFuncTorch"})
# Conversions are free (and allowed) only when they return the tensor itself.
NO_OP_ONLY = frozenset({"to", "type", "float", "half", "bfloat16", "double", "int", "long", "cuda", "npu",
                        "cpu"})


def torch_call_name(func: Any) -> str:
    """A readable name for a torch callable: ``torch.matmul``, ``Tensor.add``, ``aten.mm``."""
    name = getattr(func, "__name__", repr(func))
    qualname = getattr(func, "__qualname__", "") or ""
    module = getattr(func, "__module__", None) or ""
    if module.startswith("torch._ops"):
        return str(func)  # "aten.mm"
    if qualname.startswith("TensorBase.") or qualname.startswith("Tensor."):
        return f"Tensor.{name}"
    if module == "torch.nn.functional" or module == "torch._C._nn":
        return f"torch.nn.functional.{name}"
    return f"torch.{name}"


_judged = threading.local()  # depth of torch calls the function-level recorder is handling


@contextlib.contextmanager
def judged() -> Iterator[None]:
    """Aten ops run inside this were reached through a torch call a recorder saw (or by the runner)."""
    _judged.depth = getattr(_judged, "depth", 0) + 1
    try:
        yield
    finally:
        _judged.depth -= 1


@contextlib.contextmanager
def unjudged() -> Iterator[None]:
    """Start afresh: what runs inside is judged on its own (the body of a registered Triton op)."""
    depth, _judged.depth = getattr(_judged, "depth", 0), 0
    try:
        yield
    finally:
        _judged.depth = depth


def op_name(func: Any) -> str | None:
    """``namespace::name`` of an operator overload or packet (``mylib::add``), else None."""
    qualified = getattr(func, "_qualified_op_name", None)
    if qualified:
        return qualified
    namespace, name = getattr(func, "namespace", None), getattr(func, "_opname", None)
    return f"{namespace}::{name}" if namespace and name else None


class TorchOpRecorder(TorchFunctionMode):
    """Records torch compute calls made by the candidate, poisons its fresh allocations.

    Calls made while Triton's own machinery runs (launch argument handling, the autotuner's
    benchmarking, the interpreter's host copies) are not the candidate's and are ignored, unless
    candidate code Triton called back made them itself (``LaunchTracer.triton_is_acting``).
    Operators registered through ``torch.library.triton_op`` (names in ``triton_ops``) are allowed:
    every kernel registered for them runs under recorders of its own (``ladder.runner.sentinel`` wraps
    them), and launches Triton kernels.
    """

    def __init__(self, tracer: LaunchTracer, triton_ops: frozenset[str] = frozenset(),
                 compute_calls: dict[str, int] | None = None, poison_fresh: bool = True):
        super().__init__()
        self.tracer = tracer
        self.poison_fresh = poison_fresh
        self.triton_ops = triton_ops
        self.compute_calls: dict[str, int] = compute_calls if compute_calls is not None else {}

    def __torch_function__(self, func, types, args=(), kwargs=None):
        name = getattr(func, "__name__", "")
        foreign = [kind for kind in types if not issubclass(kind, torch.Tensor)]
        if foreign and not self.tracer.triton_is_acting():
            # An object of the candidate's that intercepts torch calls: what its handler does under
            # this call is seen by neither recorder, whatever the call is.
            label = f"{torch_call_name(func)} on a {foreign[0].__qualname__} (intercepts torch calls)"
            tally(self.compute_calls, label)
        with judged():
            try:
                result = func(*args, **(kwargs or {}))
            except Exception:  # a call that failed was still asked for (numpy() of a device tensor)
                if not self.tracer.triton_is_acting() and self._never_allowed(name, func):
                    self._count(func)
                raise
            if self.tracer.triton_is_acting():
                return result
            if name in ALLOCATION:
                if self.poison_fresh:
                    for tensor in tensors_in(result):
                        poison(tensor)
                return result
        if not self._allowed(name, func, args, result):
            self._count(func)
        return result

    def _never_allowed(self, name: str, func: Any) -> bool:
        """Compute whatever its arguments and result (what a call that failed is judged by)."""
        sometimes = VIEWS | VIEWS_OR_COPIES | QUERIES | GRAD_MODE | CONSTANTS | ALLOCATION | NO_OP_ONLY
        return name not in sometimes and op_name(func) not in self.triton_ops

    def _count(self, func: Any) -> None:
        label = torch_call_name(func)
        tally(self.compute_calls, label)

    def _allowed(self, name: str, func: Any, args: tuple, result: Any) -> bool:
        if name in VIEWS or name in QUERIES or name in GRAD_MODE:
            return True
        if op_name(func) in self.triton_ops:
            return True
        if name in CONSTANTS:
            return name not in HOST_DATA or small_host_data(args)
        if name in NO_OP_ONLY:
            return bool(args) and result is args[0]
        if name in VIEWS_OR_COPIES:  # basic indexing is a view; advanced indexing gathers
            source = args[0] if args else None
            return (isinstance(source, torch.Tensor) and isinstance(result, torch.Tensor)
                    and result.untyped_storage().data_ptr() == source.untyped_storage().data_ptr())
        return False


def small_host_data(args: tuple) -> bool:
    """Whether ``torch.tensor``'s data is a few plain numbers (a constant), not values computed on
    the host (an array, a tensor, or a long list) handed back as a result."""
    count = 0
    pending = list(args[:1])
    while pending:
        value = pending.pop()
        if isinstance(value, (list, tuple)):
            pending.extend(value)
        elif isinstance(value, (bool, int, float, complex)):
            count += 1
        else:
            return False
        if count > MAX_HOST_CONSTANTS:
            return False
    return True


class BypassRecorder(TorchDispatchMode):
    """Aten ops that reached the dispatcher without a torch call ``TorchOpRecorder`` judged.

    In candidate code that is work hidden from the function-level recorder: a TorchScript or
    traced callable, ``torch._C.DisableTorchFunction``, a C++ entry point. Triton's own machinery
    is exempt, as for the function-level recorder, and so are the operators registered through
    ``torch.library.triton_op`` (an autograd kernel registered for one dispatches it again below).
    """

    def __init__(self, tracer: LaunchTracer, compute_calls: dict[str, int], triton_ops: frozenset[str] = frozenset()):
        super().__init__()
        self.tracer = tracer
        self.compute_calls = compute_calls
        self.triton_ops = triton_ops

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if (not getattr(_judged, "depth", 0) and not self.tracer.triton_is_acting()
                and op_name(func) not in self.triton_ops):
            label = f"{func} (outside every torch call the recorder saw)"
            tally(self.compute_calls, label)
        return func(*args, **(kwargs or {}))


def _run_without_the_compiler(mode: type) -> None:
    """torch wraps a dispatch mode's handler so that ``torch.compile`` never traces into it, and that
    wrapper imports torch's compiler (seconds per process) on the first call. Nothing compiles while
    a recorder runs (candidates may not, see ``ladder.runner.sentinel``): the handler is marked as already
    wrapped, so it runs as it is. A torch without that wrapper is left alone."""
    handler = getattr(mode.__torch_dispatch__, "__wrapped__", None)
    if handler is not None:
        setattr(handler, "__dynamo_disable", handler)


_run_without_the_compiler(BypassRecorder)


@contextlib.contextmanager
def recording(tracer: LaunchTracer, compute_calls: dict[str, int], triton_ops: frozenset[str],
              poison_fresh: bool = True) -> Iterator[tuple[TorchOpRecorder, BypassRecorder]]:
    """Both recorders, active together, sharing one tally of compute calls.

    ``poison_fresh`` False in timed calls: the fill is device work on the forward's stream, between
    the call's events, and on a memory-bound kernel it is a large share of the time (softmax on the
    H200: +31%, since the fill writes the whole output once more). There the judge poisons what
    the allocator will hand back before the call instead (``Contestant.arm``)."""
    function_level = TorchOpRecorder(tracer, triton_ops, compute_calls, poison_fresh)
    dispatch_level = BypassRecorder(tracer, compute_calls, triton_ops)
    with dispatch_level, function_level:
        yield function_level, dispatch_level


# The mode stacks are read through torch's C functions, bound now: candidate code that replaced the
# Python helpers torch reads them with (or the modes' ``__enter__``) could answer with recorders it
# never let on the stack.
_function_stack_length, _function_stack_at = torch._C._len_torch_function_stack, torch._C._get_function_stack_at
_dispatch_stack_length, _dispatch_stack_at = torch._C._len_torch_dispatch_stack, torch._C._get_dispatch_stack_at


def stacks_intact(function_level: TorchOpRecorder, dispatch_level: BypassRecorder) -> str | None:
    """Whether the recorders' modes are on top of torch's mode stacks, where ``recording`` put them:
    checked as they go on (entering them is code candidate code can reach) and after each call."""
    length = _function_stack_length()
    if not length or _function_stack_at(length - 1) is not function_level:
        return "candidate code switched the torch-call recorder off (torch function mode stack changed)"
    length = _dispatch_stack_length()
    if not length or _dispatch_stack_at(length - 1) is not dispatch_level:
        return "candidate code switched the dispatch recorder off (torch dispatch mode stack changed)"
    return None


def recorder_code() -> frozenset:
    """The code of the frames between a torch call and its caller while a recorder judges it."""
    return frozenset({TorchOpRecorder.__torch_function__.__code__, BypassRecorder.__torch_dispatch__.__code__,
                      LaunchTracer.triton_is_acting.__code__})


class ReferenceOpRecorder(TorchFunctionMode):
    """Records the names of the torch calls a reference makes (to see whether it contracts)."""

    def __init__(self):
        super().__init__()
        self.names: set[str] = set()

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.names.add(getattr(func, "__name__", ""))
        return func(*args, **(kwargs or {}))


# Torch calls that contract over a dimension and run on tensor cores: their presence in a reference
# is what makes tf32 a fair precision for an fp32 Triton port (tl.dot's default).
CONTRACTIONS = frozenset({"matmul", "mm", "bmm", "addmm", "addbmm", "baddbmm", "linear", "bilinear", "einsum",
                          "tensordot", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                          "conv_transpose3d", "scaled_dot_product_attention", "__matmul__", "__rmatmul__",
                          "addmv", "mv", "inner", "dot", "vdot"})
