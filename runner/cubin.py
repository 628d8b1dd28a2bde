"""What a cubin holds, read with the CUDA tools bundled in the triton wheel (no GPU needed).

- `sass(cubin)`: the disassembly, annotated with the Python source line of each instruction
  (`nvdisasm -g`), so that SASS-level evidence (HGMMA vs HMMA, STL/LDL spills) can be tied to a line.
- `resource_usage(cubin)`: registers, stack, shared and local bytes per kernel, as the binary
  records them (`cuobjdump --dump-resource-usage`).
- `barriers(cubin)`: named barriers per kernel, from the flags of its `.text.NAME` section (bits
  20-26, where the CUDA ELF keeps the count `ptxas -v` prints as "used N barriers").
- `ptxas_report(ptx, ...)`: the spill stores/loads that only `ptxas -v` reports. Triton runs ptxas
  itself but discards its log, so we run it again on the same PTX with the same flags; that costs
  as much as the compile's own ptxas (seconds for a large kernel), so it is worth running only where
  the kernel has a stack frame: spilled registers live there, and a kernel without one spills nothing.

What ptxas and nvdisasm print is kept in `$XDG_CACHE_HOME/ladder/cubin-tools` (`~/.cache` by default),
by the tool, its flags and its input, compressed.
"""
from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import struct
import subprocess
import tempfile
import zlib
from pathlib import Path
from typing import Callable

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


def _kept_output(tool: str, flags: list[str], data: bytes, run: Callable[[], str]) -> str:
    """What `run` gets from `tool` with `flags` on `data`, from the cache where that tool ran on
    exactly this before (keyed by the binary, the flags and the bytes; an entry that does not read
    back runs the tool again, and a cache that cannot be written costs time, not the answer)."""
    binary = os.stat(tool)
    identity = json.dumps([tool, binary.st_size, binary.st_mtime_ns, flags]).encode()
    digest = hashlib.sha256(identity + bytes(1) + data).hexdigest()
    kept = _cache_root() / f"{digest}.gz"
    try:
        return gzip.decompress(kept.read_bytes()).decode()
    except (OSError, EOFError, zlib.error, UnicodeDecodeError):
        pass
    text = run()
    try:
        kept.parent.mkdir(parents=True, exist_ok=True)
        partial = kept.with_suffix(f".{os.getpid()}.tmp")
        partial.write_bytes(gzip.compress(text.encode(), compresslevel=1))
        os.replace(partial, kept)
    except OSError:
        pass
    return text


def _cache_root() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ladder" / "cubin-tools"


def sass(cubin: bytes) -> str:
    """SASS text with `//## File "...", line N` annotations before the instructions of each line."""
    command = [_tool("nvdisasm"), "-g", "-c"]
    return _kept_output(command[0], command[1:], cubin, lambda: _with_cubin_file(cubin, command))


_USAGE = re.compile(r"Function (\S+):\s*\n\s*REG:(\d+) STACK:(\d+) SHARED:(\d+) LOCAL:(\d+)")


def resource_usage(cubin: bytes) -> dict[str, dict[str, int]]:
    """Per function in the cubin: registers, stack_bytes, static shared_bytes, local_bytes."""
    text = _with_cubin_file(cubin, [_tool("cuobjdump"), "--dump-resource-usage"])
    return {
        name: {"registers": int(reg), "stack_bytes": int(stack), "static_shared_bytes": int(shared),
               "local_bytes": int(local)}
        for name, reg, stack, shared, local in _USAGE.findall(text)
    }


_ELF64_HEADER = struct.Struct("<40xQ10xHHH")     # e_shoff; e_shentsize, e_shnum, e_shstrndx
_ELF64_SECTION = struct.Struct("<IIQQQQ")        # sh_name, sh_type, sh_flags, sh_addr, sh_offset, sh_size
_BARRIER_SHIFT, _BARRIER_MASK = 20, 0x7F


def barriers(cubin: bytes) -> dict[str, int]:
    """Per function in the cubin: the named barriers it uses, as its `.text.NAME` section's flags say."""
    shoff, shentsize, shnum, shstrndx = _ELF64_HEADER.unpack_from(cubin, 0)
    sections = [_ELF64_SECTION.unpack_from(cubin, shoff + index * shentsize) for index in range(shnum)]
    names_at, names_size = sections[shstrndx][4], sections[shstrndx][5]
    names = cubin[names_at:names_at + names_size]
    found = {}
    for name_offset, _, flags, _, _, _ in sections:
        name = names[name_offset:names.index(b"\0", name_offset)].decode()
        if name.startswith(".text."):
            found[name[len(".text."):]] = (flags >> _BARRIER_SHIFT) & _BARRIER_MASK
    return found


_PTXAS_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_PTXAS_REGS = re.compile(r"Used (\d+) registers(?:, used (\d+) barriers)?")


def ptxas_report(ptx: str, arch: str, *, fmad: bool = True, extra_options: str | None = None) -> dict[str, int]:
    """Spills and registers from `ptxas -v`, run with the flags Triton's make_cubin uses.

    Kept on disk by what decides it (the ptxas binary, its flags, the PTX), as Triton keeps the
    cubin: a kernel diagnosed again (a resumed climb, the loop's next round, every config of an
    autotuned kernel whose compiles Triton's cache already answers) does not pay for ptxas twice;
    so is the SASS of a cubin.
    """
    ptxas = _tool("ptxas")
    flags = ["-lineinfo", "-v", *([] if fmad else ["--fmad=false"]), *(extra_options.split() if extra_options else []),
             f"--gpu-name={arch}"]
    log = _kept_output(ptxas, flags, ptx.encode(), lambda: _run_ptxas(ptxas, flags, ptx))
    report: dict[str, int] = {}
    if frame := _PTXAS_FRAME.search(log):
        report["stack_bytes"], report["spill_stores_bytes"], report["spill_loads_bytes"] = map(int, frame.groups())
    if regs := _PTXAS_REGS.search(log):
        report["registers"] = int(regs.group(1))
        report["barriers"] = int(regs.group(2) or 0)
    return report


def _run_ptxas(ptxas: str, flags: list[str], ptx: str) -> str:
    fd, path = tempfile.mkstemp(suffix=".ptx")
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(ptx)
        log = subprocess.run([ptxas, *flags, path, "-o", path + ".o"], capture_output=True, text=True,
                             check=True).stderr
    finally:
        for leftover in (path, path + ".o"):
            if os.path.exists(leftover):
                os.remove(leftover)
    return log
