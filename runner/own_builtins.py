"""A private copy of the builtins, for the runner's modules that run in a contestant's process.

Every module looks its builtins up (``getattr``, ``isinstance``, ``len``...) in one dict shared by
the whole process, and candidate code can reach it (``__builtins__["getattr"] = ...``): a forward
that replaced ``getattr`` for its own duration and put it back before returning would decide what
the recorders think an operator is called, or what the audit hook thinks it is doing, and leave
nothing for a later check to see. A function looks its builtins up in the dict its module's
``__builtins__`` named when it was defined, so a runner module that starts with

    from ladder.runner.own_builtins import BUILTINS as __builtins__  # noqa: F401

has functions that read this copy, made when the runner is imported (before any candidate code)
and reachable from no candidate code.

It stays a dict: CPython reads a module's ``__builtins__`` as one (``import`` inside a function fails
on a read-only mapping), so the copy is snapshotted when the sentinel arms instead, each name by the
identity of its value (``ladder.runner.snapshots.libraries``), and a change in place is named.
"""
import builtins

BUILTINS = dict(vars(builtins))
