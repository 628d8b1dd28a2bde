"""Building the index: scan -> resolve passes -> plan -> chunk -> embed -> write -> commit.

Incremental by content: every file gets a key (its bytes' hash plus everything derived from other
files that lands in its chunks: the passes it implements, its tree's version). Files whose key is
unchanged keep their chunks and vectors; the others are re-chunked, and only chunks whose embedded
text changed are re-embedded (a new compiler version re-labels chunks without re-embedding them).
Deleted files lose their chunks. Everything is written into a new build directory and published
by `Store.commit`, under the build lock.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, ContextManager

import numpy as np

from ladder.indexer import embedding, text
from ladder.indexer.backends import backend_of
from ladder.indexer.chunking import chunk
from ladder.indexer.errors import IndexCorrupt, IndexerError, SourceError
from ladder.indexer.passes import Registry, build_registry
from ladder.indexer.records import make_record
from ladder.indexer.sources import SourceFile, Tree, default_sources, open_tree, scan
from ladder.indexer.store import Build, Store
from ladder.indexer.text import dense_text, keyword_text, keyword_tokens

# Bump when chunking or metadata changes meaning, so that every file is re-chunked once.
CHUNKER_VERSION = 5
EMBED_BATCH = 64

# progress(label, total) -> a context manager whose value has .update(n)
Progress = Callable[[str, int], ContextManager]


class _Silent:
    def update(self, n: int) -> None:
        pass


@contextlib.contextmanager
def no_progress(label: str, total: int):
    yield _Silent()


@dataclass
class Report:
    index_dir: str
    build: str
    up_to_date: bool
    trees: dict
    files: int
    chunks: int
    changed_files: int
    removed_files: int
    embedded_chunks: int
    reused_vectors: int
    skipped: dict
    seconds: float
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return self.__dict__.copy()


def _trees(sources: list[str] | None, indexed: Build | None) -> list[Tree]:
    """The trees to index: those named, else those the published index holds, else the defaults."""
    if sources:
        specs = list(sources)
    elif indexed is not None:
        specs = [f"{t['name']}={t['root']}" for t in indexed.manifest["trees"].values()]
    else:
        specs = default_sources()
    trees = [open_tree(spec) for spec in specs]
    names = [t.name for t in trees]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise SourceError(f"two sources are named {duplicates[0]!r}: name them with NAME=PATH")
    return trees


def _file_passes(f: SourceFile, registry: Registry) -> list[str]:
    if f.language == "markdown" and "passes" in Path(f.path).parts[:-1]:
        # A pass note (kb/passes/tritongpu-coalesce.md) is about the pass it is named after; its
        # title starts with that name even when the pass's own tree is not indexed.
        stem = Path(f.path).stem
        found = registry.find(stem)
        if found:
            return [found.cli]
        title = next((line.lstrip("# ").strip() for line in f.text.split("\n") if line.startswith("#")), "")
        return [stem] if title.startswith(stem) else []
    return registry.file_passes.get(f.key, [])


def _td_passes(f: SourceFile, registry: Registry) -> list[dict]:
    """What the pass documents of a .td file say beyond the file itself (implementations, bindings)."""
    if f.language != "tablegen":
        return []
    return [{"name": d.name, "cli": d.cli, "python": d.python, "files": d.files}
            for d in registry.passes.values() if d.tree == f.tree and d.td_path == f.path]


def _td_ops(f: SourceFile, registry: Registry) -> dict[str, list[str]]:
    """Op def name -> the files with patterns over it, for the ops a .td file defines."""
    if f.language != "tablegen":
        return {}
    return {name: paths for (tree, name), paths in registry.op_files.items()
            if tree == f.tree and f"def {name}" in f.text}


def _file_key(f: SourceFile, tree: Tree, registry: Registry) -> str:
    derived = [f.sha, f.language, tree.version, _file_passes(f, registry), _td_passes(f, registry),
               _td_ops(f, registry), CHUNKER_VERSION]
    return hashlib.sha256(json.dumps(derived, sort_keys=True).encode()).hexdigest()


@dataclass
class Plan:
    """What a build has to do: the files now in the trees, and how they differ from the last build."""

    trees: list[Tree]
    files: list[SourceFile]
    skipped: dict
    registry: Registry
    keys: dict[str, str]  # "tree/path" -> key of its content and derived metadata
    changed: list[SourceFile]  # new or different: to chunk
    removed: list[str]  # "tree/path" of files gone since the last build
    kept_ids: set[str]  # chunk ids of the last build to keep
    tree_info: dict

    def nothing_to_do(self, previous: Build | None) -> bool:
        if previous is None or self.changed or self.removed or previous.manifest.get("keywords") != text.KEYWORD_VERSION:
            return False
        before = previous.manifest["trees"]
        return set(before) == set(self.tree_info) and all(
            before[name].get("version") == info["version"] for name, info in self.tree_info.items())


def _plan(sources: list[str] | None, indexed: Build | None, previous: Build | None) -> Plan:
    """What to do to index `sources` (or the trees of `indexed`), reusing what `previous` holds."""
    trees = _trees(sources, indexed)
    scanned = scan(trees)
    for tree in trees:
        if not any(f.tree == tree.name for f in scanned.files):
            raise SourceError(f"nothing to index under {tree.root} (no C++, Python, TableGen, Markdown or YAML files)")
    registry = build_registry(scanned.files)
    tree_of = {t.name: t for t in trees}
    keys = {f.key: _file_key(f, tree_of[f.tree], registry) for f in scanned.files}
    old = previous.manifest["files"] if previous else {}
    return Plan(
        trees=trees, files=scanned.files, skipped=scanned.skipped, registry=registry, keys=keys,
        changed=[f for f in scanned.files if old.get(f.key, {}).get("key") != keys[f.key]],
        removed=[k for k in old if k not in keys],
        kept_ids={cid for k, entry in old.items() if entry.get("key") == keys.get(k) for cid in entry["chunks"]},
        tree_info={t.name: t.to_json() for t in trees},
    )


def _summaries(registry: Registry, tree: str) -> dict[str, str]:
    """Pass CLI name -> its one-line summary, this tree's definitions first (pass notes name passes of other trees)."""
    ordered = sorted(registry.passes.values(), key=lambda d: d.tree != tree)
    summaries: dict[str, str] = {}
    for definition in ordered:
        summaries.setdefault(definition.cli, definition.summary)
    return summaries


