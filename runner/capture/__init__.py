"""Capture every Triton kernel a forward (or any Python script) compiles and launches.

A `CapturedKernel` is one compiled specialization of one `@triton.jit` function: its IR at every
stage (TTIR, TTGIR, LLVM IR, PTX, SASS as text), the specialization it was compiled for, its
compile metadata, its resource usage, and the grids it was launched with, per input case. It is a
plain JSON-serialisable record so that rung 3 can read kernels captured on another machine.

Two ways to fill it:
- on a GPU, from the JIT itself, through `triton.knobs.runtime` hooks (`JitCapture`, `capture`);
- on a CPU, through the compile-only `aot` backend (`runner.backends.aot`), which reproduces the
  JIT's specialization from the actual arguments.
Both drive the same workload runner (`run_workload`): a problem/solution pair case by case, or a
script. Imports nothing beyond torch, triton and the standard library.
"""
from __future__ import annotations

import contextlib
import gc
import sys
import types
from pathlib import Path
from typing import Any, Iterator

from runner.capture.hardware import DEFAULT_DEVICE_TARGETS, hardware_table
from runner.capture.interceptor import LaunchInterceptor
from runner.capture.labels import merge_and_label
from runner.capture.nvidia import nvidia_record
from runner.capture.record import STAGE_ORDER, CapturedKernel, jsonable, load, save, source_position
from runner.capture.workload import is_script, resolve_problem, run_script, run_target


@contextlib.contextmanager
def torch_npu_stand_in() -> Iterator[None]:
    """`import torch_npu` in an Ascend solution, run on a machine without it: an empty module stands
    in, and `Tensor.npu()` keeps a tensor where it is, since such runs only record what the forward
    launches (tensors stay on the CPU or the meta device). `torch_npu.npu` is `torch.npu`, which
    `device_stand_in` provides while a forward runs."""
    import importlib.util
    import types

    import torch

    if "torch_npu" in sys.modules or importlib.util.find_spec("torch_npu") is not None:
        yield
        return
    module = types.ModuleType("torch_npu")

    def forward_npu(name: str) -> Any:
        if name == "npu" and hasattr(torch, "npu"):
            return torch.npu
        raise AttributeError(f"module 'torch_npu' has no attribute {name!r}")

    module.__getattr__ = forward_npu  # type: ignore[method-assign]
    sys.modules["torch_npu"] = module
    torch.Tensor.npu = lambda self, *args, **kwargs: self
    try:
        yield
    finally:
        sys.modules.pop("torch_npu", None)
        del torch.Tensor.npu


class _StandInDriver:
    """What a forward may ask Triton's active driver (`triton.runtime.driver.active`) about the
    device: its properties (core counts for persistent and core-count grids), the current device
    and the compile target, answered from the target's hardware table."""

    def __init__(self, target: Any, properties: dict[str, Any], interface: Any, torch_device: Any) -> None:
        self.target = target
        self.interface = interface
        self.torch_device = torch_device
        self.utils = types.SimpleNamespace(
            get_device_properties=lambda *args, **kwargs: dict(properties),
            get_aicore_num=lambda: properties.get("num_aicore"),
            get_aivector_core_num=lambda: properties.get("num_vectorcore"))

    @staticmethod
    def is_active() -> bool:
        return True

    def get_current_target(self) -> Any:
        return self.target

    @staticmethod
    def get_current_device() -> int:
        return 0

    @staticmethod
    def set_current_device(device: Any) -> None:
        return None

    def get_device_interface(self) -> Any:
        return self.interface

    def get_active_torch_device(self) -> Any:
        return self.torch_device

    @staticmethod
    def get_current_stream(device: Any = None) -> int:
        return 0


