"""The interface every running backend implements, with the defaults of a device-less one."""
from __future__ import annotations

from typing import Any, Callable, Iterable, NamedTuple

from ladder.runner.own_builtins import BUILTINS as __builtins__  # noqa: F401  (see that module)


class Clock(NamedTuple):
    """The calls that time one forward, bound when taken (``Backend.clock``): the contestant takes
    them before the forward runs, so a method candidate code replaced meanwhile, on the backend or
    its class, is not what times the call."""

    event: Callable[[], Any]
    record: Callable[[Any], None]
    elapsed_ms: Callable[[Any, Any], float]
    synchronize: Callable[[], None]
    join_streams: Callable[[Iterable[int]], None]
    stall: Callable[[float], None]


class Backend:
    """How the runner reaches one kind of device. Subclasses override what differs.

    Attributes:
        name: the name users pass to ``--backend``.
        device_type: the torch device type tensors live on (``cuda``, ``npu``, ``cpu``).
        can_time: whether timings mean anything (the interpreter's do not).
        env: environment the worker process needs before Triton is imported (read when
            ``@triton.jit`` decorates, so it cannot be set later).
        launch_hook_fires: whether Triton calls ``knobs.runtime.launch_enter_hook`` on this
            backend (the interpreter bypasses the launcher, so launches are counted elsewhere).
        l2_flush_bytes: size of the buffer written between timed repetitions to evict L2.
        spec: how a contestant process finds this backend (``ladder.runner.backends.load_backend``):
            the name for ladder's own, ``module:attribute`` for one defined elsewhere.
    """

    name = "base"
    device_type = "cpu"
    can_time = False
    env: dict[str, str] = {}
    launch_hook_fires = False
    l2_flush_bytes = 0

    @property
    def spec(self) -> str:
        return self.name

    def is_available(self) -> bool:
        return True

    def unavailable_reason(self) -> str:
        return ""

    def setup(self) -> None:
        """Worker-side preparation before any problem or solution code is imported."""

    def device(self):
        import torch

        return torch.device(self.device_type)

    def device_name(self) -> str:
        import platform

        return platform.processor() or platform.machine() or "cpu"

    def device_uuid(self) -> str | None:
        """The device's own identity (two GPUs of one model differ here), when it has one."""
        return None

    def synchronize(self) -> None:
        """Wait for all work queued on the device (every stream)."""

    def event(self):
        raise NotImplementedError(f"backend {self.name!r} has no timing events")

    def record(self, event) -> None:
        event.record()

    def elapsed_ms(self, start, end) -> float:
        return start.elapsed_time(end)

    def clock(self) -> Clock:
        """This backend's timing calls, bound now."""
        return Clock(self.event, self.record, self.elapsed_ms, self.synchronize, self.join_streams, self.stall)

    def current_stream(self) -> int | None:
        """The current stream's handle, in the form Triton's launch hook reports it."""
        return None

    def join_streams(self, handles: Iterable[int]) -> None:
        """Make the current stream wait for the work queued so far on the given streams."""

    def stall(self, milliseconds: float) -> None:
        """Queue about this much idle device work on the current stream.

        Queued before a repetition, it keeps the device busy while the host enqueues the timed
        calls, so the events bracket device work only, not host-side launch overhead (which would
        otherwise land in the first timed call after a synchronize). Backends without a way to do
        this leave it a no-op.
        """

    def time_autotuners(self) -> None:
        """Make the autotuners of this process time their configs the way the judge times a call,
        host time kept out of the events (``ladder.runner.autotuning``). Backends that cannot
        stall the device leave Triton's benchmarker as it is."""

    def memory_in_use(self) -> int:
        return 0

    def release_cached_memory(self) -> None:
        """Give the device memory this process's allocator keeps for reuse back to the device: the
        judge and every contestant share one device, and memory one of them cached but no longer
        uses is memory another's forward cannot have. Backends without such a cache leave it a no-op."""

    def __repr__(self) -> str:
        return f"<backend {self.name}>"
