"""``ladder setup ascend``: create and check the Triton-Ascend environment rung 3 compiles Ascend IR in.

    ladder setup ascend [--path DIR] [--check] [--json]

Triton-Ascend installs as the package ``triton``, so it cannot share ladder's environment (which
has upstream triton): it gets a virtual environment of its own, ``.venv-ascend`` at the repository
root by default (where ``ladder.runner.ascend_ir`` looks), made with the standard library's ``venv`` and
filled by its own pip with ``PACKAGES``. An environment that already passes the checks is left as
it is, so running the command again downloads nothing; ``--check`` only checks and never installs.

The checks (``CHECKS``, in order) say what is wrong in one line each: the interpreter runs, its
``triton`` is Triton-Ascend's (the ascend backend is there), torch imports, and a small kernel
compiles to the ttadapter stage on this machine (no NPU or CANN needed). Exit status 0 when every
check passes, 1 otherwise.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import click

# What the environment holds; numpy below 2.4 like ladder's own (pyproject.toml).
PACKAGES = ("torch==2.13.0", "triton-ascend==3.2.0", "pybind11", "numpy<2.4")
INSTALL_TIMEOUT_S = 3600
CHECK_TIMEOUT_S = 300

# Run inside the environment: what it has, as one JSON line (the checks read it).
PROBE = """
import importlib.metadata as m, importlib.util as u, json
def version(name):
    try:
        return m.version(name)
    except m.PackageNotFoundError:
        return None
print(json.dumps({"triton_ascend": version("triton-ascend"), "torch": version("torch"),
                  "ascend_backend": u.find_spec("triton.backends.ascend") is not None}))
"""

SMOKE_KERNEL = '''import torch
import triton
import triton.language as tl


@triton.jit
def double_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offsets, tl.load(x_ptr + offsets) * 2)


if __name__ == "__main__":
    x = torch.zeros(1024)
    double_kernel[(1,)](x, x, BLOCK=1024)
'''

Run = Callable[..., subprocess.CompletedProcess]


@dataclass
class Check:
    name: str
    ok: bool
    detail: str

    def line(self) -> str:
        return f"{'ok  ' if self.ok else 'FAIL'} {self.name}: {self.detail}"


def environment_folder(path: str | None) -> Path:
    """Where the environment is: `--path`, else the one LADDER_ASCEND_PYTHON belongs to, else the default."""
    from ladder.runner.ascend_ir import DEFAULT_ENV, ENV_VAR

    if path:
        return Path(path).resolve()
    configured = os.environ.get(ENV_VAR)
    return Path(configured).absolute().parent.parent if configured else DEFAULT_ENV


def python_of(folder: Path) -> Path:
    return folder / "bin" / "python"


def _interpreter(python: Path, probe: dict, run: Run) -> Check:
    if not python.exists():
        return Check("interpreter", False, f"{python} does not exist")
    return Check("interpreter", "error" not in probe, probe.get("error", str(python)))


def _triton_ascend(python: Path, probe: dict, run: Run) -> Check:
    if not probe.get("triton_ascend"):
        return Check("triton-ascend", False, "not installed in this environment")
    if not probe.get("ascend_backend"):
        return Check("triton-ascend", False, f"{probe['triton_ascend']} is installed but triton.backends.ascend "
                     "is missing (is upstream triton installed over it?)")
    return Check("triton-ascend", True, probe["triton_ascend"])


def _torch(python: Path, probe: dict, run: Run) -> Check:
    return Check("torch", bool(probe.get("torch")), probe.get("torch") or "not installed in this environment")


def _compiles(python: Path, probe: dict, run: Run) -> Check:
    """A small kernel through Triton-Ascend's ttir and ttadapter stages, as rung 3 runs it."""
    import tempfile

    from ladder.runner.ascend_ir import capture

    with tempfile.TemporaryDirectory(prefix="ladder-setup-") as folder:
        script = Path(folder) / "double.py"
        script.write_text(SMOKE_KERNEL)
        try:
            kernels = capture(script, python=str(python))
        except Exception as error:  # noqa: BLE001 (any failure here is the answer of the check)
            return Check("ttadapter compile", False, str(error).splitlines()[0] if str(error) else type(error).__name__)
    stages = sorted(kernels[0].stages) if kernels else []
    ok = bool(kernels) and "ttadapter" in stages and kernels[0].error is None
    return Check("ttadapter compile", ok, f"stages {', '.join(stages)}" if ok else
                 (kernels[0].error if kernels and kernels[0].error else f"stages {stages or 'none'}"))


