"""The static model's source segments are those of `ast.get_source_segment`, which it no longer
calls (that function splits the whole file, a character at a time, on every call)."""
import ast
from pathlib import Path

import pytest

from ladder.diagnoser.triage.source import parse_module

REPO = Path(__file__).resolve().parents[3]
ODD_TEXT = (
    "import triton\r\nimport triton.language as tl\r\n\r\n"
    "@triton.jit\r\ndef k(x_ptr, n, BLOCK: tl.constexpr):\r\n"
    "    # a comment with \u00e9 and \u4e2d\u6587 before code \x0c\r\n"
    "    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)  # \u00fc\n"
    "    v = tl.load(x_ptr + o,\r"
    "                mask=o < n)\n"
    "    tl.store(x_ptr + o, v * \"\u00e9\".__len__())"
)


def _every_node_agrees(text: str) -> int:
    module = parse_module(text)
    nodes = [n for n in ast.walk(module.tree) if hasattr(n, "end_col_offset")]
    for node in nodes:
        assert module.segment(node) == (ast.get_source_segment(text, node) or ""), ast.dump(node)[:120]
    for line in range(0, text.count("\n") + text.count("\r") + 2):
        assert module.line_text(line) == _reference_line(text, line)
    return len(nodes)


def _reference_line(text: str, line: int) -> str:
    lines = ast._splitlines_no_ff(text)  # the tokenizer's lines, which ast's line numbers count
    return lines[line - 1].strip() if 0 < line <= len(lines) else ""


def test_segments_agree_on_crlf_lone_cr_form_feed_and_multibyte_text():
    assert _every_node_agrees(ODD_TEXT) > 40


REAL_FILES = ["bench/sets/real/flaggems_mm.py", "kernels/level2/99_matmul_gelu_softmax/solution.py"]


@pytest.mark.parametrize("name", REAL_FILES)
def test_segments_agree_on_real_files(name):
    assert _every_node_agrees((REPO / name).read_text()) > 500


def test_a_segment_costs_its_own_length_not_the_files():
    """2,000 segments of a 4,000-line file: about a minute when each split the whole file again."""
    import time

    text = "".join(f"value_{i} = offset_{i} * 4 + base_{i}  # line {i}\n" for i in range(4000))
    module = parse_module(text)
    nodes = [n for n in ast.walk(module.tree) if isinstance(n, ast.BinOp)][:2000]
    started = time.perf_counter()
    segments = [module.segment(n) for n in nodes]
    assert time.perf_counter() - started < 2.0
    assert segments[1999] == "offset_1999 * 4 + base_1999"
