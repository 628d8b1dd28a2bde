"""A CPU stand-in for a timing device: events read the host clock, so the timing pipeline's logic
(interleaving, verification of timed outputs, roofline numbers) runs in CPU tests."""
import time

from runner.backends.base import Backend


class HostEvent:
    def record(self):
        self.at = time.perf_counter()

    def elapsed_time(self, end):
        return (end.at - self.at) * 1e3


class HostClockBackend(Backend):
    name = "host-clock"
    spec = "tests.runner.host_clock:backend"
    can_time = True
    env = {"TRITON_INTERPRET": "1"}
    l2_flush_bytes = 1 << 16

    def event(self):
        return HostEvent()


backend = HostClockBackend()
