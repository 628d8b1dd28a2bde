"""The evaluation sets under bench/sets/triage (heldout, blind2, blind3): where they are, what they hold."""
from __future__ import annotations

import re
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
SETS_DIR = REPO / "bench" / "sets" / "triage"
SETS = ("heldout", "blind2", "blind3")
# Catalog ids added after the blind sets were frozen. A blind set gains no kernels for them (its
# kernels were written without reading the detectors; one written after would not be blind), so
# such an id is measured on the labeled set until the next blind set covers it.
IDS_AFTER_FREEZE = frozenset({"nv.tile-misfit", "nv.sfu-bound-loop", "nv.short-k-loop"})


def folder(name: str) -> Path:
    return SETS_DIR / name


def labels(name: str) -> dict[str, list[str]]:
    return yaml.safe_load((folder(name) / "labels.yaml").read_text())


def kernel_folders(name: str) -> list[str]:
    return sorted(path.name for path in folder(name).iterdir() if (path / "solution.py").is_file())


def is_ascend(name: str, kernel: str) -> bool:
    """An Ascend solution imports torch_npu (at the top, or guarded inside a try)."""
    text = (folder(name) / kernel / "solution.py").read_text()
    return re.search(r"^\s*import torch_npu\b", text, re.M) is not None
