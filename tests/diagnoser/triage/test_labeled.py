"""Precision and recall of source-level triage on the labeled kernels (targets 0.9 and 0.8)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench" / "triage"))

from labeled import evaluate, load_labels  # noqa: E402

from .triage_helpers import LABELED  # noqa: E402


@pytest.fixture(scope="module")
def report():
    return evaluate()


def test_labeled_set_has_enough_planted_and_clean_kernels():
    labels = load_labels(LABELED)
    assert sum(1 for ids in labels.values() if ids) >= 20
    assert sum(1 for name, ids in labels.items() if not ids) >= 5


def test_labels_name_only_catalog_ids():
    from ladder.diagnoser.triage.catalog import load_catalog

    assert set().union(*load_labels(LABELED).values()) <= set(load_catalog())


def test_overall_precision_and_recall_meet_the_targets(report):
    assert report["overall"]["precision"] >= 0.9
    assert report["overall"]["recall"] >= 0.8


def test_no_clean_kernel_gets_a_finding(report):
    dirty = {name: row["found"] for name, row in report["per_kernel"].items() if not row["expected"] and row["found"]}
    assert dirty == {}
