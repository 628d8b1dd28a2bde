"""The report templates are package data: found through the package (not a path into the source
tree), declared in pyproject.toml, and inside the wheel an install is made from."""
from __future__ import annotations

import fnmatch
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from ladder.diagnoser.report import templating

ROOT = Path(__file__).resolve().parents[3]
TEMPLATES = ROOT / "diagnoser" / "report" / "templates"


def _shipped() -> list[str]:
    return sorted(p.relative_to(ROOT / "diagnoser").as_posix() for p in TEMPLATES.iterdir() if p.is_file())


def test_the_templates_load_through_the_package():
    assert {"diagnose.html.j2", "diagnose.md.j2", "report.css"} <= set(templating.environment().list_templates())


def test_every_template_is_declared_package_data():
    tomllib = pytest.importorskip("tomllib")
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["diagnoser"]
    assert _shipped(), "the templates folder is empty"
    for name in _shipped():
        assert any(fnmatch.fnmatch(name, pattern) for pattern in patterns), f"{name} is not in package-data"


@pytest.mark.slow
def test_the_wheel_carries_the_templates(tmp_path):
    pytest.importorskip("setuptools")
    source = tmp_path / "src"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build")
    for name in ("runner", "diagnoser", "indexer", "kernels", "kb"):
        shutil.copytree(ROOT / name, source / name, ignore=ignore)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                    "-w", str(tmp_path / "dist"), str(source)], check=True, capture_output=True, timeout=300)
    wheel = next((tmp_path / "dist").glob("ladder-*.whl"))
    inside = set(zipfile.ZipFile(wheel).namelist())
    assert {f"diagnoser/{name}" for name in _shipped()} <= inside


def test_a_path_in_a_narrow_cell_wraps_between_folders_and_before_its_lines():
    path = templating.breakable_path("lib/Dialect/<Pipeliner>/AssignLatencies.cpp:213-253")
    assert str(path) == "lib/<wbr>Dialect/<wbr>&lt;Pipeliner&gt;/<wbr>AssignLatencies.cpp<wbr>:213-253"
