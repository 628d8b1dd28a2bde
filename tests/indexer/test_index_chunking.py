"""Chunk boundaries and line ranges, per language."""
from __future__ import annotations

import textwrap

from .conftest import CATALOG_YAML, COALESCE_CPP, COMPILER_PY, GUIDE_MD, PASSES_TD

from ladder.indexer.chunking import chunk
from ladder.indexer.chunking.base import MAX_CHARS


def assert_line_exact(text: str, chunks) -> None:
    lines = text.split("\n")
    for c in chunks:
        assert c.text == "\n".join(lines[c.start - 1:c.end]), (c.start, c.end)


def test_cpp_chunk_text_is_exactly_its_line_range():
    chunks = chunk(COALESCE_CPP, "cpp")
    assert chunks
    assert_line_exact(COALESCE_CPP, chunks)


def test_cpp_license_header_is_not_indexed():
    chunks = chunk(COALESCE_CPP, "cpp")
    assert all("Copyright" not in c.text for c in chunks)
    assert chunks[0].start == 3  # the first #include, right after the license line and a blank


def test_cpp_chunks_start_at_definition_boundaries_with_their_comment():
    source = "\n".join(
        f"// Explains f{i}.\nint f{i}(int x) {{\n" + "".join(f"  x += {j} * {i};\n" for j in range(40)) + "  return x;\n}\n"
        for i in range(4))
    chunks = chunk(source, "cpp")
    lines = source.split("\n")
    for c in chunks:
        assert lines[c.start - 1].startswith("// Explains f"), c.start
        assert lines[c.end - 1] == "}"
    assert [c.symbol for c in chunks][:2] == ["f0", "f1"] or all(c.symbol.startswith("f") for c in chunks)


def test_cpp_method_symbol_is_qualified_by_its_class():
    chunks = chunk(COALESCE_CPP, "cpp")
    assert any("CoalescePass" in c.symbol for c in chunks)


def test_big_function_is_split_into_chunks_that_keep_its_name():
    body = "".join(f"  total += compute({i}, total) * {i};\n" for i in range(400))
    source = f"int huge(int total) {{\n{body}  return total;\n}}\n"
    chunks = chunk(source, "cpp")
    assert len(chunks) > 1
    assert all(c.symbol == "huge" for c in chunks)
    assert all(len(c.text) <= MAX_CHARS for c in chunks)
    assert_line_exact(source, chunks)
    # Consecutive pieces cover the function without gaps or overlaps.
    assert [c.start for c in chunks[1:]] == [c.end + 1 for c in chunks[:-1]]


def test_python_methods_are_named_class_dot_method():
    chunks = chunk(COMPILER_PY, "python")
    assert_line_exact(COMPILER_PY, chunks)
    symbols = ", ".join(c.symbol for c in chunks)
    assert "ToyBackend.make_ttgir" in symbols or "ToyBackend" in symbols
    assert "num_stages_default" in symbols


def test_python_big_class_is_split_at_methods():
    methods = "".join(
        f"    def m{i}(self):\n" + "".join(f"        v{j} = {j} * {i}\n" for j in range(30)) + "        return 0\n\n"
        for i in range(6))
    source = f"class Big:\n{methods}"
    chunks = chunk(source, "python")
    assert len(chunks) > 1
    lines = source.split("\n")
    for c in chunks[1:]:
        assert lines[c.start - 1].strip().startswith("def m")
    assert all("Big.m" in c.symbol for c in chunks)


def test_markdown_chunks_by_section_with_heading_path():
    chunks = chunk(GUIDE_MD, "markdown")
    assert_line_exact(GUIDE_MD, chunks)
    symbols = " | ".join(c.symbol for c in chunks)
    assert "Ascend Tuning Guide > Unified buffer" in symbols
    # '#' inside a fenced code block is not a heading.
    assert "not a heading" not in symbols


def test_markdown_long_section_is_cut_between_paragraphs():
    paragraphs = "\n\n".join(f"Paragraph {i} " + "word " * 60 for i in range(20))
    source = f"# Guide\n\n## Long\n\n{paragraphs}\n"
    chunks = chunk(source, "markdown")
    assert len(chunks) > 1
    lines = source.split("\n")
    for c in chunks:
        assert lines[c.start - 1].strip() != ""
        assert c.start == 1 or lines[c.start - 2].strip() == ""  # starts after a blank line
        assert "Long" in c.symbol


def test_tablegen_pass_records_become_whole_pass_documents():
    chunks = chunk(PASSES_TD, "tablegen")
    passes = [c for c in chunks if c.kind == "pass"]
    assert [c.symbol for c in passes] == ["ToyCoalesce", "ToyConvertToLLVM"]
    lines = PASSES_TD.split("\n")
    assert lines[passes[0].start - 1].startswith("def ToyCoalesce")
    assert lines[passes[0].end - 1] == "}"
    assert "consecutive threads" in passes[0].text


def test_tablegen_op_records_are_op_chunks():
    source = textwrap.dedent('''\
        def TTG_ConvertLayoutOp : TTG_Op<"convert_layout", [Pure]> {
          let summary = "convert layout";
          let arguments = (ins TT_Tensor:$src);
        }

        def TTG_AsyncWaitOp : TTG_Op<"async_wait"> {
          let summary = "async wait";
        }
        ''')
    ops = [c for c in chunk(source, "tablegen") if c.kind == "op"]
    assert [(c.start, c.end) for c in ops] == [(1, 4), (6, 8)]
    assert "convert_layout" in ops[0].symbol


def test_catalog_file_with_several_entries_gives_one_chunk_each_with_its_backend():
    source = "patterns:\n" + textwrap.indent("- " + CATALOG_YAML.replace("\n", "\n  ").rstrip(), "  ") + "\n" + \
        "  - id: npu.ub-overflow\n    title: UB overflow\n    backend: ascend\n    symptom: ub overflow at compile time\n"
    chunks = chunk(source, "yaml")
    assert [c.symbol for c in chunks] == ["nv.scalar-access", "npu.ub-overflow"]
    assert [c.backend for c in chunks] == ["nvidia", "ascend"]
    assert_line_exact(source, chunks)


def test_invalid_catalog_yaml_is_still_indexed_as_text():
    source = "id: broken\ntitle: [unclosed\nsymptom: ld.global.b32 everywhere in this kernel\n"
    chunks = chunk(source, "yaml")
    assert len(chunks) == 1 and "ld.global.b32" in chunks[0].text


def test_catalog_entry_carries_the_compiler_files_it_names():
    source = CATALOG_YAML.replace("confidence:", "  - path: lib/Analysis/AxisInfo.cpp\nconfidence:")
    (entry,) = chunk(source, "yaml")
    assert entry.related == "lib/Conversion/LoadStoreOpToLLVM.cpp; lib/Analysis/AxisInfo.cpp"
