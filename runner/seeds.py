"""Seeds a candidate cannot predict, that a failure can still be replayed from.

The caller draws one base seed (``draw``) and records it before anything runs, so a run that
dies still says which seed it had. Every input a check or a timed repetition uses comes from a
seed derived from the base by a cryptographic hash of where it is used (``derive``): knowing the
seeds of earlier draws says nothing about the next one, and the base itself never reaches the
process that runs candidate code. ``ladder bench --seed S`` replays every draw of a run.
"""
from __future__ import annotations

import hashlib
import secrets

from ladder.runner.own_builtins import BUILTINS as __builtins__  # noqa: F401  (see that module)


def draw() -> int:
    """A fresh base seed, 63 bits: candidate code sees derived seeds (``torch.initial_seed()``), and
    a 31-bit base could be recovered from one by trying every base through ``derive``."""
    return secrets.randbits(63)


def derive(base: int, *where: object) -> int:
    """The seed of one use (``derive(base, "check", case, draw)``), in [0, 2**31)."""
    text = ":".join(str(part) for part in (base, *where)).encode()
    return int.from_bytes(hashlib.sha256(text).digest()[:8], "big") % 2**31
