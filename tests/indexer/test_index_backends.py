"""Backend labels (indexer.backends) and what they admit: the backend filter and the reranker."""
from __future__ import annotations

import bm25s
import numpy as np
import pytest

from ladder.indexer import rerank
from ladder.indexer.backends import backend_of, runs
from ladder.indexer.retrieve import _where


@pytest.mark.parametrize(("path", "label"), [
    ("lib/Conversion/TritonGPUToLLVM/HistogramOpToLLVM.cpp", "gpu"),
    ("lib/Dialect/TritonGPU/Transforms/Coalesce.cpp", "gpu"),
    ("include/triton/Dialect/TritonGPU/IR/TritonGPUOps.td", "gpu"),
    ("lib/Conversion/TritonToTritonGPU/TritonToTritonGPUPass.cpp", "gpu"),
    ("lib/Dialect/TritonNvidiaGPU/Transforms/FenceInsertion.cpp", "nvidia"),
    ("third_party/ascend/lib/TritonToHFusion/TritonToHFusion.cpp", "ascend"),
    ("lib/Dialect/Triton/Transforms/Combine.cpp", "common"),
])
def test_tritongpu_code_is_labelled_shared_by_the_gpu_backends_only(path, label):
    assert backend_of(path, "cpp", "") == label


def test_the_gpu_backends_compile_through_tritongpu_and_ascend_does_not():
    assert runs("nvidia", "gpu") and runs("amd", "gpu") and runs("nvidia", "common")
    assert not runs("ascend", "gpu") and runs("ascend", "common") and not runs("ascend", "nvidia")


def test_a_backend_filter_admits_what_that_backend_compiles_through():
    assert sorted(_where({"backend": "nvidia"})["backend"]) == ["common", "gpu", "nvidia"]
    assert sorted(_where({"backend": "ascend"})["backend"]) == ["ascend", "common"]
    assert sorted(_where({"backend": ["ascend", "nvidia"]})["backend"]) == ["ascend", "common", "gpu", "nvidia"]


def test_tritongpu_code_does_not_answer_a_question_about_the_npu():
    keywords = bm25s.BM25()
    keywords.index([["histogram"]] * 3, show_progress=False)
    vocabulary = rerank.Vocabulary(keywords, ["a", "b", "c"])
    records = [{"metadata": {"path": p, "backend": b}, "text": ""} for p, b in (("a", "ascend"), ("b", "gpu"), ("c", "common"))]
    zeros = np.zeros(3, dtype=np.float32)
    on_npu = rerank.features([0, 1, 2], zeros, zeros, ["histogram"], records, vocabulary, backend="ascend")
    on_gpu = rerank.features([0, 1, 2], zeros, zeros, ["histogram"], records, vocabulary, backend="nvidia")
    assert list(on_npu["backend"]) == [1.0, 0.0, 0.5]
    assert list(on_gpu["backend"]) == [0.0, 1.0, 0.5]
