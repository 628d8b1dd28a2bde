"""`python -m diagnoser` runs the `ladder` command line (useful where the package is not installed)."""
from diagnoser.cli import main

main()
