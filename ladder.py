"""The `ladder` package in a source checkout: its folders (runner, indexer, diagnoser, kernels, kb) are
its subpackages, so `import ladder.runner` works from the checkout root as it does once installed.

Installed, `ladder` is a namespace holding exactly those subpackages (pyproject.toml maps each folder
under it), so ladder adds one top-level import name and shadows no other package; in a checkout,
this module stands for that namespace by giving itself the checkout as its package path.
"""
import os

__path__ = [os.path.dirname(os.path.abspath(__file__))]

if __name__ == "__main__":  # python -m ladder: the command line
    from ladder.diagnoser.cli import main

    main(prog_name="ladder")
