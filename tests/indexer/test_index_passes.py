"""Pass definitions from TableGen, and which file implements which pass."""
from __future__ import annotations

import hashlib

from .conftest import FILES

from ladder.indexer.chunking import LANGUAGES
from ladder.indexer.passes import build_registry
from ladder.indexer.sources import SourceFile


def source_files(files: dict[str, str], tree: str = "toy") -> list[SourceFile]:
    return [SourceFile(tree, path, LANGUAGES["." + path.rsplit(".", 1)[1]], text,
                       hashlib.sha256(text.encode()).hexdigest()) for path, text in files.items()]


def test_pass_definitions_are_read_from_the_td_file():
    registry = build_registry(source_files(FILES))
    coalesce = registry.by_name("toy", "ToyCoalesce")
    lowering = registry.by_name("toy", "ToyConvertToLLVM")
    assert (coalesce.cli, coalesce.summary, coalesce.td_path) == (
        "toy-coalesce", "coalesce global memory accesses", "include/Passes.td")
    # A comment between `Pass<` and the CLI name does not hide it.
    assert lowering.cli == "toy-convert-to-llvm"
    assert lowering.constructor == "createToyLLVMLoweringPass"


def test_gen_pass_def_and_base_class_resolve_the_implementing_file():
    registry = build_registry(source_files(FILES))
    assert registry.file_passes["toy/lib/Transforms/Coalesce.cpp"] == ["toy-coalesce"]
    assert registry.by_name("toy", "ToyCoalesce").files == ["lib/Transforms/Coalesce.cpp"]


def test_constructor_definition_resolves_the_implementing_file():
    registry = build_registry(source_files(FILES))
    assert registry.file_passes["toy/lib/Conversion/ToyToLLVM.cpp"] == ["toy-convert-to-llvm"]


def test_pattern_file_called_from_a_pass_belongs_to_that_pass():
    registry = build_registry(source_files(FILES))
    assert registry.file_passes["toy/lib/Conversion/LoadStoreOpToLLVM.cpp"] == ["toy-convert-to-llvm"]


def test_python_binding_names_attach_to_their_pass():
    registry = build_registry(source_files(FILES))
    assert registry.by_name("toy", "ToyCoalesce").python == ["add_coalesce"]
    assert registry.by_name("toy", "ToyConvertToLLVM").python == ["add_to_llvm"]
    assert registry.find("coalesce").cli == "toy-coalesce"
    assert registry.find("toy-convert-to-llvm").name == "ToyConvertToLLVM"


def test_a_helper_shared_by_many_passes_is_attributed_to_none():
    files = {"include/Passes.td": "\n".join(
        f'def P{i} : Pass<"p{i}", "mlir::ModuleOp"> {{\n  let summary = "p{i}";\n}}' for i in range(3))}
    for i in range(3):
        files[f"lib/P{i}.cpp"] = f"#define GEN_PASS_DEF_P{i}\nvoid run{i}() {{\n  sharedHelper();\n}}\n"
    files["lib/Shared.cpp"] = "void sharedHelper() {\n  return;\n}\n"
    registry = build_registry(source_files(files))
    assert registry.file_passes["toy/lib/P0.cpp"] == ["p0"]
    assert "toy/lib/Shared.cpp" not in registry.file_passes


def test_files_without_any_mark_have_no_pass():
    registry = build_registry(source_files(FILES))
    assert "toy/python/compiler.py" not in registry.file_passes
    assert "toy/docs/ascend_guide.md" not in registry.file_passes


def test_op_definitions_point_at_the_files_with_patterns_over_them():
    files = dict(FILES)
    files["include/Ops.td"] = 'def TOY_ConvertLayoutOp : TOY_Op<"convert_layout"> {\n  let summary = "convert";\n}\n'
    files["lib/Conversion/Layouts.cpp"] = (
        "struct ConvertLayoutOpConversion\n"
        "    : public ConvertOpToLLVMPattern<triton::gpu::ConvertLayoutOp> {};\n")
    registry = build_registry(source_files(files))
    assert registry.files_for_op("toy", "TOY_ConvertLayoutOp") == ["lib/Conversion/Layouts.cpp"]
    assert registry.files_for_op("toy", "TOY_Unknown") == []
