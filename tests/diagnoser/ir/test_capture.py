"""The aot backend reproduces the JIT's specialization and captures every launch of a workload."""
from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
import torch

from . import ir_kernels
from ladder.runner.backends.aot import AotCapture, capture, parse_target
from ladder.runner.capture import CapturedKernel, cpu_stand_in, fresh_compiles


@pytest.fixture
def jit_without_gpu():
    """Triton's own JIT, pointed at an sm_90 target by a stub driver: warmup() compiles, never launches."""
    from triton.backends.compiler import GPUTarget
    from triton.runtime import driver

    class Sm90Stub:
        def get_current_device(self):
            return 0

        def get_current_stream(self, device=None):
            return 0

        def get_current_target(self):
            return GPUTarget("cuda", 90, 32)

    saved = driver._active
    driver.set_active(Sm90Stub())
    with fresh_compiles():  # a disk-cache hit would carry the file path of whichever copy compiled first
        yield
    driver._active = saved


def aot_kernels(launch) -> list[CapturedKernel]:
    with AotCapture(parse_target("sm90")) as session:
        launch()
    return session.kernels()


ARGUMENTS = {  # name -> (offset into the source buffer, n)
    "aligned": (0, 4096),
    "misaligned_pointer": (1, 4096),
    "odd_size": (0, 4099),
    "size_one": (0, 1),
}


@pytest.mark.parametrize("name", list(ARGUMENTS))
def test_aot_compiles_exactly_what_the_jit_compiles(name, jit_without_gpu):
    offset, n = ARGUMENTS[name]
    x, y = torch.empty(4128), torch.empty(4128)
    jit = ir_kernels.copy_kernel.warmup(x[offset:], y, n, BLOCK=1024, grid=(1,))
    (aot,) = aot_kernels(lambda: ir_kernels.copy_kernel[(1,)](x[offset:], y, n, BLOCK=1024))
    assert aot.metadata["hash"] == jit.metadata.hash
    assert aot.stages["ptx"] == jit.asm["ptx"]


def test_aligned_elementwise_kernel_loads_with_ld_global_v4():
    (kernel,) = aot_kernels(ir_kernels.LAUNCHES["copy_aligned"])
    assert "ld.global.v4.b32" in kernel.stages["ptx"] and "st.global.v4.b32" in kernel.stages["ptx"]
    assert kernel.attrs["src"] == [["tt.divisibility", 16]] and kernel.attrs["n"] == [["tt.divisibility", 16]]


@pytest.mark.parametrize("case", ["copy_misaligned", "copy_odd_size"])
def test_misaligned_or_odd_sized_kernel_loads_without_vectors(case):
    (kernel,) = aot_kernels(ir_kernels.LAUNCHES[case])
    assert "ld.global.v4" not in kernel.stages["ptx"] and "ld.global.b32" in kernel.stages["ptx"]


def test_integer_argument_equal_to_one_is_specialized_as_a_constant():
    (kernel,) = aot_kernels(lambda: ir_kernels.copy_kernel[(1,)](torch.empty(16), torch.empty(16), 1, BLOCK=1024))
    assert kernel.signature["n"] == "constexpr" and kernel.constexprs["n"] == 1


def test_autotuned_kernel_compiles_every_config_and_launches_only_the_default():
    kernels = aot_kernels(ir_kernels.LAUNCHES["autotuned"])
    configs = sorted(kernels, key=lambda kernel: kernel.config["index"])
    assert [kernel.config["kwargs"]["BLOCK"] for kernel in configs] == [1024, 256]
    assert [kernel.config["default"] for kernel in configs] == [True, False]
    assert configs[0].launches == [{"case": None, "grid": [4, 1, 1]}] and configs[1].launches == []
    assert configs[1].metadata["num_warps"] == 2 and configs[0].label != configs[1].label


