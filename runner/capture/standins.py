"""Device stand-ins: run a forward with no GPU or NPU, only to see what it launches.

Ahead-of-time captures and traces run a solution's forward on a machine without its device:
`torch_npu_stand_in` lets `import torch_npu` succeed, `device_stand_in` answers the device queries
a forward sizes its grids by (from `kb/hardware`), and `cpu_stand_in` keeps tensors on the CPU
without paying for large random fills.
"""
from __future__ import annotations

import contextlib
import sys
import types
from typing import Any, Iterator

from ladder.runner import hardware
from ladder.runner.own_builtins import BUILTINS as __builtins__  # noqa: F401  (see that module)


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

    backend = hardware.DEFAULT_TARGETS.get(target, target).split(":")[0]
    # A target no table serves is answered with its backend's default device.
    table = hardware.for_target(target) or hardware.for_target(backend)
    saved_driver = dict(vars(driver))
    restore: list[tuple[Any, str, Any]] = []

    def patch(owner: Any, name: str, value: Any) -> None:
        restore.append((owner, name, getattr(owner, name, _MISSING)))
        setattr(owner, name, value)

    if backend == "npu":
        chip = hardware.DEFAULT_TARGETS["npu"].split(":")[1] if ":" not in target else target.split(":")[1]
        aicores, vectorcores = table["aicore_count"], table["vectorcore_count"]
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
        sms, smem = table["sm_count"], table["shared_memory_per_block"]
        warp, regs = table["warp_size"], table["registers_per_sm"]
        properties = {"max_shared_mem": smem, "max_num_regs": regs, "multiprocessor_count": sms, "warpSize": warp,
                      "sm_clock_rate": 1980000, "mem_clock_rate": 2619000, "mem_bus_width": 6144}
        device_props = types.SimpleNamespace(
            name=table["name"], major=capability // 10, minor=capability % 10, multi_processor_count=sms,
            total_memory=141 * 2 ** 30, max_shared_memory_per_block_optin=smem, regs_per_multiprocessor=regs,
            warp_size=warp, L2_cache_size=table["l2_bytes"])
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
