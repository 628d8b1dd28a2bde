"""The index on disk: immutable builds behind an atomically swapped pointer, and a build lock.

    <index dir>/
      CURRENT              id of the build queries use (replaced with os.replace, never edited)
      build.lock           flock'ed by the one build allowed at a time
      models/              what an embedding model derives once (the ONNX export of the bundled one)
      builds/<id>/
        manifest.json      trees, files (content hash -> chunk ids), embedding spec, counts, and the
                           size and hash of every file below (`artifacts`)
        chunks.jsonl       every chunk: id, text, metadata (the source of truth for BM25)
        vectors.npy        unit-length dense vectors, float32, one row per line of chunks.jsonl
        bm25/              keyword index (bm25s over indexer.text.keyword_tokens, rows as in chunks.jsonl)

A build writes a new directory and only then points CURRENT at it, so a build that dies halfway
leaves the previous index untouched and fully usable; its half-written directory is removed by the
next build. `Build.verify` checks every artifact against the manifest, so that a truncated, edited
or half-copied index is reported as such (by `ladder index status` and `ladder index build`) rather
than answering from damaged files.
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from ladder.indexer.errors import BuildLocked, IndexCorrupt, IndexMissing

# Bump when what a build holds changes meaning (2: BM25 over keyword_tokens, rows as in chunks.jsonl;
# 3: vectors.npy instead of a chromadb collection, artifact hashes in the manifest).
FORMAT = 3
# The layout of a tree that holds compiler C++ (indexer.sources).
COMPILER_LAYOUT = "triton-source"
RECOVER = "rebuild it with `ladder index build --rebuild` (the trees it holds are kept)"


def default_index_dir() -> Path:
    return Path(os.environ.get("LADDER_INDEX_DIR") or Path.home() / ".cache" / "ladder" / "index").expanduser()


def _corrupt(where: Path, why: str) -> IndexCorrupt:
    return IndexCorrupt(f"index at {where} is unreadable ({why}); {RECOVER}")


def file_digest(path: Path) -> dict:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return {"bytes": path.stat().st_size, "sha256": digest.hexdigest()}


def artifacts(path: Path) -> dict[str, dict]:
    """Size and hash of every file a build directory holds, by path relative to it."""
    return {p.relative_to(path).as_posix(): file_digest(p) for p in sorted(path.rglob("*"))
            if p.is_file() and p.name != "manifest.json"}


@dataclass
class Build:
    """One complete, immutable build of the index."""

    id: str
    path: Path
    manifest: dict

    @property
    def vectors_path(self) -> Path:
        return self.path / "vectors.npy"

    @property
    def bm25_path(self) -> Path:
        return self.path / "bm25"

    @property
    def chunks_path(self) -> Path:
        return self.path / "chunks.jsonl"

    def records(self) -> Iterator[dict]:
        try:
            with self.chunks_path.open(encoding="utf-8") as lines:
                for line in lines:
                    yield json.loads(line)
        except (OSError, ValueError) as error:
            raise _corrupt(self.path, f"chunks.jsonl: {error}") from None

    def verify(self) -> None:
        """IndexCorrupt naming the first file that is missing, of another size or another content."""
        expected = self.manifest.get("artifacts") or {}
        if not expected:
            raise _corrupt(self.path, "the manifest lists no files")
        for name, want in expected.items():
            path = self.path / name
            if not path.is_file():
                raise _corrupt(self.path, f"{name} is missing: the index is partial")
            if path.stat().st_size != want["bytes"]:
                raise _corrupt(self.path, f"{name} has {path.stat().st_size} bytes, not {want['bytes']}: "
                                          "it was truncated or replaced")
            if file_digest(path)["sha256"] != want["sha256"]:
                raise _corrupt(self.path, f"{name} differs from what the build wrote")


class Store:
    def __init__(self, index_dir: str | os.PathLike | None = None):
        self.root = Path(index_dir).expanduser() if index_dir else default_index_dir()

    @property
    def builds(self) -> Path:
        return self.root / "builds"

    def current_id(self) -> str | None:
        try:
            return (self.root / "CURRENT").read_text().strip() or None
        except FileNotFoundError:
            return None

    def current(self) -> Build:
        """The build queries use; IndexMissing when none was built, IndexCorrupt when unreadable."""
        build_id = self.current_id()
        if build_id is None:
            raise IndexMissing(f"no index at {self.root}: build one with `ladder index build`")
        return self.open(build_id)

    def open(self, build_id: str) -> Build:
        path = self.builds / build_id
        try:
            manifest = json.loads((path / "manifest.json").read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise _corrupt(self.root, f"build {build_id} is missing") from None
        except (OSError, ValueError) as error:
            raise _corrupt(self.root, f"manifest: {error}") from None
        if isinstance(manifest, dict) and isinstance(manifest.get("format"), int) and manifest["format"] < FORMAT:
            raise IndexCorrupt(f"index at {self.root} was built by an older version of ladder (format "
                               f"{manifest['format']}, now {FORMAT}); rebuild it with `ladder index build --rebuild`")
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT or "files" not in manifest:
            raise _corrupt(self.root, "manifest of an unknown format")
        return Build(build_id, path, manifest)

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the build lock; BuildLocked at once if another build holds it."""
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / "build.lock", "a+") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                handle.seek(0)
                holder = handle.read().strip() or "another process"
                raise BuildLocked(f"another build of {self.root} is running ({holder}); wait for it to finish") from None
            handle.seek(0)
            handle.truncate()
            handle.write(f"pid {os.getpid()}")
            handle.flush()
            try:
                yield
            finally:
                handle.seek(0)
                handle.truncate()
                fcntl.flock(handle, fcntl.LOCK_UN)

    def has_compiler_source(self) -> bool:
        """Whether the published build holds a compiler source checkout (C++ passes and lowerings),
        not only Python, docs and the catalog."""
        try:
            trees = self.current().manifest["trees"].values()
        except (IndexMissing, IndexCorrupt):
            return False
        return any(tree.get("layout") == COMPILER_LAYOUT for tree in trees)

    @property
    def models(self) -> Path:
        return self.root / "models"

    def new_build(self) -> Path:
        """A fresh, empty build directory."""
        build_id = time.strftime("%Y%m%d-%H%M%S") + f"-{os.getpid()}-{time.monotonic_ns() % 10**6:06d}"
        path = self.builds / build_id
        path.mkdir(parents=True)
        return path

    def commit(self, path: Path, manifest: dict) -> Build:
        """Write the manifest, then point CURRENT at the build: the single step that publishes it."""
        manifest = {**manifest, "format": FORMAT, "build": path.name, "artifacts": artifacts(path)}
        _write_atomic(path / "manifest.json", json.dumps(manifest, indent=1, sort_keys=True))
        _write_atomic(self.root / "CURRENT", path.name + "\n")
        return Build(path.name, path, manifest)

    def remove_stale(self, keep: set[str]) -> None:
        """Delete builds other than `keep` (the current one and the one before it)."""
        if not self.builds.is_dir():
            return
        for path in self.builds.iterdir():
            if path.name not in keep:
                shutil.rmtree(path, ignore_errors=True)


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)
