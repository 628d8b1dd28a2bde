"""The kernel suite: 37 KernelBench operators, each a problem and its first Triton translation.

The suite lives in ``kernels/level<L>/<NN>_<name>/{problem.py,solution.py}`` (KernelBench numbering);
``solution.py`` is the first, untuned Triton translation of the operator. For each operator the
runner's evaluation (correctness on fresh inputs against a float64 reference, guards, interleaved
device timing) produces one record per case; the suite condenses them into one row per operator
(geometric means over its cases, as the paper we follow does) and a summary across operators
(geometric mean and median).

- ``operators``: finding the operators (``discover``) and their small test cases (``--quick``);
- ``rows``: runner records -> per-case rows -> one row per operator -> the summary;
- ``render``: the terminal table;
- ``run``: the loop over operators through the ordered ``STAGES`` and the JSON document.

The command (``ladder suite``) is in ``ladder.diagnoser.cli.suite``. Runs on the GPU machine with nothing
beyond torch, triton, click, pyyaml and numpy.
"""
