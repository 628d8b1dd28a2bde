"""`ladder setup ascend`: the Triton-Ascend environment is created with the pinned packages, checked
in one line per step, left alone when it passes, and its absence is a clear error everywhere."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from ladder.diagnoser.cli import setup
from ladder.runner.ascend_ir import ENV_VAR, ascend_python

EXISTING = ascend_python()
needs_env = pytest.mark.skipif(EXISTING is None, reason="needs the Triton-Ascend environment (LADDER_ASCEND_PYTHON "
                               "or .venv-ascend)")


def invoke(*args: str, env: dict[str, str] | None = None):
    return CliRunner().invoke(setup.setup, ["ascend", *args], env=env, catch_exceptions=False)


@needs_env
def test_check_passes_on_the_existing_environment_in_order():
    result = invoke("--check", "--json", env={ENV_VAR: EXISTING})
    assert result.exit_code == 0, result.output
    report = __import__("json").loads(result.stdout)
    assert report["ok"] and [c["name"] for c in report["checks"]] == list(setup.CHECKS)
    assert report["checks"][1]["detail"] == "3.2.0"


def test_check_of_a_missing_environment_fails_in_one_line_and_installs_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(setup, "create", lambda *a, **k: pytest.fail("--check must not install"))
    result = invoke("--check", "--path", str(tmp_path / "none"))
    assert result.exit_code == 1
    assert f"FAIL interpreter: {tmp_path / 'none' / 'bin' / 'python'} does not exist" in result.stdout
    assert "ladder setup ascend --path" in result.stdout


@needs_env
def test_an_environment_that_passes_is_left_alone(monkeypatch):
    monkeypatch.setattr(setup, "create", lambda *a, **k: pytest.fail("a ready environment was reinstalled"))
    result = invoke(env={ENV_VAR: EXISTING})
    assert result.exit_code == 0 and "is ready; nothing to install" in result.output


@needs_env
def test_creation_makes_a_venv_and_installs_the_pinned_packages_with_its_own_pip(tmp_path):
    """The venv and pip steps run against a stand-in (no download): the 'venv' is an interpreter
    that hands over to the existing environment's, so the checks after it are the real ones."""
    folder, commands = tmp_path / "venv-ascend", []

    def run(command, **kwargs):
        commands.append(command)
        if command[1:3] == ["-m", "venv"]:
            (folder / "bin").mkdir(parents=True)
            shim = folder / "bin" / "python"
            shim.write_text(f'#!/bin/sh\nexec "{EXISTING}" "$@"\n')
            shim.chmod(0o755)
        return subprocess.CompletedProcess(command, 0, "", "")

    setup.create(folder, run=run, say=lambda line: None)
    assert commands == [[sys.executable, "-m", "venv", str(folder)],
                        [str(folder / "bin" / "python"), "-m", "pip", "install", "-q", *setup.PACKAGES]]
    assert "triton-ascend==3.2.0" in setup.PACKAGES
    assert all(check.ok for check in setup.check(folder)), setup.check(folder)


def test_a_failed_install_is_one_line(tmp_path):
    def run(command, **kwargs):
        return subprocess.CompletedProcess(command, 1, "", "ERROR: No matching distribution found for triton-ascend\n")

    with pytest.raises(click.ClickException, match="python -m venv failed: ERROR: No matching distribution"):
        setup.create(tmp_path / "env", run=run, say=lambda line: None)


def test_rung_3_without_the_environment_says_how_to_create_it(tmp_path, monkeypatch):
    from ladder.diagnoser import rungs
    from ladder.diagnoser.subject import RungUnavailable, Subject

    monkeypatch.setenv(ENV_VAR, str(tmp_path / "missing" / "bin" / "python"))
    kernels = Path(__file__).resolve().parents[2] / "kernels" / "level1" / "23_softmax"
    subject = Subject(str(kernels / "solution.py"), str(kernels / "problem.py"), target="ascend")
    with pytest.raises(RungUnavailable, match="run `ladder setup ascend`"):
        rungs.ir(subject, {})
