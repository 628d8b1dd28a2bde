"""Compiling a candidate on one machine for the GPU of another: in the sandbox, into the candidate's
private cache, and carried so that the judge's precompile there compiles nothing."""
from pathlib import Path

import pytest

from ladder.runner.prebuild import cache_folder, install, prebuild

ADD = Path(__file__).parent / "fixtures" / "add"


def files_in(folder: Path) -> dict[str, tuple[int, int]]:
    """Each file with its inode and modification time: a recompile rewrites (replaces) its entries."""
    return {str(path.relative_to(folder)): (path.stat().st_ino, path.stat().st_mtime_ns)
            for path in folder.rglob("*") if path.is_file()}


@pytest.mark.slow
def test_a_cache_built_elsewhere_leaves_the_judges_precompile_nothing_to_compile(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "cpu-node"))
    built = prebuild(ADD / "solution.py", ADD / "problem.py", "sm90")
    assert built.rejected is None and built.error is None and built.kernels == 2 and built.archive

    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "gpu-node"))
    assert install(ADD / "solution.py", built) > 0
    carried = files_in(cache_folder(ADD / "solution.py"))
    again = prebuild(ADD / "solution.py", ADD / "problem.py", "sm90")  # what the judge's precompile does
    assert again.kernels == 2 and files_in(cache_folder(ADD / "solution.py")) == carried


def test_a_cache_installs_only_for_the_source_it_was_built_from(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "cache"))
    other = tmp_path / "other.py"
    other.write_text((ADD / "solution.py").read_text() + "\n# changed\n")
    archive = {"digest": cache_folder(ADD / "solution.py").name, "archive": b"not even a tar"}
    assert install(other, archive) == 0


@pytest.mark.slow
def test_candidate_code_compiling_ahead_of_time_is_still_sandboxed(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "cache"))
    target = tmp_path / "escaped.txt"
    hostile = tmp_path / "hostile.py"
    hostile.write_text(f"open({str(target)!r}, 'w').write('out')\n" + (ADD / "solution.py").read_text())
    built = prebuild(hostile, ADD / "problem.py", "sm90")
    assert built.rejected and built.rejected["stage"] == "runtime" and not built.archive
    assert not target.exists()