CHECKS: dict[str, Callable[[Path, dict, Run], Check]] = {
    "interpreter": _interpreter,
    "triton-ascend": _triton_ascend,
    "torch": _torch,
    "ttadapter compile": _compiles,
}


def probe(python: Path, run: Run) -> dict:
    """What the environment's interpreter reports about itself ({"error"} when it does not run)."""
    if not python.exists():
        return {"error": f"{python} does not exist"}
    try:
        done = run([str(python), "-c", PROBE], capture_output=True, text=True, timeout=CHECK_TIMEOUT_S)
    except (OSError, subprocess.SubprocessError) as error:
        return {"error": f"{python} does not run: {error}"}
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines()
        return {"error": f"{python} failed: {lines[-1] if lines else f'exit {done.returncode}'}"}
    try:
        return json.loads(done.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        return {"error": f"{python} printed no report"}


def check(folder: Path, run: Run = subprocess.run) -> list[Check]:
    """Every check, in order; after the first that fails the rest are not run (they would fail too)."""
    python = python_of(folder)
    found = probe(python, run)
    results = []
    for step in CHECKS.values():
        result = step(python, found, run)
        results.append(result)
        if not result.ok:
            break
    return results


def create(folder: Path, run: Run = subprocess.run, say: Callable[[str], None] = print) -> None:
    """Make the environment (if there is none) and install `PACKAGES` into it with its own pip."""
    python = python_of(folder)
    if not python.exists():
        say(f"creating {folder}")
        _must(run([sys.executable, "-m", "venv", str(folder)], capture_output=True, text=True,
                  timeout=INSTALL_TIMEOUT_S), "python -m venv")
    say(f"installing {' '.join(PACKAGES)} (Triton-Ascend installs as the package `triton`)")
    _must(run([str(python), "-m", "pip", "install", "-q", *PACKAGES], capture_output=True, text=True,
              timeout=INSTALL_TIMEOUT_S), "pip install")


def _must(done: subprocess.CompletedProcess, what: str) -> None:
    if done.returncode != 0:
        lines = [line for line in (done.stderr or done.stdout or "").strip().splitlines() if line.strip()]
        raise click.ClickException(f"{what} failed: {lines[-1] if lines else f'exit {done.returncode}'}")


@click.group("setup")
def setup() -> None:
    """Create and check the environments ladder needs beside its own."""


@setup.command("ascend")
@click.option("--path", "path", type=click.Path(file_okay=False),
              help="Where the environment is or goes (default: $LADDER_ASCEND_PYTHON's, else .venv-ascend).")
@click.option("--check", "check_only", is_flag=True, help="Only check the environment; install nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the checks as JSON.")
def ascend(path: str | None, check_only: bool, as_json: bool) -> None:
    """The Triton-Ascend environment that rung 3 compiles Ascend IR in (no NPU needed)."""
    from ladder.runner.ascend_ir import DEFAULT_ENV, ENV_VAR

    folder = environment_folder(path)
    say = (lambda line: click.echo(f"ladder setup ascend: {line}", err=True))
    results = check(folder)
    if all(r.ok for r in results):
        say(f"{folder} is ready" + ("" if check_only else "; nothing to install"))
    elif not check_only:
        create(folder, say=say)
        results = check(folder)
    ok = all(r.ok for r in results)
    if as_json:
        click.echo(json.dumps({"environment": str(folder), "python": str(python_of(folder)), "ok": ok,
                               "checks": [asdict(r) for r in results]}, indent=1))
    else:
        click.echo("\n".join(r.line() for r in results))
        if ok and folder != DEFAULT_ENV and os.environ.get(ENV_VAR) != str(python_of(folder)):
            click.echo(f"use it with: export {ENV_VAR}={python_of(folder)}")
        if not ok and check_only:
            click.echo("create or repair it with: ladder setup ascend" + (f" --path {folder}" if path else ""))
    sys.exit(0 if ok else 1)
