"""Rank fusion and ranking by file (indexer.retrieve), on hand-made rankings."""
from __future__ import annotations

import pytest

from indexer.retrieve import fuse, rank_files


def test_fusion_adds_reciprocal_ranks_of_both_retrievers():
    fused = fuse([[7, 8], [8, 9]], k=10)
    assert fused == pytest.approx({8: 1 / 11 + 1 / 10, 7: 1 / 10, 9: 1 / 11})
    assert list(fused) == [8, 7, 9]


def test_fusion_breaks_ties_by_row_so_answers_are_stable():
    assert list(fuse([[5], [3]], k=10)) == [3, 5]


def test_a_small_k_lets_one_retrievers_first_chunk_beat_a_chunk_both_rank_twelfth():
    dense = [1] + list(range(100, 110)) + [2]
    keyword = list(range(200, 211)) + [2]
    assert fuse([dense, keyword], k=10)[1] > fuse([dense, keyword], k=10)[2]
    assert fuse([dense, keyword], k=60)[1] < fuse([dense, keyword], k=60)[2]


def test_a_file_is_shown_by_its_best_chunk_and_scored_with_its_others():
    file_of = ["a.cpp", "b.cpp", "b.cpp", "c.cpp"]
    fused = {0: 0.20, 1: 0.18, 2: 0.17, 3: 0.10}
    ranked = rank_files(fused, file_of, others=0.3)
    assert ranked[0] == (1, pytest.approx(0.18 + 0.3 * 0.17))
    assert [row for row, _ in ranked] == [1, 0, 3]


def test_without_weight_for_other_chunks_files_rank_by_their_best_chunk():
    file_of = ["a.cpp", "b.cpp", "b.cpp"]
    ranked = rank_files({0: 0.20, 1: 0.18, 2: 0.17}, file_of, others=0.0)
    assert [row for row, _ in ranked] == [0, 1]
