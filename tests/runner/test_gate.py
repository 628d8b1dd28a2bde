"""The gate end to end on the CPU (interpret backend, worker subprocesses): a correct solution passes;
each adversarial one is rejected with the reason that names its trick."""
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ladder.diagnoser.cli.bench import bench as bench_command
from ladder.diagnoser.cli.errors import CANNOT_RUN, NEGATIVE
from ladder.runner.bench import BenchError, bench, bench_pair

FIXTURES = Path(__file__).parent / "fixtures"
ADD = FIXTURES / "add"
MATMUL = FIXTURES / "matmul"

CHECKED_TOGETHER = ["solution", "wrong_values", "nan_output", "wrong_shape", "partial_write", "try_fallback",
                    "side_stream", "cached_by_pointer", "cached_by_shape", "torch_only",
                    "returns_other_buffer", "mutates_input", "crash_in_kernel", "syntax_error",
                    "import_error", "out_of_memory"]


@pytest.fixture(scope="module")
def add_results():
    result = bench(ADD / "problem.py", {name: ADD / f"{name}.py" for name in CHECKED_TOGETHER},
                   backend="interpret", seeds=2, seed=1234)
    return result["solutions"]


@pytest.fixture(scope="module")
def add_results_runtime_only():
    """The same tricks with the static rules off: what the runtime guards catch on their own."""
    names = ["try_fallback", "torch_only", "cached_by_shape", "returns_other_buffer", "thread_launch"]
    result = bench(ADD / "problem.py", {name: ADD / f"{name}.py" for name in names},
                   backend="interpret", seeds=2, seed=1234, static_checks=False)
    return result["solutions"]


def rejection(report):
    assert report["ok"] is False and report["rejected"] is not None
    return report["rejected"]["stage"], report["rejected"]["reason"]


def first_failure(report):
    assert report["ok"] is False and report["rejected"] is None
    return next(case["reason"] for case in report["cases"] if not case["correct"])


def test_correct_solution_passes_every_case(add_results):
    report = add_results["solution"]
    assert report["ok"] and report["rejected"] is None
    assert [case["correct"] for case in report["cases"]] == [True, True, True]
    assert all(case["launches"] == 1 and case["kernels"] == ["add_kernel"] for case in report["cases"])
    assert all(case["max_rel_err"] <= case["rtol"] == 1e-4 for case in report["cases"])


def test_wrong_values_fail_with_error_and_tolerance(add_results):
    assert "exceeds tolerance 0.0001" in first_failure(add_results["wrong_values"])


def test_nan_never_passes(add_results):
    assert "NaN/Inf never pass" in first_failure(add_results["nan_output"])


def test_wrong_shape_fails(add_results):
    assert "has shape (1000, 1), the reference's is (1000,)" in first_failure(add_results["wrong_shape"])


def test_partially_written_output_is_caught_by_the_poison(add_results):
    report = add_results["partial_write"]
    assert "232 of 1000 elements never written" in first_failure(report)
    assert report["cases"][2]["correct"]  # N=256 has no tail: the bug does not show there


def test_try_except_fallback_is_rejected_statically(add_results):
    stage, reason = rejection(add_results["try_fallback"])
    assert stage == "static" and "[try-except]" in reason


def test_try_except_fallback_taken_is_caught_at_runtime(add_results_runtime_only):
    stage, reason = rejection(add_results_runtime_only["try_fallback"])
    assert stage == "runtime" and "forward calls torch compute ops: Tensor.add x1, Tensor.mul x1" == reason


def test_side_stream_is_rejected(add_results):
    stage, reason = rejection(add_results["side_stream"])
    assert stage == "static" and "torch.cuda.Stream" in reason and "[side-stream]" in reason


def test_cache_keyed_on_pointers_is_rejected_statically(add_results):
    stage, reason = rejection(add_results["cached_by_pointer"])
    assert stage == "static" and "[caching]" in reason


def test_output_cached_across_calls_is_caught_at_runtime(add_results):
    stage, reason = rejection(add_results["cached_by_shape"])
    assert stage == "runtime" and "output cached across calls" in reason


def test_plain_torch_forward_is_rejected(add_results):
    stage, reason = rejection(add_results["torch_only"])
    assert stage == "runtime" and reason.startswith("forward calls torch compute ops")


def test_output_not_written_by_a_kernel_is_rejected(add_results):
    stage, reason = rejection(add_results["returns_other_buffer"])
    assert stage == "runtime" and "which no Triton kernel wrote" in reason


def test_writing_into_an_input_fails(add_results):
    assert "writes to its input 0" in first_failure(add_results["mutates_input"])


def test_exception_in_a_kernel_is_reported_per_case(add_results):
    reason = first_failure(add_results["crash_in_kernel"])
    assert reason.startswith("forward raised InterpreterError") and "power of 2" in reason


def test_syntax_error_names_file_and_line(add_results):
    assert rejection(add_results["syntax_error"]) == ("load", "syntax_error.py:21: SyntaxError: expected ':'")


def test_running_out_of_device_memory_sets_the_solution_aside_rather_than_failing_its_case(add_results):
    stage, reason = rejection(add_results["out_of_memory"])
    assert stage == "device-memory"
    assert "out of memory" in reason and "the judge and the other contestants share the device" in reason


def test_import_error_is_a_load_failure(add_results):
    stage, reason = rejection(add_results["import_error"])
    assert stage == "load" and "ModuleNotFoundError" in reason


def test_kernel_launched_from_a_thread_is_caught_at_runtime(add_results_runtime_only):
    stage, reason = rejection(add_results_runtime_only["thread_launch"])
    assert stage == "runtime" and "from another thread" in reason


