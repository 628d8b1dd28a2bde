"""What installing ladder puts on a machine: one import name, and a core that works without the extras.

The layout's folders have generic names (runner, indexer, kernels: the last a popular package of
its own), so the wheel installs them only as ladder.runner, ladder.indexer, ...; and a GPU machine
that installs the core alone (no index stack, no model client, no MCP SDK) still benches,
captures IR and diagnoses rungs 1-3, while a command that needs an extra says which one.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("runner", "diagnoser", "indexer", "kernels", "kb")

# Run as a child: every module of the extras refuses to import, as on a machine without them.
WITHOUT_EXTRAS = """
import importlib.abc, sys
from ladder.diagnoser.cli.errors import EXTRAS

class NotInstalled(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in EXTRAS:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, NotInstalled())
from ladder.diagnoser.cli import main
sys.argv = ["ladder", *sys.argv[1:]]
main()
"""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> zipfile.ZipFile:
    pytest.importorskip("setuptools", reason="building the wheel here needs setuptools")
    import shutil

    out, source = tmp_path_factory.mktemp("wheel"), tmp_path_factory.mktemp("source")
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build")
    for folder in FOLDERS:  # a copy: building in the checkout would leave build/ and egg-info there
        shutil.copytree(ROOT / folder, source / folder, ignore=ignore)
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy(ROOT / name, source / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", str(source),
                    "-w", str(out)], check=True, capture_output=True, timeout=300)
    (built,) = out.glob("ladder-*.whl")
    return zipfile.ZipFile(built)


@pytest.mark.slow
def test_the_wheel_installs_one_top_level_name(wheel):
    names = wheel.namelist()
    tops = {name.split("/")[0] for name in names}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"ladder"}
    top_level = next(n for n in names if n.endswith(".dist-info/top_level.txt"))
    assert wheel.read(top_level).decode().split() == ["ladder"]
    assert "ladder/__init__.py" not in names  # a namespace: a checkout's ladder.py stands for it


@pytest.mark.slow
def test_the_wheel_holds_every_file_of_the_packages_and_their_data(wheel):
    tracked = subprocess.run(["git", "ls-files", *FOLDERS], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.split()
    assert {f"ladder/{path}" for path in tracked} - set(wheel.namelist()) == set()


def _without_extras(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", WITHOUT_EXTRAS, *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, env={**os.environ, **(env or {})}, check=False)


@pytest.mark.slow
def test_the_core_alone_diagnoses_rungs_1_to_3():
    done = _without_extras("diagnose", "kernels/level1/19_relu/solution.py", "--rungs", "1-3", "--backend", "aot",
                           "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert report["reached"] == 3 and report["facts"]


def test_a_command_that_needs_an_extra_names_it(tmp_path):
    source = tmp_path / "source"
    source.mkdir()
    (source / "pass.cpp").write_text("// a pass\nint run() { return 0; }\n")
    done = _without_extras("index", "build", "--source", f"tiny={source}", "--json",
                           env={"LADDER_INDEX_DIR": str(tmp_path / "index")})
    assert done.returncode == 3, done.stderr[-2000:]
    assert "pip install 'ladder[index]'" in done.stderr
    assert json.loads(done.stdout)["kind"] == "MissingExtra"


def test_in_a_checkout_the_layout_folders_shadow_no_installed_package():
    """With the checkout on sys.path (python -m pytest, a script run from the root), a folder that is a
    regular package wins over an installed package of the same name: transformers imports the
    hub's `kernels` package, and found the suite instead. The suite is a namespace portion, which an
    installed package outranks."""
    import importlib.metadata
    import importlib.util

    installed = {name for name, dists in importlib.metadata.packages_distributions().items()
                 if any(dist != "ladder" for dist in dists)}
    code = ("import importlib.util, json, sys; "
            "print(json.dumps({n: (importlib.util.find_spec(n) or None) and importlib.util.find_spec(n).origin "
            "for n in sys.argv[1:]}))")
    names = [folder for folder in FOLDERS if folder in installed]
    found = json.loads(subprocess.run([sys.executable, "-c", code, *names], cwd=ROOT, capture_output=True,
                                      text=True, check=True, timeout=60).stdout) if names else {}
    assert {name: origin for name, origin in found.items() if origin and origin.startswith(str(ROOT) + os.sep)
            and ".venv" not in Path(origin).relative_to(ROOT).parts} == {}
    assert not (ROOT / "kernels" / "__init__.py").exists(), "kernels/ would shadow the hub's kernels package"