@contextlib.contextmanager
def device_stand_in(target: str) -> Iterator[dict[str, Any]]:
    """Answer the device queries a forward makes, for `target`'s device, on a machine without it.

    Solutions size their grids from the device (`torch.cuda.get_device_properties(...)
    .multi_processor_count`, Triton-Ascend's `driver.active.utils.get_device_properties(...)
    ["num_vectorcore"]`); without a device those raise ("0 active drivers") and the forward is
    lost. While active, `torch.cuda` (NVIDIA) or a `torch.npu` namespace (Ascend, when torch_npu is
    absent) and Triton's active driver answer from `kb/hardware`. Yields the hardware table."""
    import torch
    from triton.backends.compiler import GPUTarget
    from triton.runtime.driver import driver

    table = hardware_table(target)
    backend = DEFAULT_DEVICE_TARGETS.get(target, target).split(":")[0]
    saved_driver = dict(vars(driver))
    restore: list[tuple[Any, str, Any]] = []

    def patch(owner: Any, name: str, value: Any) -> None:
        restore.append((owner, name, getattr(owner, name, _MISSING)))
        setattr(owner, name, value)

    if backend == "npu":
        chip = DEFAULT_DEVICE_TARGETS["npu"].split(":")[1] if ":" not in target else target.split(":")[1]
        aicores, vectorcores = table.get("aicore_count", 20), table.get("vectorcore_count", 40)
        properties = {"max_shared_mem": 1, "num_aicore": aicores, "num_vectorcore": vectorcores}
        interface = getattr(torch, "npu", None)
        if interface is None:
            device_props = types.SimpleNamespace(name=table.get("name", chip), cube_core_num=aicores,
                                                 vector_core_num=vectorcores)
            interface = types.SimpleNamespace(
                current_device=lambda: 0, device_count=lambda: 1, is_available=lambda: True,
                set_device=lambda *a, **k: None, synchronize=lambda *a, **k: None,
                get_device_name=lambda *a, **k: table.get("name", chip),
                get_device_properties=lambda *a, **k: device_props)
            patch(torch, "npu", interface)
        gpu_target, torch_device = GPUTarget("npu", chip, 0), "npu:0"  # torch has no "npu" device type
    else:
        capability = int(str(target).split(":")[1]) if ":" in str(target) else 90
        sms, smem = table.get("sm_count", 132), table.get("shared_memory_per_block", 232448)
        warp, regs = table.get("warp_size", 32), table.get("registers_per_sm", 65536)
        properties = {"max_shared_mem": smem, "max_num_regs": regs, "multiprocessor_count": sms, "warpSize": warp,
                      "sm_clock_rate": 1980000, "mem_clock_rate": 2619000, "mem_bus_width": 6144}
        device_props = types.SimpleNamespace(
            name=table.get("name", "cuda"), major=capability // 10, minor=capability % 10, multi_processor_count=sms,
            total_memory=141 * 2 ** 30, max_shared_memory_per_block_optin=smem, regs_per_multiprocessor=regs,
            warp_size=warp, L2_cache_size=table.get("l2_bytes", 0))
        interface = torch.cuda
        for name, value in {"get_device_properties": lambda *a, **k: device_props, "current_device": lambda: 0,
                            "synchronize": lambda *a, **k: None, "device_count": lambda: 1,
                            "get_device_capability": lambda *a, **k: (device_props.major, device_props.minor),
                            "get_device_name": lambda *a, **k: device_props.name}.items():
            patch(torch.cuda, name, value)
        gpu_target, torch_device = GPUTarget("cuda", capability, warp), torch.device("cuda", 0)
    driver.set_active(_StandInDriver(gpu_target, properties, interface, torch_device))
    try:
        yield table
    finally:
        vars(driver).clear()
        vars(driver).update(saved_driver)
        for owner, name, value in reversed(restore):
            if value is _MISSING:
                delattr(owner, name)
            else:
                setattr(owner, name, value)


_MISSING = object()


REAL_FILL_ELEMENTS = 1 << 20