def test_heuristics_choose_the_constexpr_before_compiling():
    (kernel,) = aot_kernels(ir_kernels.LAUNCHES["heuristics"])
    assert kernel.constexprs["BLOCK"] == 512 and kernel.launches[0]["grid"] == [8, 1, 1]


def test_captured_kernel_survives_a_json_round_trip():
    (kernel,) = aot_kernels(ir_kernels.LAUNCHES["copy_aligned"])
    again = CapturedKernel.from_dict(json.loads(json.dumps(kernel.to_dict())))
    assert again == kernel and set(again.stages) == {"ttir", "ttgir", "llir", "ptx", "sass"}


def test_sass_is_text_annotated_with_source_lines():
    (kernel,) = aot_kernels(ir_kernels.LAUNCHES["copy_aligned"])
    assert f'//## File "{ir_kernels.SOURCE}", line {ir_kernels.line_of("@copy-load")}' in kernel.stages["sass"]
    assert "LDG.E.128" in kernel.stages["sass"]


def test_resources_come_from_the_cubin_and_ptxas():
    (kernel,) = aot_kernels(ir_kernels.LAUNCHES["matmul_hgmma"])
    assert 0 < kernel.resources["registers"] <= 255 and kernel.resources["shared_bytes"] > 0
    assert kernel.resources["spill_stores_bytes"] == 0 and kernel.resources["num_warps"] == 8


@pytest.mark.parametrize("launch", ["copy_aligned", "pressure", "matmul_hgmma", "reduce_loop", "barrier_loop",
                                    "reduce_loop_one_warp", "tma_copy"])
def test_resources_say_what_ptxas_says_and_ptxas_runs_again_only_for_a_stack_frame(launch):
    """The cubin gives registers, the stack frame and the barriers; a second ptxas run, as slow as the
    compile's own, is needed only for the spill bytes of a kernel with a stack frame to spill into."""
    from triton.backends.nvidia.compiler import sm_arch_from_capability

    from ladder.runner import cubin

    (kernel,) = aot_kernels(ir_kernels.LAUNCHES[launch])
    ptxas = cubin.ptxas_report(kernel.stages["ptx"], sm_arch_from_capability(90))
    got = kernel.resources
    assert {key: got[key] for key in ptxas} == ptxas
    assert got["source"] == ("cuobjdump+ptxas" if ptxas["stack_bytes"] else "cuobjdump")


def test_what_ptxas_and_nvdisasm_print_is_kept_by_their_input_and_flags_and_a_corrupt_entry_runs_them_again(
        tmp_path, monkeypatch):
    from triton.backends.nvidia.compiler import sm_arch_from_capability

    from ladder.runner import cubin

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    kept = tmp_path / "ladder" / "cubin-tools"
    (kernel,) = aot_kernels(ir_kernels.LAUNCHES["pressure"])  # spills: the capture asked ptxas too
    entries = sorted(kept.glob("*.gz"))
    assert len(entries) == 2   # the SASS and the ptxas log
    ptx, arch = kernel.stages["ptx"], sm_arch_from_capability(90)
    report = cubin.ptxas_report(ptx, arch)
    assert report["spill_stores_bytes"] == kernel.resources["spill_stores_bytes"] > 0
    for entry in entries:
        entry.write_bytes(b"not gzip")
    assert cubin.ptxas_report(ptx, arch) == report
    (again,) = aot_kernels(ir_kernels.LAUNCHES["pressure"])
    assert again.stages["sass"] == kernel.stages["sass"] and "STL" in kernel.stages["sass"]
    assert sorted(kept.glob("*.gz")) == entries
    cubin.ptxas_report(ptx, arch, fmad=False)
    assert len(list(kept.glob("*.gz"))) == 3


SOLUTION = '''
import torch, triton, triton.language as tl
from torch import nn

@triton.jit
def scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)

class ModelNew(nn.Module):
    def forward(self, x):
        y = torch.empty(x.shape, device="cuda")
        scale_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
        return y
'''