def _records(f: SourceFile, key: str, tree: Tree, registry: Registry) -> list[dict]:
    file_passes = ", ".join(_file_passes(f, registry))
    summaries = _summaries(registry, f.tree)
    file_backend = backend_of(f.path, f.language, f.text)
    td_passes = {p["name"]: p for p in _td_passes(f, registry)}
    td_ops = _td_ops(f, registry)
    # Identical files (two empty __init__.py) share a key, never an id.
    file_id = hashlib.sha256(f"{f.key}\0{key}".encode()).hexdigest()[:20]
    records = []
    for index, piece in enumerate(chunk(f.text, f.language)):
        pass_name, related = file_passes, piece.related
        if piece.kind == "pass" and piece.symbol in td_passes:
            info = td_passes[piece.symbol]
            pass_name = info["cli"]
            related = "; ".join(info["python"] + info["files"])
        elif piece.kind == "op":
            related = "; ".join(td_ops.get(piece.symbol.split(" ")[0], []))
        metadata = {
            "tree": f.tree, "path": f.path, "start": piece.start, "end": piece.end,
            "language": f.language, "symbol": piece.symbol, "kind": piece.kind, "pass": pass_name,
            "summary": summaries.get(pass_name.split(", ")[0], ""),
            "backend": piece.backend or file_backend, "version": tree.version, "related": related,
        }
        records.append(make_record(f"{file_id}-{index}", piece.text, metadata))
    return records


def _chunk(plan: Plan, progress: Progress) -> list[dict]:
    tree_of = {t.name: t for t in plan.trees}
    records: list[dict] = []
    with progress("chunking", len(plan.changed)) as bar:
        for f in plan.changed:
            records.extend(_records(f, plan.keys[f.key], tree_of[f.tree], plan.registry))
            bar.update(1)
    return records


def _manifest(plan: Plan, records: list[dict], spec: str) -> dict:
    files = {f.key: {"key": plan.keys[f.key], "chunks": []} for f in plan.files}
    for record in records:
        files[f"{record['metadata']['tree']}/{record['metadata']['path']}"]["chunks"].append(record["id"])
    trees = {}
    for name, info in plan.tree_info.items():
        trees[name] = {**info, "files": sum(1 for f in plan.files if f.tree == name),
                       "chunks": sum(1 for r in records if r["metadata"]["tree"] == name),
                       "skipped": plan.skipped.get(name, {})}
    return {
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "embed": spec, "embed_max_tokens": embedding.MAX_TOKENS,
        "chunker": CHUNKER_VERSION, "keywords": text.KEYWORD_VERSION, "trees": trees, "files": files, "chunks": len(records),
        "passes": len(plan.registry.passes), "skipped": plan.skipped,
    }


def _write(store: Store, previous: Build | None, plan: Plan, new_records: list[dict], spec: str,
           progress: Progress) -> tuple[Build, int, int]:
    """Write a complete new build beside the published one and publish it; (build, embedded, reused)."""
    path = store.new_build()
    try:
        records = [r for r in previous.records() if r["id"] in plan.kept_ids] if previous else []
        records.extend(new_records)
        vectors, embedded = _vectors(store, previous, records, spec, progress)
        np.save(path / "vectors.npy", vectors)
        _write_records(path, records)
        _write_keywords(path, records)
        return store.commit(path, _manifest(plan, records, spec)), embedded, len(records) - embedded
    except BaseException:
        shutil.rmtree(path, ignore_errors=True)
        raise


