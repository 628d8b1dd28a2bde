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
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, ContextManager

from indexer import embedding
from indexer.chunking import chunk
from indexer.errors import IndexCorrupt, IndexerError, SourceError
from indexer.passes import Registry, build_registry
from indexer.records import identifier_words, make_record, to_node
from indexer.sources import SourceFile, Tree, backend_of, default_sources, open_tree, scan
from indexer.store import COLLECTION, Build, Store

# Bump when chunking or metadata changes meaning, so that every file is re-chunked once.
CHUNKER_VERSION = 1

# progress(label, total) -> a context manager whose value has .update(n)
Progress = Callable[[str, int], ContextManager]


class _Silent:
    def update(self, n: int) -> None:
        pass


@contextlib.contextmanager
def _no_progress(label: str, total: int):
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


def _trees(sources: list[str] | None, previous: Build | None) -> list[Tree]:
    if sources:
        specs = list(sources)
    elif previous is not None:
        specs = [f"{t['name']}={t['root']}" for t in previous.manifest["trees"].values()]
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
        # A pass note (kb/passes/coalesce.md) is about the pass it is named after.
        found = registry.find(Path(f.path).stem)
        return [found.cli] if found else []
    return registry.file_passes.get(f.key, [])


def _td_passes(f: SourceFile, registry: Registry) -> list[dict]:
    """What the pass documents of a .td file say beyond the file itself (implementations, bindings)."""
    if f.language != "tablegen":
        return []
    return [{"name": d.name, "cli": d.cli, "python": d.python, "files": d.files}
            for d in registry.passes.values() if d.tree == f.tree and d.td_path == f.path]


def _file_key(f: SourceFile, tree: Tree, registry: Registry) -> str:
    derived = [f.sha, f.language, tree.version, _file_passes(f, registry), _td_passes(f, registry), CHUNKER_VERSION]
    return hashlib.sha256(json.dumps(derived, sort_keys=True).encode()).hexdigest()


def _records(f: SourceFile, key: str, tree: Tree, registry: Registry) -> list[dict]:
    file_passes = ", ".join(_file_passes(f, registry))
    file_backend = backend_of(f.path, f.language, f.text)
    td_passes = {p["name"]: p for p in _td_passes(f, registry)}
    # Identical files (two empty __init__.py) share a key, never an id.
    file_id = hashlib.sha256(f"{f.key}\0{key}".encode()).hexdigest()[:20]
    records = []
    for index, piece in enumerate(chunk(f.text, f.language)):
        pass_name, related = file_passes, ""
        if piece.kind == "pass" and piece.symbol in td_passes:
            info = td_passes[piece.symbol]
            pass_name = info["cli"]
            related = "; ".join(info["python"] + info["files"])
        metadata = {
            "tree": f.tree, "path": f.path, "start": piece.start, "end": piece.end,
            "language": f.language, "symbol": piece.symbol, "kind": piece.kind, "pass": pass_name,
            "backend": piece.backend or file_backend, "version": tree.version, "related": related,
            "terms": identifier_words(" ".join([piece.text, piece.symbol, pass_name, related])),
        }
        records.append(make_record(f"{file_id}-{index}", piece.text, metadata))
    return records


def _open_collection(path: Path):
    import chromadb
    from chromadb.config import Settings

    client = chromadb.PersistentClient(path=str(path), settings=Settings(anonymized_telemetry=False))
    return client.get_or_create_collection(COLLECTION, metadata={"hnsw:space": "cosine"})


