"""Rung 4: unexplained facts become questions; only chunks about the fact are kept and cited."""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
import pytest

from ladder.diagnoser.compiler import answers, escalate, questions
from ladder.diagnoser.compiler.llm import Summariser


def fact(kind, value, line=9, kernel="k", excerpt=""):
    return {"kernel": kernel, "kind": kind, "value": value, "file": "solution.py", "line": line,
            "stage": "ttgir", "excerpt": excerpt}


SCALAR_LOAD = fact("global_access", {"op": "load", "vector_bits": 32, "elements": 1024, "dtype": "fp32",
                                     "masked": True, "via": "ld.global"}, excerpt="ld.global.b32 %r1, [%rd2];")
WIDE_LOAD = fact("global_access", {"op": "load", "vector_bits": 128, "elements": 1024, "dtype": "fp32",
                                   "masked": True, "via": "ld.global"})
CONVERT_IN_LOOP = fact("convert_layout", {"src": "blocked", "dst": "mma", "in_loop": True, "through_shared": True},
                       line=20, excerpt="%5 = ttg.convert_layout %4 : tensor<64x64xf32, #blocked> -> tensor<64x64xf32, #mma>")
MMA_V2 = fact("dot_lowering", {"kind": "mma_sync", "mma_version": 2, "instr_shape": [16, 8], "operand_dtype": "fp16",
                               "input_precision": "tf32"}, line=21, excerpt="%7 = tt.dot %a, %b, %acc")
UNPIPELINED = fact("pipelining", {"requested_stages": 1, "async_copies": 0, "tma": False, "pipelined": False}, line=18)
WGMMA = fact("dot_lowering", {"kind": "wgmma", "mma_version": 3, "instr_shape": [64, 128, 16],
                              "operand_dtype": "bf16", "input_precision": "tf32"})


def test_only_facts_that_look_like_a_cause_become_questions():
    asked = questions([WIDE_LOAD, WGMMA, SCALAR_LOAD], [])
    assert [q.about["fact_kind"] for q in asked] == ["global_access"]
    assert "32 bits" in asked[0].describe


def test_ir_op_names_in_the_excerpt_join_the_query_and_the_terms():
    asked = questions([CONVERT_IN_LOOP], [])[0]
    assert "ttg.convert_layout" in asked.query
    assert "ttg.convert_layout" in asked.terms


def test_facts_a_catalogued_finding_already_cites_are_asked_last():
    covered = {"pattern": "nv.scalar-access", "rung": 3, "title": "scalar loads", "evidence": [{"type": "fact", "fact": SCALAR_LOAD}]}
    asked = questions([SCALAR_LOAD, CONVERT_IN_LOOP], [covered])
    assert [q.about.get("fact_kind") for q in asked] == ["convert_layout", "global_access"]


def test_the_same_fact_in_several_places_and_specializations_is_asked_once_naming_every_line():
    other_line = {**SCALAR_LOAD, "line": 10, "kernel": "k[n:i32%16]"}
    asked = questions([SCALAR_LOAD, other_line], [])
    assert len(asked) == 1
    assert asked[0].describe.endswith("(likewise at line 10)")
    assert len(asked[0].evidence) == 2


def test_a_load_of_one_scalar_per_program_is_not_asked_about():
    for shape in ([], [1]):
        assert questions([{**SCALAR_LOAD, "value": {**SCALAR_LOAD["value"], "tensor_shape": shape}}], []) == []
    assert len(questions([{**SCALAR_LOAD, "value": {**SCALAR_LOAD["value"], "tensor_shape": [128]}}], [])) == 1


def test_uncatalogued_findings_and_catalog_compiler_references_become_questions():
    odd = {"pattern": None, "rung": 3, "title": "26 barriers per iteration", "evidence": []}
    known = {"pattern": "nv.unpipelined-loop", "rung": 1, "title": "num_stages=1", "evidence": []}
    refs = [{"path": "lib/Dialect/TritonGPU/Transforms/Pipeliner/SoftwarePipeliner.cpp", "lines": [10, 40],
             "symbol": "PipelinePass::runOnOperation", "why": "loops with num_stages <= 1 are left alone"}]
    asked = questions([], [odd, known], catalog={"nv.unpipelined-loop": refs})
    assert [q.about["kind"] for q in asked] == ["finding", "finding"]
    assert asked[1].paths == ("lib/Dialect/TritonGPU/Transforms/Pipeliner/SoftwarePipeliner.cpp",)
    assert asked[1].terms == ("PipelinePass", "SoftwarePipeliner")
    assert "num_stages <= 1" in asked[1].query


def test_the_file_a_catalog_entry_names_counts_as_an_answer():
    known = {"pattern": "nv.unpipelined-loop", "rung": 1, "title": "num_stages=1", "evidence": []}
    refs = [{"path": "lib/Dialect/TritonGPU/Transforms/Pipeliner/SoftwarePipeliner.cpp", "symbol": "shouldPipeline"}]
    question = questions([], [known], catalog={"nv.unpipelined-loop": refs})[0]
    chunk = {"path": "lib/Dialect/TritonGPU/Transforms/Pipeliner/SoftwarePipeliner.cpp", "start": 1, "end": 9,
             "pass": None, "text": "static bool f();"}
    assert answers.keep([chunk], question)[0]["why"].startswith("the file the catalog names")


