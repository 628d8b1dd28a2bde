"""Errors a user can act on. The CLI prints their message on one line, without a traceback."""
from __future__ import annotations


class IndexerError(Exception):
    """Base class: the message says what went wrong and what to do."""


class SourceError(IndexerError):
    """A --source path is missing, unreadable, or yields nothing to index."""


class IndexMissing(IndexerError):
    """No index has been built at this location yet."""


class IndexCorrupt(IndexerError):
    """The index on disk cannot be read; the fix is a full rebuild."""


class BuildLocked(IndexerError):
    """Another build holds the lock on this index."""


class EmbeddingError(IndexerError):
    """The embedding model cannot be loaded or reached."""
