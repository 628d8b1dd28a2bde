"""A question that pastes a compiler message finds the code that prints it."""
from __future__ import annotations

from .conftest import TOY

from ladder import indexer
from ladder.indexer import quoted
from ladder.indexer.build import build


def test_quoted_spans_are_messages_and_identifiers_not_apostrophes():
    question = ("it doesn't work and it's slow: 'FIXME: only tensor SSA dependencies are supported', "
                "\"x\" and `auto_profile_dir` and `tl.dot` and 'ok'")
    assert quoted.spans(question) == [["fixme", "only", "tensor", "ssa", "dependencies", "are", "supported"],
                                      ["auto_profile_dir"], ["tl", "dot"]]
    assert quoted.spans("what doesn't the pass do, and isn't it the one that's slow?") == []


def test_a_formatted_message_matches_on_the_run_of_words_the_source_holds():
    words = " raise valueerror int32 overflow detected for operation op "
    assert quoted._longest_run(["int32", "overflow", "detected", "for", "operation", "add"], words) == 5
    assert quoted._longest_run(["overflow", "add"], words) == 1


def test_the_file_printing_a_pasted_message_answers_first(tmp_path, index_dir):
    tree = tmp_path / "tree"
    (tree / "lib").mkdir(parents=True)
    (tree / "lib/Partitions.cpp").write_text(
        "// Rewrites the loop so that every partition reads what it needs.\n"
        "void rewrite(Loop loop) {\n  for (Value v : loop.values()) {\n"
        "    if (!isTensor(v)) {\n      emitWarning(\"FIXME: only tensor SSA dependencies between partitions \"\n"
        "                  \"are supported\");\n      return;\n    }\n  }\n}\n")
    (tree / "lib/Scheduling.cpp").write_text(
        "// How values are passed between partitions of a specialized loop: a scalar used by another\n"
        "// partition is passed between partitions through shared memory; the loop is specialized once\n"
        "// every value used by another partition is passed. Values passed between partitions.\n"
        "void passValuesBetweenPartitions(Loop loop) { passScalar(loop); specializeLoop(loop); }\n")
    build([f"toy={tree}"], index_dir=str(index_dir), embed_spec=TOY)
    question = ("a scalar used by another partition gives 'FIXME: only tensor SSA dependencies between "
                "partitions are supported' and the loop is not specialized; how are values passed between partitions?")
    hits = indexer.search(question, k=2, index_dir=str(index_dir))
    assert hits[0]["path"] == "lib/Partitions.cpp"
    unquoted = question.replace("'", "")
    assert indexer.search(unquoted, k=2, index_dir=str(index_dir))  # the same words unquoted still answer


def test_the_users_own_quoted_code_does_not_dilute_the_message_it_pastes(tmp_path, index_dir):
    """A chunk holding the whole pasted message scores it in full, whatever other spans (the user's
    code in backticks, which no compiler file holds) the question quotes."""
    tree = tmp_path / "tree"
    (tree / "lib").mkdir(parents=True)
    (tree / "lib/OffsetAnalysis.cpp").write_text(
        "void analyse(Value ptr) {\n  if (sources(ptr).size() > 1)\n"
        "    emitError(loc) << \"Currently ptr type from different source not supported\";\n}\n")
    build([f"toy={tree}"], index_dir=str(index_dir), embed_spec=TOY)
    from ladder.indexer import retrieve
    from ladder.indexer.store import Store

    store = Store(str(index_dir))
    opened = retrieve._open(str(store.root), store.current_id())
    alone = quoted.spans("it fails with 'Currently ptr type from different source not supported'")
    with_code = quoted.spans("`if use_a: p = a_ptr + idx else: p = b_ptr + idx` fails with "
                             "'Currently ptr type from different source not supported'")
    assert len(with_code) == 2
    assert opened.quotes.shares(with_code) == opened.quotes.shares(alone) == {0: 1.0}
