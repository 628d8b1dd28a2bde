"""`ladder ir`: stages, facts and JSON for a script or solution; user mistakes are one-line errors."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from ladder.diagnoser.cli import main
from ladder.diagnoser.cli.errors import CANNOT_RUN

SCRIPT = '''
import torch, triton, triton.language as tl

@triton.jit
def double_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)

x = torch.randn(4096)
double_kernel[(4,)](x, torch.empty_like(x), 4096, BLOCK=1024)
'''


@pytest.fixture
def script(tmp_path):
    path = tmp_path / "double.py"
    path.write_text(SCRIPT)
    return path


def run(*args: str):
    return CliRunner().invoke(main, ["ir", *map(str, args)])


def test_json_facts_carry_kernel_kind_value_file_and_line(script):
    result = run(script, "--facts", "--json")
    assert result.exit_code == 0, result.output
    facts = json.loads(result.stdout)
    assert {"kernel", "kind", "value", "file", "line"} <= set(facts[0])
    loads = [fact for fact in facts if fact["kind"] == "global_access" and fact["value"]["op"] == "load"]
    assert loads and loads[0]["line"] == 7 and loads[0]["value"]["vector_bits"] == 128
    assert loads[0]["file"] == str(script.resolve())


def test_json_without_facts_flag_also_lists_the_kernels(script):
    payload = json.loads(run(script, "--json").stdout)
    (kernel,) = payload["kernels"]
    assert kernel["kernel"] == "double_kernel" and kernel["launches"] == [{"case": None, "grid": [4, 1, 1]}]
    assert kernel["stages"] == ["ttir", "ttgir", "llir", "ptx", "sass"] and payload["facts"]


def test_text_output_puts_each_fact_on_its_source_line(script):
    result = run(script)
    assert result.exit_code == 0
    assert "double_kernel" in result.output and "double.py:7" in result.output and "global_access" in result.output


def test_stage_prints_that_stage(script):
    result = run(script, "--stage", "ptx")
    assert result.exit_code == 0 and "ld.global.v4.b32" in result.output and ".version" in result.output


def test_stage_the_target_does_not_have_is_a_one_line_error(script):
    result = run(script, "--stage", "ttadapter")
    assert result.exit_code == CANNOT_RUN and "no ttadapter stage" in result.output and "Traceback" not in result.output


def test_missing_file_is_a_one_line_error(tmp_path):
    result = run(tmp_path / "nope.py")
    assert result.exit_code == CANNOT_RUN and "file not found" in result.output and "Traceback" not in result.output


def test_a_script_that_fails_is_a_one_line_error(tmp_path):
    broken = tmp_path / "broken.py"
    broken.write_text("raise SystemError('boom')\n")
    result = run(broken)
    assert result.exit_code == CANNOT_RUN and "boom" in result.output.splitlines()[-1]


def test_save_writes_the_captured_kernels(script, tmp_path):
    from ladder.runner.capture import load

    saved = tmp_path / "kernels.json"
    assert run(script, "--facts", "--save", saved).exit_code == 0
    (kernel,) = load(saved)
    assert kernel.name == "double_kernel" and "sass" in kernel.stages


def test_kernel_filter_that_matches_nothing_is_an_error(script):
    result = run(script, "--kernel", "matmul")
    assert result.exit_code == CANNOT_RUN and "no Triton kernel" in result.output


def test_ascend_target_without_its_environment_says_how_to_get_it(script, monkeypatch):
    monkeypatch.setenv("LADDER_ASCEND_PYTHON", "/nonexistent/python")
    result = run(script, "--target", "ascend")
    assert result.exit_code == CANNOT_RUN and "LADDER_ASCEND_PYTHON" in result.output