PROBLEM = '''
import torch
from torch import nn

class Model(nn.Module):
    def forward(self, x):
        return x * 2

size = 4096

def get_inputs():
    return [torch.randn(size)]

def get_init_inputs():
    return []

def get_cases():
    return [{"size": 4096}, {"size": 4097}, {"size": 8192}]
'''


def test_solution_is_captured_case_by_case_with_each_case_s_specialization(tmp_path):
    (tmp_path / "solution.py").write_text(SOLUTION)
    (tmp_path / "problem.py").write_text(PROBLEM)
    kernels = capture(tmp_path / "solution.py")  # problem.py beside it is found
    by_cases = {tuple(kernel.cases): kernel for kernel in kernels}
    assert set(by_cases) == {(0, 2), (1,)}
    assert "ld.global.v4" in by_cases[(0, 2)].stages["ptx"] and "ld.global.v4" not in by_cases[(1,)].stages["ptx"]
    assert [launch["grid"] for launch in by_cases[(0, 2)].launches] == [[4, 1, 1], [8, 1, 1]]


def test_one_case_only(tmp_path):
    (tmp_path / "solution.py").write_text(SOLUTION)
    (tmp_path / "problem.py").write_text(PROBLEM)
    (kernel,) = capture(tmp_path / "solution.py", tmp_path / "problem.py", case_index=1)
    assert kernel.cases == [1]


def test_a_script_that_launches_kernels_is_captured(tmp_path):
    script = tmp_path / "script.py"
    script.write_text(SOLUTION.split("class ModelNew")[0] + textwrap.dedent('''
        x = torch.randn(2048, device="cuda")
        scale_kernel[(2,)](x, torch.empty_like(x), 2048, BLOCK=1024)
        scale_kernel[(2,)](x, torch.empty_like(x), 2048, BLOCK=1024)
    '''))
    (kernel,) = capture(script)
    assert kernel.name == "scale_kernel" and len(kernel.launches) == 2 and kernel.cases == [None]
    assert kernel.file == str(script.resolve()) and kernel.line == 6


def test_a_forward_that_sizes_its_grid_from_the_device_is_captured_with_the_target_s_sm_count(tmp_path):
    script = tmp_path / "script.py"
    script.write_text(SOLUTION.split("class ModelNew")[0] + textwrap.dedent('''
        sms = torch.cuda.get_device_properties(0).multi_processor_count
        x = torch.randn(4096, device="cuda")
        scale_kernel[(sms,)](x, torch.empty_like(x), 4096, BLOCK=1024)
    '''))
    (kernel,) = capture(script)
    assert kernel.launches == [{"case": None, "grid": [132, 1, 1]}]


def test_a_solution_without_a_problem_is_a_clear_error(tmp_path):
    from ladder.runner.problem import ProblemError

    (tmp_path / "solution.py").write_text(SOLUTION)
    with pytest.raises(ProblemError, match="no problem was given"):
        capture(tmp_path / "solution.py")


def test_unknown_target_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown target"):
        parse_target("h200")


