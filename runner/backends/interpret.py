"""CPU backend: Triton's interpreter (``TRITON_INTERPRET=1``) runs kernels as NumPy on the host.

Correctness only: the interpreter executes programs one by one in Python, so its times say nothing
about a GPU. Triton's launcher is bypassed, so the launch hook never fires; the runner counts
launches by wrapping ``InterpretedFunction.run`` instead (see ``runner.guards``).
"""
from __future__ import annotations

from runner.backends.base import Backend


class InterpretBackend(Backend):
    name = "interpret"
    device_type = "cpu"
    can_time = False
    env = {"TRITON_INTERPRET": "1"}
    launch_hook_fires = False

    def device_name(self) -> str:
        return "CPU (Triton interpreter)"


backend = InterpretBackend()
