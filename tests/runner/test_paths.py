"""The folder a child process imports ladder from: the checkout, or site-packages once installed, and
never the package's own folder (whose runner/ and kernels/ would shadow packages of those names)."""
import importlib.util
import shutil
from pathlib import Path

from ladder.runner import paths

ROOT = Path(__file__).resolve().parents[2]


def _paths_module_at(folder: Path):
    spec = importlib.util.spec_from_file_location("paths_copy", folder / "runner" / "paths.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_in_a_checkout_children_import_from_the_checkout():
    assert paths.import_root() == ROOT
    assert paths.child_pythonpath("/elsewhere").split(":") == [str(ROOT), "/elsewhere"]


def test_installed_children_import_from_site_packages_not_from_the_package(tmp_path):
    package = tmp_path / "site-packages" / "ladder"
    (package / "runner").mkdir(parents=True)
    shutil.copy(ROOT / "runner" / "paths.py", package / "runner" / "paths.py")
    assert _paths_module_at(package).import_root() == tmp_path / "site-packages"
