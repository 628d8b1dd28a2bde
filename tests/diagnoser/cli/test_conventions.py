"""What every `ladder` command shares: `--json`, errors as JSON under it, one exit-status
convention, `-v`/`-q`, and standard output kept for the result."""
from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from ladder.diagnoser.cli import main, streams
from ladder.diagnoser.cli.errors import CANNOT_RUN, INTERNAL, OK, USAGE

SCRIPT = str(Path(__file__).resolve().parents[1] / "data" / "kernels" / "script" / "run_scale.py")


def ladder(*args: str):
    return CliRunner().invoke(main, list(args), prog_name="ladder")


def leaf_commands(group: click.Group, ctx: click.Context, path: tuple[str, ...] = ()):
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if isinstance(command, click.Group):
            yield from leaf_commands(command, ctx, (*path, name))
        else:
            yield (*path, name), command


def test_every_command_but_the_mcp_server_has_json():
    ctx = click.Context(main)
    without = [" ".join(path) for path, command in leaf_commands(main, ctx)
               if "--json" not in {opt for param in command.params for opt in param.opts}]
    assert without == ["mcp"]  # its standard output is the MCP protocol itself, JSON-RPC


@pytest.mark.parametrize("args,kind,status", [
    (["diagnose", "--no-such-option", "--json"], "NoSuchOption", USAGE),
    (["diagnose", SCRIPT, "--rungs", "0-9", "--json"], "DiagnoseError", USAGE),
    (["diagnose", SCRIPT, "--rung-timeout", "ir=soon", "--json"], "DiagnoseError", USAGE),
    (["explain", "nv.no-such-pattern", "--json"], "UnknownPattern", USAGE),
    (["index", "status", "--index-dir", "/nonexistent/ladder-index", "--json"], "IndexMissing", CANNOT_RUN),
    (["optimize", "status", str(Path(__file__).parent / "data"), "--json"], "JournalError", CANNOT_RUN),
    (["optimize", SCRIPT, "--problem", SCRIPT, "--from", str(Path(__file__).parent / "data"), "--out",
      "/nonexistent/ladder-run", "--json"], "JournalError", CANNOT_RUN),
    (["optimize", SCRIPT, "--problem", SCRIPT, "--from", str(Path(__file__).parent / "data"), "--out",
      str(Path(__file__).parent / "data"), "--json"], "UsageError", USAGE),
    (["bench", SCRIPT, "--problem", SCRIPT, "--backend", "cuda", "--json"], "BackendUnavailable", CANNOT_RUN),
])
def test_errors_under_json_are_one_json_object_with_the_conventions_status(args, kind, status):
    result = ladder(*args)
    assert result.exit_code == status, result.output
    error = json.loads(result.stdout)
    assert error == {"error": error["error"], "kind": kind, "exit_code": status}
    assert error["error"] and "\n" not in error["error"]
    assert "Traceback" not in result.output


def test_without_json_an_error_is_one_line_on_stderr_and_nothing_on_stdout():
    result = ladder("index", "status", "--index-dir", "/nonexistent/ladder-index")
    assert result.exit_code == CANNOT_RUN
    assert result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1 and result.stderr.startswith("Error: ")


def test_a_bug_in_ladder_is_status_4_and_v_shows_its_traceback(monkeypatch):
    from ladder.diagnoser import ladder as policy

    def broken(*args, **kwargs):
        raise ZeroDivisionError("division by zero")
    monkeypatch.setattr(policy, "climb", broken)
    plain = ladder("diagnose", SCRIPT, "--backend", "aot", "--json")
    assert plain.exit_code == INTERNAL
    assert json.loads(plain.stdout)["kind"] == "InternalError"
    assert "Traceback" not in plain.stderr and "`ladder -v` shows where" in plain.stderr
    verbose = ladder("-v", "diagnose", SCRIPT, "--backend", "aot")
    assert verbose.exit_code == INTERNAL
    assert "Traceback" in verbose.stderr and "ZeroDivisionError" in verbose.stderr


def test_q_silences_progress_and_v_adds_debug_detail():
    normal = ladder("diagnose", SCRIPT, "--backend", "aot", "--rungs", "1")
    quiet = ladder("-q", "diagnose", SCRIPT, "--backend", "aot", "--rungs", "1")
    verbose = ladder("-v", "diagnose", SCRIPT, "--backend", "aot", "--rungs", "1")
    assert normal.exit_code == quiet.exit_code == verbose.exit_code == OK
    assert "ladder: rung 1: pattern triage ..." in normal.stderr
    assert quiet.stderr == ""
    assert "ladder: debug:" in verbose.stderr and "ladder: debug:" not in normal.stderr
    untimed = [re.sub(r"\d+\.\d+ s", "T s", result.stdout) for result in (normal, quiet, verbose)]
    assert untimed[0] == untimed[1] == untimed[2]  # the result does not depend on the verbosity


def test_quarantine_sends_prints_and_descriptor_1_to_stderr_and_keeps_stdout_for_echo(capfd):
    with streams.quarantine():
        print("a print")
        os.write(1, b"a raw write\n")
        sys.stdout.flush()
        streams.echo("the result")
    out, err = capfd.readouterr()
    assert out == "the result\n"
    assert "a print" in err and "a raw write" in err


def test_a_program_that_prints_leaves_ir_json_parseable_too():
    import subprocess

    here = Path(__file__).resolve()
    result = subprocess.run([sys.executable, "-m", "ladder.diagnoser", "ir", str(here.parent / "data" / "noisy_script.py"),
                             "--facts", "--json"], cwd=here.parents[3], capture_output=True, text=True, timeout=120,
                            check=False)
    assert result.returncode == OK, result.stderr
    facts = json.loads(result.stdout)
    assert any(fact["kernel"] == "scale_kernel" for fact in facts)
    assert "a raw write to descriptor 1" in result.stderr and "the script's own print" in result.stderr
