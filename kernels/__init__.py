"""The benchmark suite: KernelBench-style problems with their first-translation Triton solutions.

It is a package only so that `importlib.resources.files("kernels")` finds the suite in any install.
"""
