"""Which files of a source tree are indexed, how a tree is named and versioned, and reading them.

A *tree* is one root given to `ladder index build --source [NAME=]PATH`. Its layout is recognised:
a Triton source checkout (upstream or the Triton-Ascend fork), an installed `triton` package, or
anything else (the catalog `kb/`, a notes folder), for which every supported file is taken. Paths
in the index are relative to the tree root, so results read the same on every machine.
"""
from __future__ import annotations

import fnmatch
import hashlib
import importlib.metadata
import importlib.resources
import importlib.util
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from ladder.indexer.chunking import LANGUAGES
from ladder.indexer.errors import SourceError

# Files bigger than this are generated tables or vendored blobs, not code a person reads.
MAX_FILE_BYTES = 512 * 1024

# What to index in a Triton source checkout: what explains what the compiler did to a kernel. The
# compiler (C++ passes and lowerings, TableGen definitions, the NVIDIA and Ascend backends and their
# Python drivers), the Python front end that builds the IR (language/semantic.py and core.py, the
# code generator, the Ascend language extensions), the runtime (the JIT's specialization, the
# autotuner, the kernel cache, the launcher build, the interpreter), the benchmarking helpers, the pass
# bindings, and the docs in every language they are written in (the Ascend API reference exists only
# in Chinese). Tests, other backends, tutorials, meeting notes and build scripts are left out: they
# answer other questions than "what did the compiler do to my kernel".
_COMPILER_PY = ["compiler", "backends", "language", "runtime", "knobs.py", "testing.py"]
_TRITON_SOURCE = (
    ["lib", "include", "third_party/nvidia/backend", "third_party/nvidia/hopper", "third_party/nvidia/include",
     "third_party/nvidia/lib", "third_party/nvidia/triton_nvidia.cc", "third_party/ascend/backend",
     "third_party/ascend/include", "third_party/ascend/lib", "third_party/ascend/language",
     "third_party/ascend/triton_ascend.cc", "third_party/ascend/ascend_ir.cc", "python/src/passes.cc", "docs"]
    + [f"python/triton/{p}" for p in _COMPILER_PY],
    ["*/test/*", "*/tests/*", "*/unittest/*", "third_party/nvidia/backend/include/*", "docs/meetups/*",
     "docs/*/conf.py", "docs/*/_static/*", "*/requirement.txt"],
)
# What to index in an installed `triton` package: the same Python compiler.
_TRITON_PACKAGE = (
    _COMPILER_PY,
    ["backends/*/include/*", "backends/*/lib/*", "backends/amd/*", "*/__pycache__/*"],
)
_ANY = ([""], [])
# Directories never worth walking into.
_SKIP_DIRS = {".git", "__pycache__", "node_modules", "build", "dist", ".venv", "venv", ".tox",
              ".mypy_cache", ".pytest_cache"}


@dataclass
class Tree:
    name: str
    root: Path
    layout: str  # triton-source | triton-package | files
    version: str
    commit: str = ""  # the git commit of a checkout (full hash), when it is one
    date: str = ""  # that commit's date (ISO 8601)

    def to_json(self) -> dict:
        return {"name": self.name, "root": str(self.root), "layout": self.layout, "version": self.version,
                "commit": self.commit, "date": self.date}


@dataclass
class SourceFile:
    tree: str
    path: str  # relative to the tree root, with forward slashes
    language: str
    text: str
    sha: str  # of the bytes on disk

    @property
    def key(self) -> str:
        return f"{self.tree}/{self.path}"


@dataclass
class Scan:
    files: list[SourceFile] = field(default_factory=list)
    # tree name -> reason -> count of files skipped (binary, huge, non_utf8)
    skipped: dict[str, dict[str, int]] = field(default_factory=dict)


def _layout(root: Path) -> str:
    if (root / "include" / "triton").is_dir() and (root / "lib").is_dir():
        return "triton-source"
    if (root / "compiler" / "compiler.py").is_file() and (root / "backends").is_dir():
        return "triton-package"
    return "files"


def _git(root: Path, *args: str) -> str:
    """What a git command prints in the work tree holding `root` ("" when it fails)."""
    try:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


def _git_head(root: Path) -> tuple[str, str]:
    """(commit, commit date) of the git work tree holding `root`, when `root` is tracked there."""
    if _git(root, "rev-parse", "--is-inside-work-tree") != "true":
        return "", ""
    if subprocess.run(["git", "-C", str(root), "check-ignore", "-q", "."], capture_output=True).returncode == 0:
        return "", ""  # e.g. a virtualenv inside a repository
    head = _git(root, "log", "-1", "--format=%H %cI")
    return tuple(head.split(" ", 1)) if " " in head else ("", "")


