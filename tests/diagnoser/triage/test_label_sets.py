"""Every evaluation set stays well formed: each kernel folder is labeled, each label names a folder,
and labels are distinct catalog ids of the kernel's own backend. The blind sets also justify every
label line, and every one of their kernels computes what its problem's reference computes (checked
under Triton's interpreter in one subprocess per set).

The sets' scores are reports (bench/triage/score_set.py SET), not tests; these checks keep a stray
folder, an unknown id or a wrongly prefixed label from silently skewing those numbers. What each set
promises beyond this is tested beside it (test_heldout_labels.py, test_blind2_labels.py, ...).
"""
from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from . import label_sets
from ladder.diagnoser.triage.catalog import load_catalog


@pytest.mark.parametrize("name", label_sets.SETS)
def test_every_kernel_folder_is_labeled_and_every_label_names_a_folder(name):
    assert sorted(label_sets.labels(name)) == label_sets.kernel_folders(name)


@pytest.mark.parametrize("name", label_sets.SETS)
def test_every_folder_holds_a_problem_and_a_solution(name):
    for kernel in label_sets.kernel_folders(name):
        assert (label_sets.folder(name) / kernel / "problem.py").is_file(), kernel


@pytest.mark.parametrize("name", label_sets.SETS)
def test_labels_are_lists_of_distinct_known_catalog_ids(name):
    known = set(load_catalog())
    for kernel, ids in label_sets.labels(name).items():
        assert isinstance(ids, list), kernel
        assert len(ids) == len(set(ids)), kernel
        assert set(ids) <= known, f"{kernel}: unknown ids {sorted(set(ids) - known)}"


@pytest.mark.parametrize("name", label_sets.SETS)
def test_ascend_kernels_carry_only_npu_ids_and_nvidia_kernels_only_nv_ids(name):
    for kernel, ids in label_sets.labels(name).items():
        prefix = "npu." if label_sets.is_ascend(name, kernel) else "nv."
        assert all(pattern.startswith(prefix) for pattern in ids), kernel


BLIND = ("blind2", "blind3")
INTERPRET_CHECK = label_sets.folder("blind2") / "interpret_check.py"


@pytest.mark.parametrize("name", BLIND)
def test_every_label_line_carries_a_justification(name):
    for line in (label_sets.folder(name) / "labels.yaml").read_text().splitlines():
        stripped = line.strip()
        is_label = stripped.startswith("- ") or re.match(r"^[\w.-]+: \[\]", stripped)
        if is_label:
            assert "#" in stripped and stripped.split("#", 1)[1].strip(), line


@pytest.mark.parametrize("name", BLIND)
def test_every_kernel_matches_its_reference_under_the_interpreter(name):
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(label_sets.REPO)}
    kernels = label_sets.kernel_folders(name)
    folders = [str(label_sets.folder(name) / kernel) for kernel in kernels]
    done = subprocess.run([sys.executable, str(INTERPRET_CHECK), *folders], cwd=label_sets.REPO, env=env,
                          capture_output=True, text=True, timeout=300)
    results = [line for line in done.stdout.splitlines() if line.strip()]
    failures = [line for line in results if not line.endswith(": ok")]
    assert not failures, "\n".join(failures) + done.stderr[-2000:]
    assert sorted(line.split(":", 1)[0] for line in results) == kernels
    assert done.returncode == 0
