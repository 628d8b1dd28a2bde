"""Which pass a file implements: from the TableGen pass definitions to the C++ that runs them.

A pass is defined once in a `Passes.td` (`def TritonGPUCoalesce : Pass<"tritongpu-coalesce">`),
and its implementation says so in one of a few ways MLIR code uses:
`#define GEN_PASS_DEF_TRITONGPUCOALESCE`, `impl::TritonGPUCoalesceBase<...>`, or the definition
of the pass's `create...Pass()` constructor. Files that carry no such mark (pattern files, the
MMA lowering helpers) are resolved through calls, up to two steps: a function defined in exactly
one file and called from a pass's file belongs to that pass (LoadStoreOpToLLVM.cpp ->
convert-triton-gpu-to-llvm through populateLoadStoreOpToLLVMPatterns; WGMMA.cpp through
convertWGMMA). A file reached from more than two passes is shared utility and gets none, and a
backend's file is never attributed to another backend's pass through a name they happen to share. Python bindings
(`ADD_PASS_WRAPPER_0("add_coalesce", createTritonGPUCoalesce)`) give each pass the name that
appears in a backend's `compiler.py`.

Ops get the same treatment: the files holding rewrite or lowering patterns over an op
(`ConvertOpToLLVMPattern<triton::gpu::ConvertLayoutOp>`) are what a pasted `ttg.convert_layout`
leads to, beyond the op's TableGen definition.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ladder.indexer.backends import backend_of, runs
from ladder.indexer.chunking.tablegen import records
from ladder.indexer.sources import SourceFile

_CONSTRUCTOR = re.compile(r'let\s+constructor\s*=\s*"([^"]*)"')
_SUMMARY = re.compile(r'let\s+summary\s*=\s*"([^"]*)"')
_GEN_PASS_DEF = re.compile(r"\bGEN_PASS_DEF_(\w+)")
_BASE_USE = re.compile(r"\b(\w+)Base\s*<")
_CREATE_DEFINITION = re.compile(r"\b(create\w+)\s*\(([^;{}]*)\)\s*(?:const\s*)?\{")
# A free-function definition starting a line: `LogicalResult convertWGMMA(...) {`.
_FUNCTION_DEFINITION = re.compile(
    r"^[A-Za-z_][\w:<>,\s*&]*?\b([A-Za-z_]\w{5,})\s*\(([^;{}]*)\)\s*(?:const\s*)?\{", re.M)
_CALL = re.compile(r"\b([A-Za-z_]\w{5,})\s*\(")
_CALL_STEPS = 2
_MAX_PASSES_PER_HELPER = 2
_BINDING = re.compile(r'"(add_\w+)"((?:(?!m\.def\(|ADD_PASS).){0,600}?)\b(create\w+)', re.S)
_CPP = {"cpp", "c"}
# A pattern class over an op: OpRewritePattern<DescriptorLoadOp>, ConvertOpToLLVMPattern<ttg::LocalLoadOp>.
_OP_PATTERN = re.compile(r"\w*Pattern\s*<\s*(?:[\w:]+::)?(\w+Op)\s*[,>]")
# An op with patterns in more files than this is everywhere (arith.constant): no pointer.
_MAX_FILES_PER_OP = 4


@dataclass
class PassDef:
    name: str  # TableGen def name: TritonGPUCoalesce
    cli: str  # command-line name, as in MLIR dumps: tritongpu-coalesce
    summary: str
    tree: str
    td_path: str
    constructor: str = ""  # create function named by `let constructor`, if any
    python: list[str] = field(default_factory=list)  # add_coalesce
    files: list[str] = field(default_factory=list)  # implementing files, relative to the tree


@dataclass
class Registry:
    passes: dict[tuple[str, str], PassDef] = field(default_factory=dict)  # (tree, def name) -> pass
    file_passes: dict[str, list[str]] = field(default_factory=dict)  # "tree/path" -> [cli names]
    op_files: dict[tuple[str, str], list[str]] = field(default_factory=dict)  # (tree, TTG_XOp) -> paths

    def files_for_op(self, tree: str, def_name: str) -> list[str]:
        """Files with patterns over the op defined as `def_name` (TTG_ConvertLayoutOp -> ConvertLayoutOp)."""
        return self.op_files.get((tree, def_name), [])

    def by_name(self, tree: str, name: str) -> PassDef | None:
        return self.passes.get((tree, name))

    def find(self, word: str) -> PassDef | None:
        """A pass whose def name, CLI name or Python binding name matches `word` loosely."""
        wanted = _normal(word)
        for definition in self.passes.values():
            names = [definition.name, definition.cli] + [p.removeprefix("add_") for p in definition.python]
            if wanted in {_normal(n) for n in names}:
                return definition
        return None


def _normal(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def _pass_defs(files: list[SourceFile]) -> dict[tuple[str, str], PassDef]:
    defs = {}
    for f in files:
        if f.language != "tablegen":
            continue
        lines = f.text.split("\n")
        for record in records(f.text):
            if not record.is_pass:
                continue
            body = "\n".join(lines[record.start:record.end + 1])
            constructor = _CONSTRUCTOR.search(body)
            summary = _SUMMARY.search(body)
            ctor = re.findall(r"(create\w+)", constructor.group(1)) if constructor else []
            defs[(f.tree, record.name)] = PassDef(
                record.name, record.mnemonic, summary.group(1) if summary else "", f.tree, f.path,
                ctor[-1] if ctor else "")
    return defs


def build_registry(files: list[SourceFile]) -> Registry:
    registry = Registry(_pass_defs(files))
    by_upper = {(tree, name.upper()): (tree, name) for tree, name in registry.passes}
    by_create: dict[tuple[str, str], tuple[str, str]] = {}
    for (tree, name), d in registry.passes.items():
        for create in (f"create{name}", f"create{name}Pass", d.constructor):
            if create:
                by_create[(tree, create)] = (tree, name)

    direct: dict[str, set[str]] = {}
    defined_in: dict[tuple[str, str], set[str]] = {}  # (tree, function) -> defining files
    cpp_files = [f for f in files if f.language in _CPP]
    for f in cpp_files:
        found: set[tuple[str, str]] = set()
        found.update(by_upper[(f.tree, m)] for m in _GEN_PASS_DEF.findall(f.text) if (f.tree, m) in by_upper)
        found.update((f.tree, m) for m in _BASE_USE.findall(f.text) if (f.tree, m) in registry.passes)
        found.update(by_create[(f.tree, m)] for m, _ in _CREATE_DEFINITION.findall(f.text) if (f.tree, m) in by_create)
        if found:
            direct[f.key] = {registry.passes[k].cli for k in found}
            for k in found:
                if f.path not in registry.passes[k].files:
                    registry.passes[k].files.append(f.path)
        for function, _ in _FUNCTION_DEFINITION.findall(f.text):
            defined_in.setdefault((f.tree, function), set()).add(f.key)
        for binding, _, create in _BINDING.findall(f.text):
            k = by_create.get((f.tree, create))
            if k is not None and binding not in registry.passes[k].python:
                registry.passes[k].python.append(binding)

    resolved = _through_calls(cpp_files, direct, defined_in)
    for key, clis in resolved.items():
        registry.file_passes[key] = sorted(clis)
    registry.op_files = _op_files(files, cpp_files)
    return registry


def _op_files(files: list[SourceFile], cpp_files: list[SourceFile]) -> dict[tuple[str, str], list[str]]:
    """(tree, op def name) -> files holding patterns over that op's C++ class."""
    by_class: dict[tuple[str, str], set[str]] = {}
    for f in cpp_files:
        for op in set(_OP_PATTERN.findall(f.text)):
            by_class.setdefault((f.tree, op), set()).add(f.path)
    result = {}
    for f in files:
        if f.language != "tablegen":
            continue
        for record in records(f.text):
            if record.base.endswith("Op") and record.mnemonic:
                # MLIR names the C++ class after the def, less its dialect prefix (TTG_).
                paths = by_class.get((f.tree, re.sub(r"^[A-Z0-9]+_", "", record.name)), set())
                if 0 < len(paths) <= _MAX_FILES_PER_OP:
                    result[(f.tree, record.name)] = sorted(paths)
    return result