def _version(root: Path, layout: str, commit: str) -> str:
    """Package version for an installed package; version file and/or git commit for a checkout."""
    if layout == "triton-package":
        try:
            return importlib.metadata.version(root.name)
        except importlib.metadata.PackageNotFoundError:
            pass
    parts = []
    version_file = root / "version.txt"
    if version_file.is_file():
        parts.append(version_file.read_text(errors="replace").strip())
    if commit:
        parts.append(f"git:{commit[:12]}")
    return "+".join(parts) or "unversioned"


def open_tree(spec: str) -> Tree:
    """A tree from `PATH` or `NAME=PATH`; a missing or unreadable path is an error."""
    name, path = spec.split("=", 1) if "=" in spec and not os.path.exists(spec) else ("", spec)
    root = Path(path).expanduser()
    if not root.is_dir():
        raise SourceError(f"source path does not exist or is not a directory: {path}")
    root = root.resolve()
    layout = _layout(root)
    commit, date = _git_head(root)
    return Tree(name or root.name, root, layout, _version(root, layout, commit), commit, date)


# Where a Triton source checkout is looked for when no --source names one: each folder here and its
# subfolders one level down. LADDER_COMPILER_SOURCES (NAME=PATH entries separated by the path
# separator) names checkouts explicitly and replaces the search.
CHECKOUT_PLACES = ("~/src", "~", "~/code", "/usr/local/src", "/opt", "/work/src")


def compiler_checkouts() -> list[str]:
    """`NAME=PATH` of the Triton source checkouts on this machine (C++ passes, lowerings, TableGen)."""
    named = os.environ.get("LADDER_COMPILER_SOURCES")
    if named is not None:
        return [entry for entry in named.split(os.pathsep) if entry]
    found: dict[Path, None] = {}
    for place in CHECKOUT_PLACES:
        parent = Path(place).expanduser()
        try:
            children = sorted(parent.iterdir()) if parent.is_dir() else []
        except OSError:
            continue
        for child in children:
            if child.name.lower().startswith("triton") and child.is_dir() and _layout(child) == "triton-source":
                found.setdefault(child.resolve())
    # The installed package is already called `triton`, the catalog `kb`.
    return [f"{path.name if path.name not in ('triton', 'kb') else path.name + '-source'}={path}" for path in found]


def default_sources() -> list[str]:
    """The catalog shipped with ladder, the installed triton package (works offline) and the
    Triton source checkouts found on this machine (`compiler_checkouts`)."""
    specs = [f"kb={importlib.resources.files('ladder.kb')}"]
    spec = importlib.util.find_spec("triton")
    if spec is not None and spec.submodule_search_locations:
        specs.append(f"triton={list(spec.submodule_search_locations)[0]}")
    return specs + compiler_checkouts()


def _selected(rel: str, excludes: list[str]) -> bool:
    return not any(fnmatch.fnmatch(rel, pattern) or fnmatch.fnmatch("/" + rel, pattern) for pattern in excludes)


def _candidates(tree: Tree) -> list[tuple[str, Path]]:
    includes, excludes = {"triton-source": _TRITON_SOURCE, "triton-package": _TRITON_PACKAGE}.get(tree.layout, _ANY)
    found: dict[str, Path] = {}
    for include in includes:
        start = tree.root / include
        if start.is_file():
            found[include] = start
            continue
        for dirpath, dirnames, filenames in os.walk(start):
            dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS and not d.startswith("."))
            for filename in filenames:
                full = Path(dirpath) / filename
                rel = full.relative_to(tree.root).as_posix()
                if full.suffix in LANGUAGES and _selected(rel, excludes) and not full.is_symlink():
                    found[rel] = full
    return sorted(found.items())


def _read(full: Path) -> tuple[str | None, str, str]:
    """(text, sha, reason): text is None when the file is skipped for `reason`."""
    try:
        if full.stat().st_size > MAX_FILE_BYTES:
            return None, "", "huge"
        data = full.read_bytes()
    except OSError:
        return None, "", "unreadable"
    if b"\0" in data[:8192]:
        return None, "", "binary"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None, "", "non_utf8"
    return text.replace("\r\n", "\n"), hashlib.sha256(data).hexdigest(), ""


def scan(trees: list[Tree]) -> Scan:
    """Every indexable file of every tree, read; skipped files counted by reason."""
    result = Scan()
    for tree in trees:
        skipped = result.skipped.setdefault(tree.name, {})
        for rel, full in _candidates(tree):
            text, sha, reason = _read(full)
            if text is None:
                skipped[reason] = skipped.get(reason, 0) + 1
                continue
            result.files.append(SourceFile(tree.name, rel, LANGUAGES[full.suffix], text, sha))
    return result
