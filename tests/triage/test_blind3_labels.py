"""The third blind triage set (tests/triage/blind3) stays well formed and correct.

The set measures how pattern triage generalises, so its labels must name real catalog ids, match
each kernel's backend and carry their justification (in labels.yaml and NOTES.md), and every kernel
must compute what its problem's reference computes. The interpreter check is the second set's
script (tests/triage/blind2/interpret_check.py) pointed at this set's folders, in one subprocess.
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

SET = Path(__file__).resolve().parent / "blind3"
LABELS = SET / "labels.yaml"
NOTES = SET / "NOTES.md"
INTERPRET_CHECK = SET.parent / "blind2" / "interpret_check.py"
REPO = SET.parents[2]


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


def test_planted_kernels_carry_one_or_two_patterns(labels):
    assert all(len(ids) <= 2 for ids in labels.values()), {f: ids for f, ids in labels.items() if len(ids) > 2}


def test_every_label_line_carries_a_justification():
    for line in LABELS.read_text().splitlines():
        stripped = line.strip()
        is_label = stripped.startswith("- ") or re.match(r"^[\w.-]+: \[\]", stripped)
        if is_label:
            assert "#" in stripped and stripped.split("#", 1)[1].strip(), line


def test_notes_explain_every_kernel(labels):
    notes = NOTES.read_text()
    missing = [folder for folder in labels if f"`{folder}`" not in notes]
    assert not missing, missing


def test_the_set_covers_every_catalog_id_and_holds_clean_kernels_on_both_backends(labels):
    assert set().union(*labels.values()) == set(STABLE_IDS)
    nvidia = [folder for folder in labels if not is_ascend(folder)]
    ascend = [folder for folder in labels if is_ascend(folder)]
    assert len(nvidia) == 26 and len(ascend) == 10
    assert sum(not labels[folder] for folder in nvidia) >= 8
    assert sum(not labels[folder] for folder in ascend) >= 2


def test_solutions_name_no_pattern_or_hint_of_one():
    hints = re.compile(r"slow|naive|unfused|unoptimi[sz]ed|spill|scalar|strided|tiny|hardcod|contention|"
                       r"redundant|oversized|int64-index|tensor.core|pattern|\bbad\b|inefficient", re.I)
    for folder in kernel_folders():
        for name in ("problem.py", "solution.py"):
            found = hints.findall((SET / folder / name).read_text())
            assert not found, (folder, name, found)


def test_every_kernel_matches_its_reference_under_the_interpreter():
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(REPO)}
    folders = [str(SET / folder) for folder in kernel_folders()]
    done = subprocess.run([sys.executable, str(INTERPRET_CHECK), *folders], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300)
    results = [line for line in done.stdout.splitlines() if line.strip()]
    failures = [line for line in results if not line.endswith(": ok")]
    assert not failures, "\n".join(failures) + done.stderr[-2000:]
    assert sorted(line.split(":", 1)[0] for line in results) == kernel_folders()
    assert done.returncode == 0
