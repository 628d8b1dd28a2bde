"""What a Triton checkout contributes to the index: the runtime and benchmarking code that explain
what happened to a kernel at run time, not only the compiler; never tests or tutorials."""
from ladder.indexer.sources import _candidates, open_tree

FILES = ["include/triton/Dialect.h", "lib/Pass.cpp", "python/triton/runtime/jit.py",
         "python/triton/runtime/cache.py", "python/triton/runtime/build.py", "python/triton/runtime/interpreter.py",
         "python/triton/testing.py", "python/triton/language/semantic.py", "python/tutorials/01-add.py",
         "python/triton/runtime/tests/test_cache.py", "python/test/unit/test_core.py"]


def test_a_checkout_indexes_the_runtime_and_benchmarking_code_but_not_tests_or_tutorials(tmp_path):
    for name in FILES:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("// code\n" if name.endswith((".cpp", ".h")) else "x = 1\n")
    tree = open_tree(str(tmp_path))
    assert tree.layout == "triton-source"
    chosen = {rel for rel, _ in _candidates(tree)}
    assert {"python/triton/runtime/cache.py", "python/triton/runtime/build.py", "python/triton/runtime/interpreter.py",
            "python/triton/runtime/jit.py", "python/triton/testing.py", "python/triton/language/semantic.py",
            "lib/Pass.cpp"} <= chosen
    assert not chosen & {"python/tutorials/01-add.py", "python/triton/runtime/tests/test_cache.py",
                         "python/test/unit/test_core.py"}