def test_stand_in_keeps_cuda_tensors_on_the_cpu_without_filling_large_ones():
    from ladder.runner.capture import REAL_FILL_ELEMENTS

    big = (REAL_FILL_ELEMENTS // 1024 + 1, 1024)
    fills = []
    real_empty = torch.empty

    def recording_empty(*args, **kwargs):
        fills.append(args)
        return real_empty(*args, **kwargs)

    with cpu_stand_in(), pytest.MonkeyPatch.context() as patch:
        patch.setattr(torch, "empty", recording_empty)
        x = torch.randn(*big, device="cuda", dtype=torch.float16)
        y = torch.ones(3).cuda().to("cuda:0")
    assert x.device.type == "cpu" and x.shape == big and x.dtype == torch.float16
    assert fills == [big]  # allocated, never filled
    assert y.device.type == "cpu" and y.tolist() == [1.0, 1.0, 1.0]


def test_stand_in_fills_small_random_tensors_the_same_way_every_run():
    def routing():
        with cpu_stand_in():
            torch.manual_seed(0)
            scores = torch.rand(64, 128, device="cuda")
            return scores.topk(8, dim=-1).indices

    first, second = routing(), routing()
    assert torch.equal(first, second)
    assert first.unique().numel() > 8  # real scores spread tokens over experts


@pytest.fixture
def gpu_stand_in():
    """A stub driver that lets Triton's JIT compile for sm_90 and 'launch' through the real hook path."""
    from triton.runtime import driver

    saved = driver._active
    driver.set_active(_launching_sm90_stub())
    with fresh_compiles():  # a disk-cache hit would carry the file path of whichever copy compiled first
        yield
    driver._active = saved


@pytest.fixture
def gpu_stand_in_cached(tmp_path):
    """The same stub driver with Triton's disk cache on, in a folder of the test's own."""
    from triton import knobs
    from triton.runtime import driver

    saved = driver._active
    driver.set_active(_launching_sm90_stub())
    with knobs.cache.scope():
        knobs.cache.dir = str(tmp_path / "triton-cache")
        yield tmp_path
    driver._active = saved


def _launching_sm90_stub():
    """The stub launcher does what the CUDA launcher does around a launch: it calls the launch hooks."""
    from triton.backends.compiler import GPUTarget

    class Launcher:
        def __init__(self, src, metadata):
            pass

        def __call__(self, gx, gy, gz, stream, function, packed, launch_metadata, enter_hook, exit_hook, *args):
            enter_hook(launch_metadata)
            exit_hook(launch_metadata)

    class Utils:
        def load_binary(self, name, kernel, shared, device):
            return 1, hash(kernel) & 0xFFFFFF, 42, 3, 1024

        def get_device_properties(self, device):
            return {"max_shared_mem": 232448}

    class Sm90Stub:
        utils, launcher_cls = Utils(), Launcher

        def get_current_device(self):
            return 0

        def get_current_stream(self, device=None):
            return 0

        def get_current_target(self):
            return GPUTarget("cuda", 90, 32)

        def get_benchmarker(self):
            def time_it(kernel_call, quantiles):
                kernel_call()
                return [1.0, 1.0, 1.0]

            return time_it

    return Sm90Stub()


def test_jit_capture_records_what_the_hooks_report(gpu_stand_in):
    from ladder.runner.capture import JitCapture

    x = torch.empty(4112)
    with JitCapture() as session:
        session.case = 7
        ir_kernels.copy_kernel[(4,)](x, x, 4096, BLOCK=1024)
        ir_kernels.copy_kernel[(5,)](x, x, 4096, BLOCK=1024)
        ir_kernels.copy_kernel[(1,)](x[1:], x, 4099, BLOCK=1024)
    kernels = {len(kernel.attrs): kernel for kernel in session.kernels()}
    aligned, misaligned = kernels[3], kernels[1]  # src, dst and n divisible by 16; only dst
    assert aligned.backend == "cuda" and aligned.launches == [{"case": 7, "grid": [4, 1, 1]},
                                                             {"case": 7, "grid": [5, 1, 1]}]
    assert misaligned.launches == [{"case": 7, "grid": [1, 1, 1]}]
    assert aligned.resources["driver_registers"] == 42 and aligned.resources["driver_spills"] == 3
    (aot,) = aot_kernels(lambda: ir_kernels.copy_kernel[(4,)](x, x, 4096, BLOCK=1024))
    assert aot.metadata["hash"] == aligned.metadata["hash"] and aot.label == "copy_kernel"


def test_jit_capture_finds_kernels_compiled_before_it_began(gpu_stand_in):
    from ladder.runner.capture import JitCapture

    x = torch.empty(2048)
    ir_kernels.heuristic_copy_kernel[(4,)](x, x, 2048)  # compiled and cached before the capture
    with JitCapture() as session:
        ir_kernels.heuristic_copy_kernel[(4,)](x, x, 2048)
    (kernel,) = session.kernels()
    assert kernel.name == "heuristic_copy_kernel" and kernel.launches == [{"case": None, "grid": [4, 1, 1]}]


def test_jit_capture_leaves_out_the_autotuner_s_timing_launches(gpu_stand_in):
    from ladder.runner.capture import JitCapture

    with JitCapture() as session:
        ir_kernels.LAUNCHES["autotuned"]()
    launched = [kernel for kernel in session.kernels() if kernel.launches]
    assert len(session.kernels()) == 2  # both configs were compiled to be timed
    (chosen,) = launched
    assert len(chosen.launches) == 1 and chosen.launches[0]["grid"][0] in (4, 16)



COPIED_KERNEL = textwrap.dedent('''
    import triton
    import triton.language as tl


    @triton.jit
    def twin_copy(src, dst, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(dst + offs, tl.load(src + offs, mask=offs < n), mask=offs < n)
''')


def _module_from(path):
    import importlib.util

    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_jit_capture_reuses_the_cache_but_describes_this_file_where_the_cache_held_another_copy(gpu_stand_in_cached):
    from ladder.runner.capture import JitCapture

    first, second = gpu_stand_in_cached / "first_copy.py", gpu_stand_in_cached / "second_copy.py"
    first.write_text(COPIED_KERNEL)
    second.write_text(COPIED_KERNEL)
    x = torch.empty(4096)
    _module_from(first).twin_copy[(4,)](x, x, 4096, BLOCK=1024)  # the disk cache now holds first_copy's IR
    with JitCapture() as session:
        _module_from(second).twin_copy[(4,)](x, x, 4096, BLOCK=1024)
        _module_from(first).twin_copy[(4,)](x, x, 4096, BLOCK=1024)
    by_file = {kernel.file: kernel for kernel in session.kernels()}
    assert set(by_file) == {str(first), str(second)}
    for path, kernel in by_file.items():
        assert f'"{path}":' in kernel.stages["ttir"] and Path(path).name in kernel.stages["ptx"]
    assert by_file[str(first)].metadata["hash"] == by_file[str(second)].metadata["hash"]  # one compile, twice
    assert by_file[str(second)].resources["driver_registers"] == 42  # the loaded kernel's driver numbers



def test_a_capture_reads_the_kernels_earlier_runs_put_in_the_shared_cache(gpu_stand_in_cached, monkeypatch):
    import runpy

    from triton.compiler import ASTSource

    from ladder.runner.capture import capture

    elsewhere, script = gpu_stand_in_cached / "elsewhere", gpu_stand_in_cached / "script.py"
    elsewhere.mkdir()
    launch = "\nimport torch\nx = torch.empty(4096)\ntwin_copy[(4,)](x, x, 4096, BLOCK=1024)\n"
    script.write_text(COPIED_KERNEL + launch)
    (elsewhere / "script.py").write_text(COPIED_KERNEL + launch)
    runpy.run_path(str(script))  # an earlier rung's run of the script: the shared cache holds its kernel
    compiles = []
    make_ir = ASTSource.make_ir
    monkeypatch.setattr(ASTSource, "make_ir", lambda self, *args: compiles.append(self) or make_ir(self, *args))
    (kernel,) = capture(script)
    assert compiles == [] and f'"{script}":' in kernel.stages["ttir"]
    (kernel,) = capture(elsewhere / "script.py")  # the shared cache's kernel says script.py, not this copy
    assert len(compiles) == 1 and f'"{elsewhere / "script.py"}":' in kernel.stages["ttir"]


AUTOTUNED_SCRIPT = textwrap.dedent('''
    import torch
    import triton
    import triton.language as tl


    @triton.autotune(configs=[triton.Config({"BLOCK": 1024}, num_warps=4), triton.Config({"BLOCK": 256}, num_warps=2)],
                     key=["n"])
    @triton.jit
    def tuned_copy(src, dst, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(dst + offs, tl.load(src + offs, mask=offs < n), mask=offs < n)


    x = torch.empty(4096)
    tuned_copy[lambda meta: (triton.cdiv(4096, meta["BLOCK"]),)](x, x, 4096)
''')


def record_a_choice_of_the_small_block(script, cache) -> None:
    """Run the script as a timed run would, leaving the autotuner's choice in ``cache``; then make
    the second config the faster one in that record (the stand-in times every config alike)."""
    import runpy

    from triton import knobs

    with knobs.cache.scope(), knobs.autotuning.scope():
        knobs.cache.dir, knobs.autotuning.cache = str(cache), True
        runpy.run_path(str(script))
    (choice,) = cache.glob("*/*.autotune.json")
    record = json.loads(choice.read_text())
    record["configs_timings"] = [[config, [2.0] * 3 if config["kwargs"]["BLOCK"] == 1024 else [1.0] * 3]
                                 for config, _ in record["configs_timings"]]
    choice.write_text(json.dumps(record))


@pytest.mark.parametrize("where", ["shared cache", "the solution's contestant cache"])
def test_jit_capture_compiles_only_the_config_a_timed_run_chose(gpu_stand_in, tmp_path, monkeypatch, where):
    from ladder.runner.capture import capture
    from ladder.runner.paths import kernel_cache

    script = tmp_path / "tuned.py"
    script.write_text(AUTOTUNED_SCRIPT)
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "cache"))
    assert len(capture(script)) == 2  # nothing recorded: every config compiled to be timed
    cache = tmp_path / "cache" if where == "shared cache" else kernel_cache(script)
    record_a_choice_of_the_small_block(script, cache)
    before = sorted(cache.rglob("*"))
    (kernel,) = capture(script)
    assert kernel.constexprs["BLOCK"] == 256 and kernel.launches == [{"case": None, "grid": [16, 1, 1]}]
    assert sorted(cache.rglob("*")) == before  # the capture compiled into a cache of its own


