"""Ascend NPUs through torch_npu and Triton-Ascend. Untested on hardware.

Written to the documented APIs: ``import torch_npu`` registers ``torch.npu``, which mirrors
``torch.cuda`` (``Event(enable_timing=True)``, ``synchronize()``, ``current_stream()``,
``get_device_name()``, ``memory_allocated()``); tensors live on device type ``npu``. Triton-Ascend's
launcher calls ``knobs.runtime.launch_enter_hook`` like upstream's (third_party/ascend/backend/
driver.py), and its driver reports the current stream through ``get_current_stream``, which is what
the runner compares launch streams against. The Ascend L2 (192 MB on 910B) is evicted by the same
256 MB write as the H200's. ``msprof`` profiling belongs to the diagnoser, not here.
"""
from __future__ import annotations

from ladder.runner.backends.device import TorchDeviceBackend, importable
from ladder.runner.own_builtins import BUILTINS as __builtins__  # noqa: F401  (see that module)


class NpuBackend(TorchDeviceBackend):
    name = "npu"
    device_type = "npu"

    def is_available(self) -> bool:
        if not importable("torch_npu"):
            return False
        try:
            self.setup()
            import torch

            return bool(torch.npu.is_available())
        except Exception:
            return False

    def unavailable_reason(self) -> str:
        if not importable("torch_npu"):
            return "torch_npu is not installed"
        return "torch_npu sees no NPU device"

    def setup(self) -> None:
        import torch_npu  # noqa: F401  (registers torch.npu and the "npu" device type)

        super().setup()


backend = NpuBackend()