def test_cache_is_caught_at_runtime_without_static_rules(add_results_runtime_only):
    assert "output cached across calls" in rejection(add_results_runtime_only["cached_by_shape"])[1]


def test_matmul_gets_tf32_tolerance_and_calling_torch_matmul_is_rejected():
    result = bench(MATMUL / "problem.py", {"triton": MATMUL / "solution.py", "torch": MATMUL / "calls_matmul.py"},
                   backend="interpret", seeds=1, static_checks=False)
    assert result["solutions"]["triton"]["ok"]
    assert all(case["allow_tf32"] for case in result["cases"])
    assert all(case["rtol"] == 5e-3 for case in result["solutions"]["triton"]["cases"])
    assert rejection(result["solutions"]["torch"]) == ("runtime", "forward calls torch compute ops: torch.matmul x1")


def test_hanging_candidate_is_killed_at_its_timeout():
    record = bench_pair(ADD / "hang.py", ADD / "problem.py", backend="interpret", timeout=20, seeds=1)
    stage, reason = rejection(record)
    assert stage == "timeout" and reason.startswith("timed out after 20 s (killed) while in stage 'check'")
    assert all(not case["correct"] for case in record["cases"]) and len(record["cases"]) == 3


def test_process_crash_is_reported_and_the_caller_survives():
    record = bench_pair(ADD / "aborts_process.py", ADD / "problem.py", backend="interpret", seeds=1,
                        static_checks=False)
    stage, reason = rejection(record)
    assert stage == "crash" and "SIGABRT" in reason and "stage 'check'" in reason


def test_broken_problem_is_an_error_for_the_caller(tmp_path):
    problem = tmp_path / "problem.py"
    problem.write_text("import torch\n")
    with pytest.raises(BenchError, match="missing `Model`"):
        bench_pair(ADD / "solution.py", problem, backend="interpret")


def test_cli_exits_zero_and_prints_a_table_for_a_correct_solution():
    result = CliRunner().invoke(bench_command, [str(ADD / "solution.py"), "--problem", str(ADD / "problem.py"),
                                                "--backend", "interpret", "--seeds", "1", "--full"])
    assert result.exit_code == 0, result.output
    assert "N=4097" in result.output and "not timed" in result.output


def test_cli_json_has_correct_and_reason_per_case_and_exits_one():
    result = CliRunner().invoke(bench_command, [str(ADD / "wrong_values.py"), "--problem", str(ADD / "problem.py"),
                                                "--backend", "interpret", "--seeds", "1", "--json", "--case", "0"])
    assert result.exit_code == 1
    record = json.loads(result.stdout)
    assert [case["correct"] for case in record["cases"]] == [False]
    assert "exceeds tolerance" in record["cases"][0]["reason"]


def test_cli_exits_three_when_the_backend_is_missing():
    result = CliRunner().invoke(bench_command, [str(ADD / "solution.py"), "--problem", str(ADD / "problem.py"),
                                                "--backend", "cuda"])
    assert result.exit_code == CANNOT_RUN and "not available" in result.output


def test_cli_lists_the_static_rules():
    result = CliRunner().invoke(bench_command, ["--list-checks"])
    assert result.exit_code == 0 and "try-except" in result.output


def test_wild_store_crashes_the_worker_not_the_caller(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the worker finds the runner without the repository as cwd
    record = bench_pair(ADD / "out_of_bounds.py", ADD / "problem.py", backend="interpret", seeds=1)
    stage, reason = rejection(record)
    assert stage == "crash" and "SIGSEGV" in reason


def test_bench_under_the_interpreter_takes_the_small_cases_by_default_and_marks_cases_not_reached():
    runner = CliRunner()
    result = runner.invoke(bench_command, [str(ADD / "solution.py"), "--problem", str(ADD / "problem.py"),
                                           "--backend", "interpret", "--json"])
    record = json.loads(result.stdout)
    assert result.exit_code == 0 and [c["label"] for c in record["cases"]] == ["N=256"]
    full = runner.invoke(bench_command, [str(ADD / "solution.py"), "--problem", str(ADD / "problem.py"),
                                         "--backend", "interpret", "--full", "--case", "2", "--json"])
    assert "--full under Triton's interpreter" in full.stderr or "--full under Triton's interpreter" in full.output
    assert [c["label"] for c in json.loads(full.stdout)["cases"]] == ["N=256"]


def test_bench_under_the_interpreter_warns_before_a_case_too_large_for_it(tmp_path):
    problem = tmp_path / "problem.py"
    problem.write_text((ADD / "problem.py").read_text().replace("def get_cases():", "def _unused_cases():"))
    problem.write_text(problem.read_text().replace("N = 1000", "N = 1 << 22"))
    result = CliRunner().invoke(bench_command, [str(ADD / "import_error.py"), "--problem", str(problem),
                                                "--backend", "interpret", "--full", "--json"])
    assert result.exit_code == NEGATIVE  # the solution does not import: nothing ran, the warning came first
    assert "warning: case 0 (default) has 8,388,608 input elements: under Triton's interpreter" in result.stderr
    assert json.loads(result.stdout)["rejected"]["stage"] == "load"
    # By default the interpreter gets a quick run: with no get_test_cases(), the sizes are halved to fit.
    result = CliRunner().invoke(bench_command, [str(ADD / "import_error.py"), "--problem", str(problem),
                                                "--backend", "interpret", "--json"])
    assert "its case is shrunk for a quick run (N 4194304 -> 2097152)" in result.stderr
    assert "input elements: under Triton's interpreter" not in result.stderr