def test_recording_blocks_that_overlap_keep_the_setting_until_the_last_ends(monkeypatch):
    import os

    from ladder.runner.capture.picks import choices_recorded

    monkeypatch.delenv("TRITON_CACHE_AUTOTUNING", raising=False)
    first, second = choices_recorded(), choices_recorded()
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)
    assert os.environ["TRITON_CACHE_AUTOTUNING"] == "1"  # the second block still runs
    second.__exit__(None, None, None)
    assert "TRITON_CACHE_AUTOTUNING" not in os.environ
    monkeypatch.setenv("TRITON_CACHE_AUTOTUNING", "0")
    with choices_recorded():
        assert os.environ["TRITON_CACHE_AUTOTUNING"] == "0"  # the user's choice
    assert os.environ["TRITON_CACHE_AUTOTUNING"] == "0"


def test_the_profiling_driver_runs_a_solution_on_its_judges_cache_where_it_has_one(tmp_path, monkeypatch):
    from triton import knobs

    from ladder.runner.capture.picks import as_timed
    from ladder.runner.paths import kernel_cache

    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TRITON_CACHE_AUTOTUNING", raising=False)
    solution = tmp_path / "solution.py"
    solution.write_text("class ModelNew: pass\n")
    with as_timed(solution):  # never timed: the shared cache, choices recorded from here on
        assert knobs.cache.dir == str(tmp_path / "cache") and knobs.autotuning.cache
    own = kernel_cache(solution)
    own.mkdir(parents=True)
    with as_timed(solution):
        assert knobs.cache.dir == str(own) and knobs.autotuning.cache
    assert knobs.cache.dir == str(tmp_path / "cache") and not knobs.autotuning.cache
