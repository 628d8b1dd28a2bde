"""The second blind triage set (tests/triage/blind2) stays well formed and correct.

The set measures how pattern triage generalises, so its labels must name real catalog ids, match
each kernel's backend and carry their justification, and every kernel must compute what its
problem's reference computes (checked under Triton's interpreter in one subprocess).
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from diagnoser.triage.catalog import STABLE_IDS, load_catalog

SET = Path(__file__).resolve().parent / "blind2"
LABELS = SET / "labels.yaml"
REPO = SET.parents[2]

# The catalog's stable ids: the set covers each of them at least once.
CATALOG_IDS = set(STABLE_IDS)


@pytest.fixture(scope="module")
def labels() -> dict[str, list[str]]:
    return yaml.safe_load(LABELS.read_text())


def kernel_folders() -> list[str]:
    return sorted(path.name for path in SET.iterdir() if (path / "solution.py").is_file())


def is_ascend(folder: str) -> bool:
    return re.search(r"^import torch_npu\b", (SET / folder / "solution.py").read_text(), re.M) is not None


def test_every_kernel_folder_is_labeled_and_every_label_names_a_folder(labels):
    assert sorted(labels) == kernel_folders()


def test_every_folder_holds_a_problem_and_a_solution():
    for folder in kernel_folders():
        assert (SET / folder / "problem.py").is_file(), folder


def test_labels_are_lists_of_known_catalog_ids_without_repeats(labels):
    known = set(load_catalog())
    for folder, ids in labels.items():
        assert isinstance(ids, list), folder
        assert set(ids) <= known, (folder, set(ids) - known)
        assert len(ids) == len(set(ids)), folder


def test_ascend_kernels_carry_only_npu_ids_and_nvidia_kernels_only_nv_ids(labels):
    for folder, ids in labels.items():
        prefix = "npu." if is_ascend(folder) else "nv."
        assert all(pattern.startswith(prefix) for pattern in ids), folder


def test_every_label_line_carries_a_justification():
    for line in LABELS.read_text().splitlines():
        stripped = line.strip()
        is_label = stripped.startswith("- ") or re.match(r"^[\w.-]+: \[\]", stripped)
        if is_label:
            assert "#" in stripped and stripped.split("#", 1)[1].strip(), line


def test_the_set_covers_every_catalog_id_and_holds_clean_kernels_on_both_backends(labels):
    assert set().union(*labels.values()) == CATALOG_IDS
    clean = [folder for folder, ids in labels.items() if not ids]
    assert len(clean) >= 8
    assert any(is_ascend(folder) for folder in clean) and any(not is_ascend(folder) for folder in clean)


def test_every_kernel_matches_its_reference_under_the_interpreter():
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, str(SET / "interpret_check.py")], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300)
    results = [line for line in done.stdout.splitlines() if line.strip()]
    failures = [line for line in results if not line.endswith(": ok")]
    assert not failures, "\n".join(failures) + done.stderr[-2000:]
    assert len(results) == len(kernel_folders())
    assert done.returncode == 0
