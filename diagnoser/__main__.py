"""`python -m ladder.diagnoser` runs the `ladder` command line (useful where the package is not installed)."""
from ladder.diagnoser.cli import main

main(prog_name="ladder")