def build(sources: list[str] | None = None, index_dir: str | None = None, rebuild: bool = False,
          embed_spec: str | None = None, progress: Progress = _no_progress) -> Report:
    """Build or update the index; see the module docstring. Raises IndexerError subclasses."""
    started = time.monotonic()
    store = Store(index_dir)
    with store.lock():
        published = store.current_id()
        previous = None if rebuild or published is None else store.current()
        notes = []
        spec = embed_spec or (previous.manifest["embed"] if previous else embedding.spec_from_env())
        if previous is not None and (previous.manifest["embed"], previous.manifest.get("embed_max_tokens")) != (
                spec, embedding.MAX_TOKENS):
            notes.append("embedding model changed: re-embedding everything")
            previous = None
        trees = _trees(sources, previous)
        scanned = scan(trees)
        for tree in trees:
            if not any(f.tree == tree.name for f in scanned.files):
                raise SourceError(f"nothing to index under {tree.root} (no C++, Python, TableGen, Markdown or YAML files)")
        registry = build_registry(scanned.files)
        tree_of = {t.name: t for t in trees}
        keys = {f.key: _file_key(f, tree_of[f.tree], registry) for f in scanned.files}

        old_files = previous.manifest["files"] if previous else {}
        changed = [f for f in scanned.files if old_files.get(f.key, {}).get("key") != keys[f.key]]
        removed = [k for k in old_files if k not in keys]
        tree_info = {t.name: t.to_json() for t in trees}
        same_trees = previous is not None and all(
            previous.manifest["trees"].get(n, {}).get("version") == t["version"] for n, t in tree_info.items()
        ) and set(previous.manifest["trees"]) == set(tree_info)
        if previous is not None and not changed and not removed and same_trees:
            return Report(str(store.root), previous.id, True, previous.manifest["trees"], len(old_files),
                          previous.manifest["chunks"], 0, 0, 0, 0, previous.manifest.get("skipped", {}),
                          round(time.monotonic() - started, 2), notes)

        new_records: list[dict] = []
        with progress("chunking", len(changed)) as bar:
            for f in changed:
                new_records.extend(_records(f, keys[f.key], tree_of[f.tree], registry))
                bar.update(1)

        path = store.new_build(previous)
        try:
            stale_ids = [cid for k, entry in old_files.items() if entry.get("key") != keys.get(k)
                         for cid in entry["chunks"]]
            embedded, reused = _write_vectors(path, stale_ids, new_records, spec, progress)
            kept = {cid for k, entry in old_files.items() if k in keys and entry.get("key") == keys[k]
                    for cid in entry["chunks"]}
            all_records = [r for r in previous.records() if r["id"] in kept] if previous else []
            all_records.extend(new_records)
            _write_records(path, all_records)
            _write_keywords(path, all_records)
            files = {}
            for f in scanned.files:
                files[f.key] = {"key": keys[f.key], "chunks": []}
            for record in all_records:
                m = record["metadata"]
                files[f"{m['tree']}/{m['path']}"]["chunks"].append(record["id"])
            for name, info in tree_info.items():
                info["files"] = sum(1 for f in scanned.files if f.tree == name)
                info["chunks"] = sum(1 for r in all_records if r["metadata"]["tree"] == name)
                info["skipped"] = scanned.skipped.get(name, {})
            manifest = {
                "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "embed": spec,
                "embed_max_tokens": embedding.MAX_TOKENS, "chunker": CHUNKER_VERSION,
                "trees": tree_info, "files": files, "chunks": len(all_records),
                "passes": len(registry.passes), "skipped": scanned.skipped,
            }
            committed = store.commit(path, manifest)
        except BaseException:
            import shutil

            shutil.rmtree(path, ignore_errors=True)
            raise
        # Keep the build that was published before this one: a query may still be reading it.
        store.remove_stale({committed.id} | ({published} if published else set()))
        return Report(str(store.root), committed.id, False, tree_info, len(files), len(all_records),
                      len(changed), len(removed), embedded, reused, scanned.skipped,
                      round(time.monotonic() - started, 2), notes)


def _write_vectors(path: Path, stale_ids: list[str], records: list[dict], spec: str,
                   progress: Progress) -> tuple[int, int]:
    """Drop stale vectors from the copied collection, add the new ones; returns (embedded, reused)."""
    from llama_index.vector_stores.chroma import ChromaVectorStore

    reusable: dict[str, list[float]] = {}
    try:
        collection = _open_collection(path / "chroma")
        for start in range(0, len(stale_ids), 2000):
            old = collection.get(ids=stale_ids[start:start + 2000], include=["embeddings", "metadatas"])
            for metadata, vector in zip(old["metadatas"], old["embeddings"]):
                if metadata and metadata.get("embed_hash"):
                    reusable[metadata["embed_hash"]] = list(vector)
            collection.delete(ids=stale_ids[start:start + 2000])
    except Exception as error:  # chromadb raises many types for a damaged store
        raise IndexCorrupt(f"the vectors of the previous build are unreadable ({type(error).__name__}: {error}); "
                           "rebuild with `ladder index build --rebuild`") from None

    nodes = [to_node(r) for r in records]
    todo = [n for n in nodes if n.metadata["embed_hash"] not in reusable]
    for node in nodes:
        if node.metadata["embed_hash"] in reusable:
            node.embedding = reusable[node.metadata["embed_hash"]]
    if todo:
        from llama_index.core.schema import MetadataMode

        model = embedding.load(spec)
        # Similar lengths in a batch waste less padding.
        todo.sort(key=lambda n: len(n.text))
        batch = 64
        with progress("embedding", len(todo)) as bar:
            for start in range(0, len(todo), batch):
                group = todo[start:start + batch]
                vectors = model.get_text_embedding_batch([n.get_content(MetadataMode.EMBED) for n in group])
                for node, vector in zip(group, vectors):
                    node.embedding = vector
                bar.update(len(group))
    store = ChromaVectorStore(chroma_collection=collection)
    for start in range(0, len(nodes), 2000):
        store.add(nodes[start:start + 2000])
    return len(todo), len(nodes) - len(todo)


def _write_records(path: Path, records: list[dict]) -> None:
    with open(path / "chunks.jsonl", "w", encoding="utf-8") as out:
        for record in records:
            out.write(json.dumps(record, ensure_ascii=False) + "\n")


def _write_keywords(path: Path, records: list[dict]) -> None:
    from llama_index.retrievers.bm25 import BM25Retriever

    if not records:
        raise IndexerError("nothing was indexed: every file was skipped or empty")
    retriever = BM25Retriever.from_defaults(nodes=[to_node(r, keywords=True) for r in records])
    retriever.persist(str(path / "bm25"), show_progress=False)
