"""What the GPU's clocks and power did while a measurement ran: ``nvidia-smi`` asked beside it.

Two units of one card model can time the same pair of kernels to ratios a few per cent apart (the
rules suite's re-check on an H100: three bests 4-6% below their journals, all on the aligned,
compute-bound cases). One suspect is the power limit: the faster kernel draws more, the SM clock
drops under it, and the slower kernel timed beside it is not held back as much. The clocks are not
pinned by the harness, so this records what they were: the SM clock against its maximum, the power
against its limit, the temperature, sampled every ``period`` seconds while the measurement runs.
Asked of ``nvidia-smi`` in a thread of this process, one query at a time (a query is one process of
its own, tens of milliseconds), so the measurement's process is not touched. The same query names the
card model (``card_model``), for a re-check to know which bests it can judge on their speed.
"""
from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import threading

FIELDS = ("clocks.sm", "clocks.max.sm", "power.draw", "power.limit", "temperature.gpu")


def visible_gpu() -> str:
    """The index the measured process's first GPU has for the driver: CUDA_VISIBLE_DEVICES' first entry
    where it is one (not a UUID or MIG name), else 0."""
    first = os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")[0].strip()
    return first if first.isdigit() else "0"


def ask_driver(fields: tuple[str, ...], gpu: str | None = None) -> str | None:
    """``nvidia-smi``'s answer for ``fields`` of one GPU (csv, no header, no units), or None where there
    is no driver to ask or it does not answer."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return None
    command = [smi, f"--query-gpu={','.join(fields)}", "--format=csv,noheader,nounits", "-i", gpu or visible_gpu()]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def card_model() -> str | None:
    """The model of the GPU the measured process runs on as the driver names it (the name torch
    reports, so the name the journals record), or None where there is no driver to ask. Asked of
    ``nvidia-smi``, not of torch, so the asking process opens no CUDA context of its own."""
    names = (ask_driver(("name",)) or "").strip().splitlines()
    return names[0].strip() if names else None


class ClockSampler:
    """``with ClockSampler() as clocks: ...`` then ``clocks.summary()``: None where there is no driver to ask."""

    def __init__(self, period: float = 0.25, gpu: str | None = None):
        self.period = period
        self.gpu = gpu or visible_gpu()
        self.samples: list[dict] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> ClockSampler:
        if shutil.which("nvidia-smi") is not None:
            self._thread = threading.Thread(target=self._sample, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)

    def _sample(self) -> None:
        while not self._stop.is_set():
            answer = ask_driver(FIELDS, self.gpu)
            if answer is None:
                return
            sample = parse(answer)
            if sample:
                self.samples.append(sample)
            self._stop.wait(self.period)

    def summary(self) -> dict | None:
        return summarize(self.samples)


def parse(line: str) -> dict:
    """One query's answer as numbers by field; a field the driver does not report ("[N/A]") is left out."""
    values = [value.strip() for value in line.strip().split(",")]
    sample = {}
    for field, value in zip(FIELDS, values):
        try:
            sample[field] = float(value)
        except ValueError:
            continue
    return sample


def summarize(samples: list[dict]) -> dict | None:
    """The run's clocks and power in a few numbers: the SM clock's median and lowest against its
    maximum, the power's median and highest against its limit, the hottest reading."""
    if not samples:
        return None

    def series(field: str) -> list[float]:
        return [s[field] for s in samples if field in s]

    summary: dict = {"samples": len(samples)}
    if clock := series("clocks.sm"):
        summary["sm_clock_mhz"] = {"median": statistics.median(clock), "min": min(clock)}
    if top := series("clocks.max.sm"):
        summary["max_sm_clock_mhz"] = max(top)
    if power := series("power.draw"):
        summary["power_w"] = {"median": statistics.median(power), "max": max(power)}
    if limit := series("power.limit"):
        summary["power_limit_w"] = max(limit)
    if heat := series("temperature.gpu"):
        summary["temperature_c_max"] = max(heat)
    return summary
