"""Everything that touches a device: loading problems, inputs, correctness, timing, capture, isolation.

Importable with only torch and triton installed (it runs on GPU machines that have nothing else).

Public entry points:

- ``ladder.runner.problem``: ``load_problem`` / ``load_solution`` (KernelBench files plus ``get_cases``);
- ``ladder.runner.bench``: ``bench_pair(solution, problem, baseline=None, backend=None, ...)`` and
  ``bench(problem, {name: path}, ...)``: correctness gate and interleaved timing, each evaluation in
  a worker subprocess with a timeout (what ``ladder bench`` prints);
- ``ladder.runner.backends``: ``select_backend`` (cuda > npu > interpret) and the backend table;
- ``ladder.runner.roofline``: device ceilings (defaults, measured per-device cache) and roofline position;
- ``ladder.runner.static_check``: the named static rules (``python -m ladder.runner.static_check`` lists them).
"""