def _through_calls(cpp_files: list[SourceFile], direct: dict[str, set[str]],
                   defined_in: dict[tuple[str, str], set[str]]) -> dict[str, set[str]]:
    """Extend file -> passes to the files whose functions a pass's files call."""
    unique = {key: next(iter(files)) for key, files in defined_in.items() if len(files) == 1}
    calls = {f.key: {(f.tree, name) for name in _CALL.findall(f.text)} for f in cpp_files}
    backend = {f.key: backend_of(f.path, f.language, "") for f in cpp_files}
    resolved = {key: set(clis) for key, clis in direct.items()}
    frontier = dict(resolved)
    for _ in range(_CALL_STEPS):
        reached: dict[str, set[str]] = {}
        for caller, clis in frontier.items():
            for function in calls.get(caller, ()):
                callee = unique.get(function)
                if (callee is not None and callee != caller and callee not in direct
                        and runs(backend[caller], backend[callee])):
                    reached.setdefault(callee, set()).update(clis)
        frontier = {}
        for callee, clis in reached.items():
            before = resolved.get(callee, set())
            if not clis <= before:
                resolved[callee] = before | clis
                frontier[callee] = resolved[callee]
    return {key: clis for key, clis in resolved.items()
            if key in direct or len(clis) <= _MAX_PASSES_PER_HELPER}
