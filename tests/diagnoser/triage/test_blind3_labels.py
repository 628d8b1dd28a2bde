"""The third blind triage set (bench/sets/triage/blind3) is balanced, explained and gives nothing away.

The set measures how pattern triage generalises: besides the checks every set shares
(test_label_sets.py: labels match folders, known ids, backend prefixes, justified labels, kernels
correct under the interpreter), each kernel carries at most two patterns, NOTES.md explains every
kernel, the set covers the catalog on both backends, and no problem or solution text hints at a
pattern.
"""
from __future__ import annotations

import re

import pytest

from . import label_sets
from ladder.diagnoser.triage.catalog import STABLE_IDS

SET = label_sets.folder("blind3")


@pytest.fixture(scope="module")
def labels() -> dict[str, list[str]]:
    return label_sets.labels("blind3")


def test_planted_kernels_carry_one_or_two_patterns(labels):
    assert all(len(ids) <= 2 for ids in labels.values()), {f: ids for f, ids in labels.items() if len(ids) > 2}


def test_notes_explain_every_kernel(labels):
    notes = (SET / "NOTES.md").read_text()
    missing = [kernel for kernel in labels if f"`{kernel}`" not in notes]
    assert not missing, missing


def test_the_set_covers_every_catalog_id_and_holds_clean_kernels_on_both_backends(labels):
    assert set().union(*labels.values()) == set(STABLE_IDS) - label_sets.IDS_AFTER_FREEZE
    nvidia = [kernel for kernel in labels if not label_sets.is_ascend("blind3", kernel)]
    ascend = [kernel for kernel in labels if label_sets.is_ascend("blind3", kernel)]
    assert len(nvidia) == 26 and len(ascend) == 10
    assert sum(not labels[kernel] for kernel in nvidia) >= 8
    assert sum(not labels[kernel] for kernel in ascend) >= 2


def test_solutions_name_no_pattern_or_hint_of_one():
    hints = re.compile(r"slow|naive|unfused|unoptimi[sz]ed|spill|scalar|strided|tiny|hardcod|contention|"
                       r"redundant|oversized|int64-index|tensor.core|pattern|\bbad\b|inefficient", re.I)
    for kernel in label_sets.kernel_folders("blind3"):
        for name in ("problem.py", "solution.py"):
            found = hints.findall((SET / kernel / name).read_text())
            assert not found, (kernel, name, found)
