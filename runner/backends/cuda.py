"""NVIDIA GPUs through torch.cuda; Triton's launcher calls the launch hooks on every launch."""
from __future__ import annotations

from ladder.runner.backends.device import TorchDeviceBackend
from ladder.runner.own_builtins import BUILTINS as __builtins__  # noqa: F401  (see that module)


class CudaBackend(TorchDeviceBackend):
    name = "cuda"
    device_type = "cuda"
    _calibrated: float | None = None

    def is_available(self) -> bool:
        import torch

        return torch.cuda.is_available()

    def stall(self, milliseconds: float) -> None:
        import torch

        torch.cuda._sleep(int(milliseconds * self._cycles_per_ms()))

    def time_autotuners(self) -> None:
        from ladder.runner import autotuning

        autotuning.install(self)

    def _cycles_per_ms(self) -> float:
        """Calibrated once against events: ``torch.cuda._sleep`` counts SM clock cycles."""
        if self._calibrated is None:
            import torch

            probe_cycles = 2_000_000
            start, end = self.event(), self.event()
            torch.cuda._sleep(probe_cycles)  # first call loads the kernel
            self.record(start)
            torch.cuda._sleep(probe_cycles)
            self.record(end)
            self.synchronize()
            self._calibrated = probe_cycles / max(self.elapsed_ms(start, end), 1e-3)
        return self._calibrated

    def unavailable_reason(self) -> str:
        import torch

        if torch.version.cuda is None:
            return f"this torch ({torch.__version__}) is a build without CUDA"
        return "no CUDA device is visible"


backend = CudaBackend()