def test_a_chunk_with_similar_words_but_neither_the_pass_nor_the_ops_is_dropped():
    question = questions([SCALAR_LOAD], [])[0]
    prose = {"path": "docs/layouts.md", "start": 1, "end": 9, "pass": None, "score": 0.9, "language": "markdown",
             "text": "How loads and stores move data; a wide vector load moves more bytes per instruction."}
    pass_code = {"path": "lib/X.cpp", "start": 1, "end": 5, "pass": "tritongpu-coalesce", "score": 0.1, "text": "int x;"}
    kept = answers.keep([prose, pass_code], question)
    assert [c["path"] for c in kept] == ["lib/X.cpp"]
    assert kept[0]["why"] == "pass tritongpu-coalesce"


def test_the_statement_cites_the_chunk_and_quotes_its_most_relevant_sentence():
    question = questions([SCALAR_LOAD], [])[0]
    chunk = {"path": "lib/Coalesce.cpp", "start": 3, "end": 30, "pass": "tritongpu-coalesce", "symbol": "getElementsPerThread",
             "language": "cpp", "text": "// Unrelated banner.\nint a;\n// Contiguity and divisibility from AxisInfo decide the width.\nint b;"}
    said = answers.statement(question, chunk)
    assert said.startswith("The load at solution.py:9 in `k` moves 32 bits per instruction")
    assert "lib/Coalesce.cpp:3-30 (getElementsPerThread, pass tritongpu-coalesce)" in said
    assert said.endswith("contiguity and divisibility from AxisInfo decide the width.")


@pytest.fixture
def fixture_index(fixture_index_dir):
    from ladder import indexer

    return lambda query, k=5, where=None: indexer.search(query, k=k, where=where, index_dir=fixture_index_dir)


@pytest.mark.slow
@pytest.mark.parametrize("the_fact,expected", [
    (SCALAR_LOAD, "lib/Dialect/TritonGPU/Transforms/Coalesce.cpp"),
    (CONVERT_IN_LOOP, "lib/Dialect/TritonGPU/Transforms/RemoveLayoutConversions.cpp"),
    (MMA_V2, "lib/Dialect/TritonGPU/Transforms/AccelerateMatmul.cpp"),
    (UNPIPELINED, "lib/Dialect/TritonGPU/Transforms/Pipeliner/SoftwarePipeliner.cpp"),
])
def test_rung_four_cites_the_fixture_file_that_explains_the_fact(fixture_index, the_fact, expected):
    got = escalate([the_fact], [], fixture_index)
    cited = [c["path"] for c in got["citations"]]
    assert expected in cited
    assert "docs/layouts.md" not in cited
    citation = next(c for c in got["citations"] if c["path"] == expected)
    assert citation["start"] >= 1 and citation["end"] >= citation["start"]
    finding = got["findings"][0]
    assert finding["rung"] == 4 and finding["line"] == the_fact["line"]
    assert {"type": "fact", **the_fact} in finding["evidence"]


def fake_search(query, k=5, where=None):
    return [{"path": "lib/Dialect/TritonGPU/Transforms/Coalesce.cpp", "start": 1, "end": 36, "pass": "tritongpu-coalesce",
             "score": 0.5, "text": "// AxisInfo contiguity decides the width.", "language": "cpp", "symbol": ""}]


def test_without_an_llm_the_cited_chunks_stand_alone(monkeypatch):
    monkeypatch.delenv("LADDER_LLM_BASE_URL", raising=False)
    got = escalate([SCALAR_LOAD], [], fake_search)
    assert got["citations"] and "summary" not in got["citations"][0]
    assert got["warnings"] == []


