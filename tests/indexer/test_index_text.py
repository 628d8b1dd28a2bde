"""What BM25 and the dense model read of chunks and queries (indexer.text)."""
from __future__ import annotations

from ladder.indexer.text import HEADER_WEIGHT, comments, dense_query, dense_text, keyword_text, keyword_tokens, words


def test_words_split_camel_snake_and_dotted_names():
    assert words("AtomicRMWOpConversion::matchAndRewrite") == "atomic rmw op conversion match and rewrite"
    assert words("ttg.convert_layout") == "ttg convert layout"
    assert words("LoadStoreOpToLLVM") == "load store op to llvm"


def test_camel_case_identifier_is_a_token_whole_and_by_its_words():
    assert keyword_tokens("ConvertLayoutOp") == ["convertlayoutop", "convert", "layout", "op"]


def test_pasted_ir_op_and_camel_case_cpp_share_their_words():
    pasted = set(keyword_tokens("ttg.convert_layout"))
    assert {"ttg", "convert_layout", "convert", "layout"} <= pasted
    assert {"convert", "layout"} <= set(keyword_tokens("struct ConvertLayoutOpConversion"))


def test_ptx_mnemonic_falls_apart_at_its_dots():
    assert keyword_tokens("ld.global.v4.b32") == ["ld", "global", "v4", "b32"]


def test_stopwords_bare_numbers_and_single_letters_are_dropped():
    assert keyword_tokens("is the x 16 not in it") == []


def test_keyword_tokens_are_stemmed_so_plurals_meet():
    assert keyword_tokens("loads") == keyword_tokens("load")
    assert keyword_tokens("getVectorSizes")[-1] == keyword_tokens("size")[0]


def test_each_occurrence_counts_for_bm25():
    assert keyword_tokens("barrier barrier").count("barrier") == 2


def test_keyword_text_weights_the_header_by_repeating_it():
    text = keyword_text({"path": "lib/Membar.cpp", "symbol": "MembarAnalysis", "kind": "code"}, "int x;")
    assert text.count("lib/Membar.cpp") == HEADER_WEIGHT
    assert text.count("MembarAnalysis") == HEADER_WEIGHT
    assert text.endswith("int x;")


def test_cpp_comments_are_gathered_as_prose():
    code = "// Insert a barrier\n/* between writes\n * and reads */\nint x; // of shared memory\n"
    assert comments(code, "cpp") == "Insert a barrier of shared memory between writes * and reads"


def test_python_docstrings_and_comments_are_gathered():
    code = 'def f():\n    """Build the ptxas command."""\n    # with -lineinfo\n    return 1\n'
    assert comments(code, "python") == "Build the ptxas command. with -lineinfo"


def test_dense_text_starts_with_file_symbol_and_pass_in_words_then_comments_then_code():
    metadata = {"path": "lib/Conversion/TritonGPUToLLVM/ScanOpToLLVM.cpp", "language": "cpp",
                "symbol": "ScanOpConversion::matchAndRewrite", "pass": "convert-triton-gpu-to-llvm",
                "summary": "Convert TritonGPU to LLVM"}
    code = "// Scan within a warp with shuffles.\nstatic void warpScan() {}\n"
    lines = dense_text(metadata, code).split("\n")
    assert lines[0] == ("scan op to llvm (triton gpu to llvm); scan op conversion match and rewrite; "
                        "pass convert-triton-gpu-to-llvm: Convert TritonGPU to LLVM")
    assert lines[1] == "Scan within a warp with shuffles."
    assert "\n".join(lines[2:]) == code


def test_dense_text_of_markdown_keeps_the_heading_path_and_the_prose():
    metadata = {"path": "docs/en/debug_guide/debugging.md", "language": "markdown",
                "symbol": "Debugging Guide > 4 Interpreter Mode"}
    text = "## 4 Interpreter Mode\n\nSet TRITON_INTERPRET=1."
    assert dense_text(metadata, text) == "debugging (debug guide); Debugging Guide > 4 Interpreter Mode\n" + text


def test_dense_text_without_pass_or_symbol_has_only_the_place():
    assert dense_text({"path": "util.py", "language": "python"}, "x = 1").split("\n")[0] == "util"


def test_dense_query_appends_the_words_of_pasted_identifiers():
    assert dense_query("why a ttg.convert_layout in my loop?") == "why a ttg.convert_layout in my loop? (ttg convert layout)"
    assert dense_query("getVectorSize and ld.global.b32") == (
        "getVectorSize and ld.global.b32 (get vector size; ld global b 32)")


def test_dense_query_leaves_plain_questions_alone():
    question = "why is my kernel slow on the NPU."
    assert dense_query(question) == question


def test_a_question_gets_the_codes_words_for_its_own():
    from ladder.indexer.text import keyword_query

    tokens = keyword_query("how is tl.sort lowered, and are the adds folded?")
    assert {"convert", "combin"} <= set(tokens)
    assert keyword_query("tl.sort") == keyword_tokens("tl.sort")


def test_a_question_about_moved_or_equal_values_asks_in_the_words_of_the_passes_that_do_it():
    from ladder.indexer.text import keyword_query

    assert {"hoist", "sink", "bubbl"} <= set(keyword_query("which pass moves the extract_slice up?"))
    assert "cse" in keyword_query("two iter_args are always equal; are they merged?")
