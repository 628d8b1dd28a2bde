"""Rung 4 for an Ascend finding cites the Ascend backend's code and docs, never code shared with
(or belonging to) other backends, and says so when the index holds no Ascend code at all."""
from __future__ import annotations

from pathlib import Path

import pytest

from ladder.diagnoser.compiler import escalate
from ladder.diagnoser.rungs import catalog_compiler_refs

TREE = Path(__file__).resolve().parents[1] / "data" / "compiler-ascend"
ASCEND_CODE = ("third_party/ascend/", "docs/en/")

MASKED_FILL = {"kernel": "double_kernel[n:i32]", "kind": "masked_load_fill", "file": "solution.py", "line": 10,
               "stage": "ttadapter", "value": {"fill": "0.000000e+00", "shape": [1024], "dtype": "f32"},
               "excerpt": "scf.if %5 {\n  linalg.fill ins(%cst : f32) outs(%alloc : memref<1024xf32>)"}
FINDING = {"pattern": "npu.masked-load-fill", "rung": 3, "title": "masked load fills before copying",
           "file": "solution.py", "line": 10, "kernel": "double_kernel", "confidence": 0.95,
           "evidence": [{"type": "fact", **MASKED_FILL}]}


@pytest.fixture(scope="module")
def ascend_index(tmp_path_factory):
    """A real index (chroma + BM25 + the bundled embedding model) over the Ascend fixture tree."""
    from ladder import indexer
    from ladder.indexer.build import build

    folder = str(tmp_path_factory.mktemp("ascend-index"))
    build(sources=[f"compiler={TREE}"], index_dir=folder)
    return lambda query, k=5, where=None: indexer.search(query, k=k, where=where, index_dir=folder)


@pytest.mark.slow
def test_an_ascend_finding_cites_ascend_backend_files_only(ascend_index):
    got = escalate([MASKED_FILL], [FINDING], ascend_index, target="ascend", catalog=catalog_compiler_refs())
    cited = [c["path"] for c in got["citations"]]
    assert "third_party/ascend/lib/TritonToLinalg/LoadStoreConverter.cpp" in cited
    assert cited and all(path.startswith(ASCEND_CODE) for path in cited), cited
    assert got["findings"][0]["rung"] == 4 and got["findings"][0]["line"] == 10


@pytest.mark.slow
def test_a_gpu_target_is_never_answered_from_the_ascend_backend(ascend_index):
    got = escalate([MASKED_FILL], [], ascend_index, target="sm90")
    assert not any(c["path"].startswith("third_party/ascend/") for c in got["citations"])


def test_an_index_without_ascend_code_cites_nothing_and_says_why():
    def shared_only(query, k=5, where=None):
        return [{"path": "python/triton/compiler/code_generator.py", "start": 1, "end": 10, "pass": None,
                 "score": 0.9, "text": "masked load other fill mask", "language": "python", "symbol": "visit_load",
                 "backend": "common", "tree": "triton"}]

    got = escalate([MASKED_FILL], [FINDING], shared_only, target="ascend")
    assert got["citations"] == []
    assert any("holds no ascend backend code" in warning for warning in got["warnings"])
