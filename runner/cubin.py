"""What a cubin holds, read with the CUDA tools bundled in the triton wheel (no GPU needed).

- `sass(cubin)`: the disassembly, annotated with the Python source line of each instruction
  (`nvdisasm -g`), so that SASS-level evidence (HGMMA vs HMMA, STL/LDL spills) can be tied to a line.
- `resource_usage(cubin)`: registers, stack, shared and local bytes per kernel, as the binary
  records them (`cuobjdump --dump-resource-usage`).
- `ptxas_report(ptx, ...)`: the spill stores/loads that only `ptxas -v` reports. Triton runs ptxas
  itself but discards its log, so we run it again on the same PTX with the same flags.
"""
from __future__ import annotations

import os
import re
import subprocess
import tempfile

from ladder.runner.own_builtins import BUILTINS as __builtins__  # noqa: F401  (see that module)


def _tool(name: str) -> str:
    from triton import knobs

    return getattr(knobs.nvidia, name.replace("-", "_")).path


def _with_cubin_file(cubin: bytes, command: list[str]) -> str:
    fd, path = tempfile.mkstemp(suffix=".cubin")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(cubin)
        done = subprocess.run([*command, path], capture_output=True, text=True, check=True)
        return done.stdout
    finally:
        os.remove(path)


def sass(cubin: bytes) -> str:
    """SASS text with `//## File "...", line N` annotations before the instructions of each line."""
    return _with_cubin_file(cubin, [_tool("nvdisasm"), "-g", "-c"])


_USAGE = re.compile(r"Function (\S+):\s*\n\s*REG:(\d+) STACK:(\d+) SHARED:(\d+) LOCAL:(\d+)")


def resource_usage(cubin: bytes) -> dict[str, dict[str, int]]:
    """Per function in the cubin: registers, stack_bytes, static shared_bytes, local_bytes."""
    text = _with_cubin_file(cubin, [_tool("cuobjdump"), "--dump-resource-usage"])
    return {
        name: {"registers": int(reg), "stack_bytes": int(stack), "static_shared_bytes": int(shared),
               "local_bytes": int(local)}
        for name, reg, stack, shared, local in _USAGE.findall(text)
    }


_PTXAS_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_PTXAS_REGS = re.compile(r"Used (\d+) registers(?:, used (\d+) barriers)?")


def ptxas_report(ptx: str, arch: str, *, fmad: bool = True, extra_options: str | None = None) -> dict[str, int]:
    """Spills and registers from `ptxas -v`, run with the flags Triton's make_cubin uses."""
    fd, path = tempfile.mkstemp(suffix=".ptx")
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(ptx)
        command = [_tool("ptxas"), "-lineinfo", "-v", *([] if fmad else ["--fmad=false"]),
                   *(extra_options.split() if extra_options else []), f"--gpu-name={arch}", path,
                   "-o", path + ".o"]
        log = subprocess.run(command, capture_output=True, text=True, check=True).stderr
    finally:
        for leftover in (path, path + ".o"):
            if os.path.exists(leftover):
                os.remove(leftover)
    report: dict[str, int] = {}
    if frame := _PTXAS_FRAME.search(log):
        report["stack_bytes"], report["spill_stores_bytes"], report["spill_loads_bytes"] = map(int, frame.groups())
    if regs := _PTXAS_REGS.search(log):
        report["registers"] = int(regs.group(1))
        report["barriers"] = int(regs.group(2) or 0)
    return report
