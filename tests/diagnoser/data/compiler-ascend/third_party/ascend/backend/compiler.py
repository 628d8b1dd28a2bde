"""Fixture for ladder's tests: a stand-in for the Ascend backend's compiler driver (ttir ->
ttadapter -> npubin). Written for the tests, not taken from the compiler."""


def make_ttadapter(mod, metadata, options):
    """Run triton-adapter-opt: AutoBlockify, TritonToStructured, TritonToUnstructure, then
    TritonToLinalg, which turns masked loads into a fill of the NPU's unified buffer plus a copy."""
    return run_adapter_passes(mod, ["triton-to-structured", "triton-to-unstructure", "triton-to-linalg"])
