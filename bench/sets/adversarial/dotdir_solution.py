"""Solution whose ModelNew lives in .impl/rt_dot_model.py (a dot-prefixed folder beside it, put on sys.path):
the static checker never reads it (`from rt_dot_model import` names no file beside the solution), and at
run time its frames are not the candidate's (Sentinel.is_candidate_file excludes folder + ".")."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / ".impl"))

from rt_dot_model import ModelNew  # noqa: E402,F401
