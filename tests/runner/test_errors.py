"""One-line failure reasons."""
from ladder.runner.errors import one_line


def test_first_line_of_a_multiline_message():
    assert one_line(ValueError("bad block size\nmore detail")) == "ValueError: bad block size"


def test_device_error_phrase_is_not_repeated_when_already_first():
    error = RuntimeError("CUDA error: an illegal memory access was encountered\nCompile with TORCH_USE_CUDA_DSA")
    assert one_line(error) == "RuntimeError: CUDA error: an illegal memory access was encountered"


def test_device_error_phrase_buried_below_the_first_line_is_brought_forward():
    error = RuntimeError("Triton Error [CUDA]: launch failed\nreason: an illegal memory access")
    assert one_line(error) == "RuntimeError: illegal memory access: Triton Error [CUDA]: launch failed"


def test_triton_compilation_error_reports_the_error_not_the_source_excerpt():
    class CompilationError(Exception):
        error_message = "arange's range must be a power of 2"

    assert one_line(CompilationError("at 3:4:\n    x = tl.arange(0, 1000)\n    ^")) == \
        "CompilationError: arange's range must be a power of 2"


def test_long_reasons_are_shortened():
    assert len(one_line(ValueError("x" * 1000))) == 300