def cpu_stand_in() -> Any:
    """A torch function mode for running a forward on the CPU only to see what it launches.

    `device="cuda"` or `"npu"`, `.cuda()` and `.to("cuda"/"npu")` stay on the CPU; random floating-point fills
    (randn, rand, normal_, uniform_: inputs and weight init) of more than `REAL_FILL_ELEMENTS`
    elements become `empty`, which costs no time or resident memory however large the case, since
    no kernel ever reads the values. Smaller fills stay real (and seeded): such tensors are what a
    data-dependent forward steers its launches by (routing scores, lengths), and uninitialised
    memory would make those launches depend on whatever the allocator handed back.
    """
    import math

    import torch
    from torch.overrides import TorchFunctionMode

    in_place_fills = {torch.Tensor.normal_, torch.Tensor.uniform_}

    def large(size: Any) -> bool:
        size = size[0] if len(size) == 1 and isinstance(size[0], (tuple, list, torch.Size)) else size
        return math.prod(int(n) for n in size) > REAL_FILL_ELEMENTS

    def on_device(device: Any) -> bool:
        return (isinstance(device, str) and device.split(":")[0] in ("cuda", "npu")) or \
            (isinstance(device, torch.device) and device.type in ("cuda", "npu"))

    class CpuStandIn(TorchFunctionMode):
        def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
            kwargs = dict(kwargs or {})
            if func is torch.Tensor.cuda or (func in in_place_fills and args[0].numel() > REAL_FILL_ELEMENTS):
                return args[0]
            if on_device(kwargs.get("device")):
                kwargs["device"] = "cpu"
            if func is torch.Tensor.to and len(args) > 1 and on_device(args[1]):
                args = (args[0], "cpu", *args[2:])
            if func in (torch.randn_like, torch.rand_like) and args[0].numel() > REAL_FILL_ELEMENTS:
                kwargs.pop("generator", None)
                return torch.empty_like(*args, **kwargs)
            if func in (torch.randn, torch.rand) and large(args):
                kwargs.pop("generator", None)
                return torch.empty(*args, **kwargs)
            return func(*args, **kwargs)

    return CpuStandIn()


# --------------------------------------------------------------------------------------------
# Capture through the JIT on a GPU
# --------------------------------------------------------------------------------------------

