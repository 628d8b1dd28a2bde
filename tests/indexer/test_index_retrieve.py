"""Ranking by file and the reranker's features (indexer.retrieve, indexer.rerank), on hand-made data."""
from __future__ import annotations

import bm25s
import numpy as np
import pytest

from ladder.indexer import rerank
from ladder.indexer.retrieve import rank_files
from ladder.indexer.text import keyword_tokens


def test_a_file_is_shown_by_its_best_chunk_and_scored_with_its_others():
    file_of = ["a.cpp", "b.cpp", "b.cpp", "c.cpp"]
    scores = {0: 0.20, 1: 0.18, 2: 0.17, 3: 0.10}
    ranked = rank_files(scores, file_of, others=0.3)
    assert ranked[0] == (1, pytest.approx(0.18 + 0.3 * 0.17))
    assert [row for row, _ in ranked] == [1, 0, 3]


def test_without_weight_for_other_chunks_files_rank_by_their_best_chunk():
    file_of = ["a.cpp", "b.cpp", "b.cpp"]
    ranked = rank_files({0: 0.20, 1: 0.18, 2: 0.17}, file_of, others=0.0)
    assert [row for row, _ in ranked] == [0, 1]


def test_files_of_equal_score_are_ordered_by_row_so_answers_are_stable():
    assert [row for row, _ in rank_files({5: 0.5, 3: 0.5}, ["a", "b", "c", "d", "e", "f"])] == [3, 5]


def _vocabulary(documents: list[list[str]], files: list[str]) -> rerank.Vocabulary:
    keywords = bm25s.BM25()
    keywords.index(documents, show_progress=False)
    return rerank.Vocabulary(keywords, files)


def test_coverage_weighs_a_questions_rare_words_above_its_common_ones():
    documents = [["kernel", "histogram"], ["kernel", "loop"], ["kernel", "loop"], ["kernel", "loop"]]
    vocabulary = _vocabulary(documents, ["a", "b", "c", "d"])
    records = [{"metadata": {"path": p}, "text": ""} for p in ("a", "b", "c", "d")]
    zeros = np.zeros(4, dtype=np.float32)
    values = rerank.features([0, 1], zeros, zeros, ["kernel", "histogram", "loop"], records, vocabulary)
    assert values["coverage"][0] > values["coverage"][1]  # histogram is rarer than loop


def test_a_word_the_index_never_saw_counts_as_missing_and_lowers_every_score():
    documents = [["coalesce", "layout"], ["pipeline", "loop"]]
    vocabulary = _vocabulary(documents, ["a", "b"])
    records = [{"metadata": {"path": "a"}, "text": ""}, {"metadata": {"path": "b"}, "text": ""}]
    zeros = np.zeros(2, dtype=np.float32)
    known = rerank.features([0], zeros, zeros, ["coalesce", "layout"], records, vocabulary)
    diluted = rerank.features([0], zeros, zeros, ["coalesce", "layout", "sourdough"], records, vocabulary)
    assert known["coverage"][0] == pytest.approx(1.0)
    assert diluted["coverage"][0] < 0.75


def test_a_question_naming_a_file_scores_that_file_by_name():
    documents = [keyword_tokens("AutoBlockify program id"), keyword_tokens("program grid")]
    vocabulary = _vocabulary(documents, ["x", "y"])
    records = [{"metadata": {"path": "lib/AutoBlockify.cpp", "symbol": "AutoBlockify"}, "text": ""},
               {"metadata": {"path": "lib/Grid.cpp"}, "text": ""}]
    zeros = np.zeros(2, dtype=np.float32)
    values = rerank.features([0, 1], zeros, zeros, keyword_tokens("which pass is AutoBlockify, program id"),
                             records, vocabulary)
    assert values["named"][0] > 0 and values["named"][1] == 0


def test_scores_lie_between_zero_and_one():
    documents = [["a1", "b1"], ["b1", "c1"], ["c1"]]
    vocabulary = _vocabulary(documents, ["x", "y", "z"])
    records = [{"metadata": {"path": p}, "text": ""} for p in "xyz"]
    dense = np.array([0.9, -0.2, 0.4], dtype=np.float32)
    bm25 = np.array([2.0, 1.0, 0.0], dtype=np.float32)
    scores = rerank.scores([0, 1, 2], dense, bm25, ["a1", "b1"], records, vocabulary)
    assert all(0.0 <= value <= 1.0 for value in scores.values())
    assert scores[0] == max(scores.values())


def test_a_question_names_its_backend_by_its_words():
    assert rerank.backend_named("tl.sort on the Ascend NPU") == "ascend"
    assert rerank.backend_named("wgmma.wait_group on H100") == "nvidia"
    assert rerank.backend_named("how is tl.dot lowered") is None
    assert rerank.backend_named("port my CUDA kernel to the NPU") is None  # both: no preference


def test_chunks_of_the_named_backend_outrank_those_of_another():
    vocabulary = _vocabulary([["histogram"], ["histogram"], ["histogram"]], ["a", "b", "c"])
    records = [{"metadata": {"path": p, "backend": b}, "text": ""} for p, b in (("a", "ascend"), ("b", "common"), ("c", "nvidia"))]
    zeros = np.zeros(3, dtype=np.float32)
    values = rerank.features([0, 1, 2], zeros, zeros, ["histogram"], records, vocabulary, backend="ascend")
    assert list(values["backend"]) == [1.0, 0.5, 0.0]


def test_a_header_is_implemented_by_the_source_file_of_its_name():
    from ladder.indexer.retrieve import implementations

    paths = ["include/X/Converter.h", "lib/X/Converter.cpp", "lib/Y/Utils.cpp", "lib/Z/Utils.cpp", "lib/W/Utils.cpp",
             "include/Y/Utils.h", "include/Only.h"]
    found = implementations(paths)
    assert found["include/X/Converter.h"] == ["lib/X/Converter.cpp"]
    assert "include/Y/Utils.h" not in found  # three Utils.cpp: no telling which
    assert "include/Only.h" not in found


def test_a_chunk_with_the_questions_words_side_by_side_scores_the_phrase():
    documents = [keyword_tokens("the logical block id replaces the program"), keyword_tokens("block of the logical id")]
    vocabulary = _vocabulary(documents, ["a", "b"])
    records = [{"metadata": {"path": "a"}, "text": "the logical block id replaces the program"},
               {"metadata": {"path": "b"}, "text": "block of the logical id"}]
    zeros = np.zeros(2, dtype=np.float32)
    values = rerank.features([0, 1], zeros, zeros, keyword_tokens("logical block"), records, vocabulary)
    assert values["phrases"][0] == pytest.approx(1.0) and values["phrases"][1] == 0.0
    assert values["coverage"][0] == values["coverage"][1]
