"""The second blind triage set (bench/sets/triage/blind2) covers the whole catalog and holds clean kernels.

The checks every set shares (labels match folders, known ids, backend prefixes, justified labels,
kernels correct under the interpreter) are in test_label_sets.py.
"""
from __future__ import annotations

from . import label_sets
from ladder.diagnoser.triage.catalog import STABLE_IDS


def test_the_set_covers_every_catalog_id_and_holds_clean_kernels_on_both_backends():
    labels = label_sets.labels("blind2")
    assert set().union(*labels.values()) == set(STABLE_IDS) - label_sets.IDS_AFTER_FREEZE
    clean = [kernel for kernel, ids in labels.items() if not ids]
    assert len(clean) >= 8
    assert any(label_sets.is_ascend("blind2", kernel) for kernel in clean)
    assert any(not label_sets.is_ascend("blind2", kernel) for kernel in clean)
