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


ARMED_COMPILE = '''
import os, sys, tempfile
from pathlib import Path
from ladder.runner.contestants import private_folders
folder = Path(tempfile.mkdtemp(prefix="contestant-"))
os.environ.update(private_folders(Path(sys.argv[1]), folder))
from ladder.runner.backends.interpret import backend
from ladder.runner.contestant import Contestant
contestant = Contestant("solution", sandboxed=True, backend=backend)
request = {"solution": sys.argv[1], "problem": sys.argv[2]}
assert contestant.handle({"op": "load", "kind": "solution", **request, "exchange": str(folder)}) == {"ok": True}
import json
print(json.dumps({"reply": contestant.handle({"op": "precompile", **request, "target": "sm90"}),
                  "violations": contestant.sentinel.violations,
                  "entries": len(os.listdir(os.environ["TRITON_CACHE_DIR"]))}))
'''


def test_triton_compiles_for_an_armed_candidate_inside_its_own_cache_and_temporary_folder(tmp_path):
    """Triton's real compiler (ptxas, its temporary files, the cache's groups) under the sentinel,
    with the candidate's frames on the stack: none of its writes is refused."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    adversarial = root / "bench" / "sets" / "adversarial"
    script = tmp_path / "armed.py"
    script.write_text(ARMED_COMPILE)
    env = {**os.environ, "PYTHONPATH": str(root), "TRITON_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, str(script), str(adversarial / "legit_autotune_configs.py"),
                           str(adversarial / "add_problem.py")], env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["reply"] == {"kernels": 6} and result["violations"] == [] and result["entries"] > 0