class JitCapture:
    """Collects every kernel the JIT compiles and every launch while active (GPU).

    Use as `with JitCapture() as session: ...; session.kernels()`, or `capture()` for a workload.
    Uses `knobs.runtime.jit_post_compile_hook` (compiled kernel + its specialization) and
    `knobs.runtime.launch_enter_hook` (each launch). The launch hook sees no grid, so while active
    each captured JITFunction gets a `launch_metadata` that adds it (chained to the user's own).
    A kernel compiled before the capture began is found by its function handle when it launches.
    Compiles during the capture bypass Triton's on-disk cache (`fresh_compiles`).
    """

    def __init__(self) -> None:
        self.case: int | None = None
        self._compiled: list[tuple[Any, Any, dict]] = []   # (jit_fn, CompiledKernel, compile info)
        self._launches: list[tuple[int, int | None, list[int] | None]] = []  # (handle, case, grid)
        self._saved_metadata: dict[int, tuple[Any, Any]] = {}
        self._previous_hook = None
        self._tuning = 0

    def __enter__(self) -> "JitCapture":
        from triton import knobs
        from triton.runtime.autotuner import Autotuner

        self._previous_hook = knobs.runtime.jit_post_compile_hook
        self._fresh = fresh_compiles()
        self._fresh.__enter__()
        knobs.runtime.jit_post_compile_hook = self._on_compiled
        knobs.runtime.launch_enter_hook.add(self._on_launch)
        for jit_fn in _live_jit_functions():  # kernels the JIT already holds still report their grids
            self._report_grid(jit_fn)
        # Launches made while the autotuner times its configs are not part of the forward.
        self._bench, session = Autotuner._bench, self

        def timed_apart(autotuner: Any, *args: Any, **kwargs: Any) -> Any:
            session._tuning += 1
            try:
                return session._bench(autotuner, *args, **kwargs)
            finally:
                session._tuning -= 1

        Autotuner._bench = timed_apart
        return self

    def __exit__(self, *exc: Any) -> None:
        from triton import knobs
        from triton.runtime.autotuner import Autotuner

        knobs.runtime.jit_post_compile_hook = self._previous_hook
        knobs.runtime.launch_enter_hook.remove(self._on_launch)
        Autotuner._bench = self._bench
        self._fresh.__exit__(*exc)
        for jit_fn, original in self._saved_metadata.values():
            jit_fn.launch_metadata = original
        self._saved_metadata.clear()

    def _on_compiled(self, *, key: Any, repr: str, fn: Any, compile: dict, is_manual_warmup: bool,
                     already_compiled: bool) -> None:
        jit_fn = fn.jit_function
        kernel = jit_fn.device_caches[compile["device"]][0][key]
        self._compiled.append((jit_fn, kernel, compile))
        self._report_grid(jit_fn)
        if self._previous_hook is not None:
            self._previous_hook(key=key, repr=repr, fn=fn, compile=compile, is_manual_warmup=is_manual_warmup,
                                already_compiled=already_compiled)

    def _report_grid(self, jit_fn: Any) -> None:
        if id(jit_fn) in self._saved_metadata:
            return
        original = jit_fn.launch_metadata

        def with_grid(grid: Any, metadata: Any, args: dict) -> dict:
            extra = dict(original(grid, metadata, args)) if original is not None else {}
            return {**extra, "ladder_grid": [int(size) for size in grid]}

        self._saved_metadata[id(jit_fn)] = (jit_fn, original)
        jit_fn.launch_metadata = with_grid

    def _on_launch(self, metadata: Any) -> None:
        if self._tuning:
            return
        data = metadata.get()
        grid = data.get("ladder_grid")
        self._launches.append((data["function"], self.case, list(grid) + [1] * (3 - len(grid)) if grid else None))

    def _find_precompiled(self, handle: int) -> None:
        """A launch of a kernel compiled before the capture: find it among live JITFunctions."""
        for jit_fn in _live_jit_functions():
            for caches in list(jit_fn.device_caches.values()):
                for kernel in caches[0].values():
                    if getattr(kernel, "function", None) == handle:
                        info = {"signature": kernel.src.signature, "constants": kernel.src.constants,
                                "configs": [kernel.src.attrs]}
                        self._compiled.append((jit_fn, kernel, info))
                        return

    def kernels(self) -> list[CapturedKernel]:
        """The captured kernels, one per distinct compiled kernel, with their launches."""
        by_handle: dict[int, CapturedKernel] = {}
        records = []
        known = {getattr(kernel, "function", None) for _, kernel, _ in self._compiled}
        for handle, _, _ in self._launches:
            if handle not in known:
                self._find_precompiled(handle)
                known.add(handle)
        for jit_fn, kernel, info in self._compiled:
            kernel = kernel.result() if hasattr(kernel, "result") else kernel  # async compile mode
            record = nvidia_record(kernel, jit_fn, backend="cuda", signature=info["signature"],
                                   constexprs=info["constants"], attrs=info["configs"][0])
            records.append(record)
            if kernel.function is not None:
                by_handle[kernel.function] = record
        for handle, case, grid in self._launches:
            if handle in by_handle:
                by_handle[handle].launches.append({"case": case, "grid": grid})
        return merge_and_label(records)


def _live_jit_functions() -> list[Any]:
    from triton.runtime.jit import JITFunction

    # type(), not isinstance(): isinstance would consult lazy proxies' __class__ (and their warnings).
    return [obj for obj in gc.get_objects() if issubclass(type(obj), JITFunction)]


@contextlib.contextmanager
def fresh_compiles() -> Iterator[None]:
    """Compile instead of reusing Triton's on-disk cache while capturing.

    The cache key hashes a kernel's source, not its file: a cached kernel's IR may carry the
    locations of another copy of the same source (a deleted temp dir, another checkout), and a
    cache hit skips the compile stages. A capture must describe this file.
    """
    from triton import knobs

    saved = knobs.compilation.always_compile
    knobs.compilation.always_compile = True
    try:
        yield
    finally:
        knobs.compilation.always_compile = saved


def capture(solution_path: str | Path, problem_path: str | Path | None = None, case_index: int | None = None,
            argv: list[str] | None = None) -> list[CapturedKernel]:
    """Every kernel the solution's forward (or the script) compiles and launches, on this GPU."""
    with JitCapture() as session:
        run_target(solution_path, problem_path, case_index, device="cuda",
                   on_case=lambda case: setattr(session, "case", case), argv=argv)
    return session.kernels()
