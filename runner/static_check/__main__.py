"""``python -m ladder.runner.static_check`` lists the rules; with files, checks each (and the files beside it
that it imports) and exits 1 when any has an error."""
from __future__ import annotations

import sys

from ladder.runner.static_check import ERROR, check_solution, describe_rules


def main(argv: list[str]) -> int:
    if not argv:
        print(describe_rules())
        return 0
    status = 0
    for path in argv:
        for violation in check_solution(path):
            print(f"{path}:{violation.line}: {violation.severity}: {violation.message} [{violation.rule}]")
            status = max(status, violation.severity == ERROR)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