def _published(store: Store, sources: list[str] | None, rebuild: bool) -> Build | None:
    """The published build, checked file by file; None when there is none.

    A damaged one stops the build with how to recover, unless `rebuild` says to start over: then
    its trees are still read from its manifest when that is readable (or named by `sources`)."""
    if store.current_id() is None:
        return None
    try:
        published = store.current()
    except IndexCorrupt as error:
        if rebuild and sources:
            return None
        if rebuild:
            raise IndexCorrupt(f"{error}; its manifest is unreadable, so name the trees to index: "
                               "`ladder index build --rebuild --source NAME=PATH ...`") from None
        raise
    try:
        published.verify()
    except IndexCorrupt:
        if not rebuild:
            raise
    return published


def build(sources: list[str] | None = None, index_dir: str | None = None, rebuild: bool = False,
          embed_spec: str | None = None, progress: Progress = no_progress) -> Report:
    """Build or update the index; see the module docstring. Raises IndexerError subclasses."""
    started = time.monotonic()
    store = Store(index_dir)
    with store.lock():
        published = store.current_id()
        indexed = _published(store, sources, rebuild)
        previous = None if rebuild else indexed
        notes = []
        spec = embed_spec or (indexed.manifest["embed"] if indexed else embedding.spec_from_env())
        if previous is not None and (previous.manifest["embed"], previous.manifest.get("embed_max_tokens")) != (
                spec, embedding.MAX_TOKENS):
            notes.append("embedding model changed: re-embedding everything")
            previous = None
        plan = _plan(sources, indexed, previous)
        if plan.nothing_to_do(previous):
            manifest = previous.manifest
            return Report(str(store.root), previous.id, True, manifest["trees"], len(manifest["files"]),
                          manifest["chunks"], 0, 0, 0, 0, manifest.get("skipped", {}),
                          round(time.monotonic() - started, 2), notes)
        committed, embedded, reused = _write(store, previous, plan, _chunk(plan, progress), spec, progress)
        # Keep the build that was published before this one: a query may still be reading it.
        store.remove_stale({committed.id} | ({published} if published else set()))
        manifest = committed.manifest
        return Report(str(store.root), committed.id, False, manifest["trees"], len(manifest["files"]),
                      manifest["chunks"], len(plan.changed), len(plan.removed), embedded, reused, plan.skipped,
                      round(time.monotonic() - started, 2), notes)


def _vectors(store: Store, previous: Build | None, records: list[dict], spec: str, progress: Progress) -> tuple[np.ndarray, int]:
    """One unit vector per record, in order; reused from the previous build for every chunk whose
    embedded text is unchanged (same `embed_hash`), embedded otherwise. Returns (vectors, embedded)."""
    reusable: dict[str, np.ndarray] = {}
    if previous is not None:
        try:
            old = np.load(previous.vectors_path)
            for row, record in enumerate(previous.records()):
                reusable[record["metadata"]["embed_hash"]] = old[row]
        except (OSError, ValueError, IndexError, KeyError) as error:
            raise IndexCorrupt(f"the vectors of the previous build are unreadable ({type(error).__name__}: {error}); "
                               "rebuild with `ladder index build --rebuild`") from None
    todo = [row for row, r in enumerate(records) if r["metadata"]["embed_hash"] not in reusable]
    vectors: list[np.ndarray | None] = [reusable.get(r["metadata"]["embed_hash"]) for r in records]
    if todo:
        model = embedding.load(spec, store.models)
        texts = {row: dense_text(records[row]["metadata"], records[row]["text"]) for row in todo}
        # Similar lengths in a batch waste less padding.
        todo.sort(key=lambda row: len(texts[row]))
        with progress("embedding", len(todo)) as bar:
            for start in range(0, len(todo), EMBED_BATCH):
                group = todo[start:start + EMBED_BATCH]
                for row, vector in zip(group, model.texts([texts[row] for row in group])):
                    vectors[row] = vector
                bar.update(len(group))
    if not records:
        return np.zeros((0, 0), dtype=np.float32), 0
    return np.vstack(vectors).astype(np.float32), len(todo)


def _write_records(path: Path, records: list[dict]) -> None:
    with open(path / "chunks.jsonl", "w", encoding="utf-8") as out:
        for record in records:
            out.write(json.dumps(record, ensure_ascii=False) + "\n")


def _write_keywords(path: Path, records: list[dict]) -> None:
    """The BM25 index over `keyword_tokens`, its rows in the order of chunks.jsonl."""
    import bm25s

    if not records:
        raise IndexerError("nothing was indexed: every file was skipped or empty")
    keywords = bm25s.BM25()
    keywords.index([keyword_tokens(keyword_text(r["metadata"], r["text"])) for r in records], show_progress=False)
    keywords.save(str(path / "bm25"))
