"""Shared code of the backends whose torch module mirrors ``torch.cuda`` (cuda and npu)."""
from __future__ import annotations

import functools
import importlib.util
from typing import Iterable

from ladder.runner.backends.base import Backend, Clock
from ladder.runner.own_builtins import BUILTINS as __builtins__  # noqa: F401  (see that module)


class TorchDeviceBackend(Backend):
    """A backend reached through ``torch.<device_type>`` (Event, synchronize, Stream, ...)."""

    can_time = True
    launch_hook_fires = True
    # H200 L2 is 60 MB, Ascend 910B's 192 MB: 256 MB evicts either (measuring.md).
    l2_flush_bytes = 256 * 1024 * 1024

    _clock: tuple | None = None  # (Event, Event.record, Event.elapsed_time, synchronize), bound in setup

    def torch_module(self):
        import torch

        return getattr(torch, self.device_type)

    def setup(self) -> None:
        """Bind the timing primitives now, before any candidate code runs: what the runner times
        with cannot be replaced later from candidate code (``ladder.runner.sentinel`` reports attempts).

        The device runtime starts here too. torch defers work to its first device use (on CUDA it
        registers its own Triton operators then, through torch.library); started later, from a
        candidate's first tensor, that work would run with candidate code on the stack and read as
        the candidate's (a refused torch.library registration)."""
        module = self.torch_module()
        start = getattr(module, "init", None)
        if start is not None and module.is_available():
            start()
        self._clock = (module.Event, module.Event.record, module.Event.elapsed_time, module.synchronize)

    def _primitives(self) -> tuple:
        if self._clock is None:
            self.setup()
        return self._clock

    def device_name(self) -> str:
        return str(self.torch_module().get_device_name())

    def device_uuid(self) -> str | None:
        module = self.torch_module()
        uuid = getattr(module.get_device_properties(module.current_device()), "uuid", None)
        return str(uuid) if uuid is not None else None

    def synchronize(self) -> None:
        self._primitives()[3]()

    def event(self):
        return self._primitives()[0](enable_timing=True)

    def record(self, event) -> None:
        self._primitives()[1](event)

    def elapsed_ms(self, start, end) -> float:
        return self._primitives()[2](start, end)

    def clock(self) -> Clock:
        """The primitives bound in ``setup`` themselves: nothing read from this instance (a ``_clock``
        replaced, a method shadowed) decides a timed call once it is taken."""
        event, record, elapsed_time, synchronize = self._primitives()
        return Clock(functools.partial(event, enable_timing=True), record, elapsed_time, synchronize,
                     self.join_streams, self.stall)

    def current_stream(self) -> int | None:
        # Ask Triton's driver: it is what the launch hook reports as the launch's stream.
        from triton.runtime import driver

        return driver.active.get_current_stream(driver.active.get_current_device())

    def join_streams(self, handles: Iterable[int]) -> None:
        handles = [handle for handle in handles if handle != self.current_stream()]
        if not handles:
            return
        module = self.torch_module()
        external = getattr(module, "ExternalStream", None)
        if external is None:  # no way to wrap a raw handle: wait on the host instead
            module.synchronize()
            return
        current = module.current_stream()
        for handle in handles:
            current.wait_stream(external(handle))

    def memory_in_use(self) -> int:
        return int(self.torch_module().memory_allocated())

    def release_cached_memory(self) -> None:
        module = self.torch_module()
        if module.is_available() and getattr(module, "is_initialized", lambda: True)():
            module.empty_cache()


def importable(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False
