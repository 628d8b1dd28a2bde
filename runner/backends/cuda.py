"""NVIDIA GPUs through torch.cuda; Triton's launcher calls the launch hooks on every launch."""
from __future__ import annotations

from runner.backends.device import TorchDeviceBackend


class CudaBackend(TorchDeviceBackend):
    name = "cuda"
    device_type = "cuda"

    def is_available(self) -> bool:
        import torch

        return torch.cuda.is_available()

    def unavailable_reason(self) -> str:
        import torch

        if torch.version.cuda is None:
            return f"this torch ({torch.__version__}) is a build without CUDA"
        return "no CUDA device is visible"


backend = CudaBackend()
