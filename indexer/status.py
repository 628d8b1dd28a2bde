"""`ladder index status`: what the published build holds, whether it is whole, and whether its trees moved on since."""
from __future__ import annotations

from pathlib import Path

from ladder.indexer.errors import SourceError
from ladder.indexer.sources import open_tree
from ladder.indexer.store import COMPILER_LAYOUT, Store


def status(index_dir: str | None = None) -> dict:
    """The published build's trees (version, commit and its date, counts), checked file by file:
    IndexCorrupt, saying how to recover, when any file of it is missing or damaged."""
    build = Store(index_dir).current()
    build.verify()
    manifest = build.manifest
    trees = {}
    for name, tree in manifest["trees"].items():
        info = dict(tree)
        try:
            now = open_tree(f"{name}={tree['root']}").version
            if now != tree["version"]:
                info["now"] = now
        except SourceError:
            info["now"] = "missing"
        trees[name] = info
    return {
        "index_dir": str(Path(build.path).parent.parent),
        "build": build.id,
        "created": manifest.get("created", ""),
        "embed": manifest["embed"],
        "chunks": manifest["chunks"],
        "files": len(manifest["files"]),
        "passes": manifest.get("passes", 0),
        "compiler_source": any(t.get("layout") == COMPILER_LAYOUT for t in manifest["trees"].values()),
        "trees": trees,
    }
