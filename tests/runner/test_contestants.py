"""Each candidate's contestant compiles into a kernel cache of its own, named by its source."""
from ladder.runner.contestants import private_folders


def test_a_solution_gets_a_kernel_cache_named_by_its_source_and_a_temporary_folder_of_its_own(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "cache"))
    best, same, other = (tmp_path / name for name in ("best.py", "same.py", "other.py"))
    best.write_text("x = 1\n")
    same.write_text("x = 1\n")
    other.write_text("x = 2\n")
    first = private_folders(best, tmp_path / "a")
    assert first["TRITON_CACHE_DIR"] == private_folders(same, tmp_path / "b")["TRITON_CACHE_DIR"]  # kept across rounds
    assert first["TRITON_CACHE_DIR"] != private_folders(other, tmp_path / "c")["TRITON_CACHE_DIR"]
    assert first["TRITON_CACHE_DIR"].startswith(str(tmp_path / "cache-contestants"))  # never the shared cache
    assert first["TMPDIR"] == str(tmp_path / "a" / "tmp")