def test_a_dead_llm_endpoint_is_one_warning_and_the_citations_remain(monkeypatch):
    monkeypatch.setenv("LADDER_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("LADDER_LLM_MODEL", "any")
    got = escalate([SCALAR_LOAD, CONVERT_IN_LOOP], [], lambda q, k=5, where=None: fake_search(q) + [
        {**fake_search(q)[0], "path": "lib/R.cpp", "pass": "tritongpu-remove-layout-conversions"}])
    assert len(got["warnings"]) == 1 and "unusable" in got["warnings"][0]
    assert len(got["citations"]) >= 2


class _Chat(BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802 (http.server's name)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        said = "Coalesce.cpp:1-36 caps the width at what AxisInfo proves; add tl.multiple_of." if body["messages"] else ""
        reply = json.dumps({"id": "x", "object": "chat.completion", "created": 0, "model": body["model"],
                            "choices": [{"index": 0, "finish_reason": "stop",
                                         "message": {"role": "assistant", "content": said}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args):
        pass


def test_a_configured_llm_adds_a_summary_to_the_first_citation_of_each_question(monkeypatch):
    server = HTTPServer(("127.0.0.1", 0), _Chat)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv("LADDER_LLM_BASE_URL", f"http://127.0.0.1:{server.server_port}/v1")
        monkeypatch.setenv("LADDER_LLM_MODEL", "local")
        got = escalate([SCALAR_LOAD], [], fake_search, summariser=Summariser())
    finally:
        server.shutdown()
    assert got["citations"][0]["summary"].startswith("Coalesce.cpp:1-36 caps")
    assert got["warnings"] == []


def test_catalog_entries_are_never_cited_as_compiler_evidence():
    question = questions([SCALAR_LOAD], [])[0]
    entry = {"path": "patterns/nv.scalar-access.yaml", "start": 1, "end": 40, "pass": None, "kind": "catalog",
             "text": "AxisInfo contiguity divisibility"}
    assert answers.keep([entry], question) == []


def test_a_loop_without_a_dot_is_not_asked_about_pipelining():
    no_dot = {**UNPIPELINED, "value": {**UNPIPELINED["value"], "feeds_dot": False}}
    assert questions([no_dot], []) == []
    assert len(questions([{**no_dot, "value": {**no_dot["value"], "feeds_dot": True}}], [])) == 1


@pytest.mark.parametrize("kind,role", [("code", "is the compiler code behind this"),
                                       ("pass", "defines the pass behind this"), ("doc", "documents this")])
def test_the_statement_says_what_kind_of_source_it_cites(kind, role):
    question = questions([SCALAR_LOAD], [])[0]
    chunk = {"path": "x", "start": 1, "end": 2, "kind": kind, "language": "cpp", "text": "// contiguity decides it."}
    assert f"x:1-2 {role}: contiguity decides it." in answers.statement(question, chunk)


def test_code_whose_comments_miss_the_question_is_cited_without_a_quote():
    question = questions([SCALAR_LOAD], [])[0]
    chunk = {"path": "lib/A.cpp", "start": 5, "end": 9, "kind": "code", "language": "cpp", "symbol": "AxisInfo::join",
             "text": "// list of attributes that we care about\nint x;"}
    assert answers.statement(question, chunk).endswith("lib/A.cpp:5-9 (AxisInfo::join) is the compiler code behind this.")


def test_a_statement_about_a_catalog_id_keeps_its_spelling():
    finding = {"pattern": "nv.redundant-global-traffic", "rung": 1, "title": "the row is read twice", "line": 24,
               "file": "solution.py", "evidence": []}
    question = questions([], [finding], catalog={"nv.redundant-global-traffic": [{"path": "lib/X.cpp"}]})[0]
    said = answers.statement(question, {"path": "lib/X.cpp", "start": 1, "end": 2, "text": ""})
    assert said.startswith("nv.redundant-global-traffic at solution.py:24")


def test_a_markdown_section_is_quoted_from_its_prose_not_its_heading():
    question = questions([SCALAR_LOAD], [])[0]
    note = {"path": "passes/axis-info.md", "start": 24, "end": 29, "kind": "doc", "language": "markdown",
            "text": "## Why it matters\nIt is the only thing that decides vector width.\n\nCatalog: nv.scalar-access."}
    assert answers.gist(note, question) == "It is the only thing that decides vector width."


def test_a_chunk_is_cited_once_even_when_several_questions_reach_it():
    got = escalate([SCALAR_LOAD, {**SCALAR_LOAD, "kernel": "other", "line": 40}], [], fake_search)
    assert len(got["citations"]) == 1
    assert len(got["findings"]) == 2
    assert all(any(e.get("type") == "chunk" for e in f["evidence"]) for f in got["findings"])


def test_rung_four_findings_are_valid_finding_records():
    from ladder.diagnoser.evidence import Finding

    for finding in escalate([SCALAR_LOAD], [], fake_search)["findings"]:
        assert Finding.from_dict(finding).rung == 4


def test_an_index_without_compiler_source_is_said_to_be_one_and_nothing_is_cited():
    got = escalate([SCALAR_LOAD, CONVERT_IN_LOOP], [], fake_search, compiler_source=False)
    assert got["citations"] == [] and got["findings"] == []
    assert "no compiler source" in got["warnings"][0] and "--source" in got["warnings"][0]
    assert len(got["questions"]) == 2


def test_a_question_with_nothing_relevant_enough_is_reported_as_not_found():
    got = escalate([SCALAR_LOAD], [], lambda q, k=5, where=None: [])
    assert got["citations"] == []
    assert "no compiler code found for" in got["summary"]


def test_a_fact_query_is_its_topic_its_ir_ops_and_the_passes_that_decide_it():
    asked = questions([CONVERT_IN_LOOP], [])[0]
    topic, rest = asked.query.split(" ttg.convert_layout ")
    assert "layout" in topic and rest == "remove-layout-conversions"
