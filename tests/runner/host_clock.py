"""A CPU stand-in for a timing device: events read the host clock, so the timing pipeline's logic
(interleaving, verification of timed outputs, roofline numbers) runs in CPU tests. Kernels run in
Triton's interpreter, as on the ``interpret`` backend; the clock is bound at import, before any
candidate code runs, as a device backend binds its primitives."""
import time

from ladder.runner.backends.interpret import InterpretBackend

_perf_counter = time.perf_counter


class HostEvent:
    def record(self):
        self.at = _perf_counter()

    def elapsed_time(self, end):
        return (end.at - self.at) * 1e3


class HostClockBackend(InterpretBackend):
    name = "host-clock"
    spec = "tests.runner.host_clock:backend"
    can_time = True
    l2_flush_bytes = 1 << 16

    def event(self):
        return HostEvent()


backend = HostClockBackend()
