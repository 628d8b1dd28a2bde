"""Building, updating and querying an index of the toy tree (with the toy embedding)."""
from __future__ import annotations

import json
import threading

import pytest
from .conftest import TOY, write_tree

from ladder import indexer
from ladder.indexer import build as build_module
from ladder.indexer import rerank, retrieve
from ladder.indexer.build import build
from ladder.indexer.errors import BuildLocked, IndexCorrupt, IndexMissing, SourceError
from ladder.indexer.status import status
from ladder.indexer.store import Store
from ladder.indexer.text import keyword_query


def build_toy(tree, index_dir, **kwargs):
    return build([f"toy={tree}"], index_dir=str(index_dir), embed_spec=TOY, **kwargs)


def files_of(hits):
    return [h["path"] for h in hits]


def test_query_cites_the_fixture_file_that_answers_it(toy_tree, index_dir):
    build_toy(toy_tree, index_dir)
    hits = indexer.search("vector width from pointer contiguity and mask alignment", k=3, index_dir=str(index_dir))
    assert hits[0]["path"] == "lib/Conversion/LoadStoreOpToLLVM.cpp"
    assert hits[0]["pass"] == "toy-convert-to-llvm"
    assert hits[0]["tree"] == "toy" and hits[0]["language"] == "cpp"
    assert "getVectorWidth" in hits[0]["text"]


def test_results_have_the_documented_keys_and_line_ranges(toy_tree, index_dir):
    build_toy(toy_tree, index_dir)
    hits = indexer.search("unified buffer overflow", k=2, index_dir=str(index_dir))
    assert set(hits[0]) >= {"path", "start", "end", "pass", "score", "text", "tree", "language", "symbol"}
    top = hits[0]
    lines = (toy_tree / top["path"]).read_text().split("\n")
    assert "\n".join(lines[top["start"] - 1:top["end"]]) == top["text"]
    assert hits[0]["score"] >= hits[1]["score"]


def test_pass_descriptions_are_documents_with_their_cli_name(toy_tree, index_dir):
    build_toy(toy_tree, index_dir)
    hits = indexer.search("add_coalesce consecutive threads consecutive addresses", k=5, index_dir=str(index_dir),
                          where={"language": "tablegen"})
    assert hits[0]["path"] == "include/Passes.td" and hits[0]["pass"] == "toy-coalesce"
    assert hits[0]["symbol"] == "ToyCoalesce"


def test_backend_filter_keeps_common_code_and_drops_other_backends(toy_tree, index_dir):
    build_toy(toy_tree, index_dir)
    hits = indexer.search("ub overflow sub-blocks", k=10, index_dir=str(index_dir), where={"backend": "nvidia"})
    assert hits
    assert {h["backend"] for h in hits} <= {"nvidia", "common"}
    assert "docs/ascend_guide.md" not in files_of(hits)
    catalog = indexer.search("ld.global.b32", k=10, index_dir=str(index_dir), where={"backend": "nvidia"})
    assert "kb/patterns/nv.scalar-access.yaml" in files_of(catalog)


def test_rebuild_with_nothing_changed_is_up_to_date(toy_tree, index_dir):
    first = build_toy(toy_tree, index_dir)
    again = build_toy(toy_tree, index_dir)
    assert again.up_to_date and again.build == first.build and again.embedded_chunks == 0


def test_one_changed_file_re_embeds_only_its_chunks(toy_tree, index_dir):
    first = build_toy(toy_tree, index_dir)
    guide = toy_tree / "docs/ascend_guide.md"
    guide.write_text(guide.read_text() + "\n## Tail axis\n\nPad the tail axis to 32 bytes.\n")
    second = build_toy(toy_tree, index_dir)
    assert (second.changed_files, second.removed_files) == (1, 0)
    assert 0 < second.embedded_chunks < first.chunks
    assert second.build != first.build
    hits = indexer.search("pad the tail axis to 32 bytes", k=1, index_dir=str(index_dir))
    assert hits[0]["path"] == "docs/ascend_guide.md" and "Tail axis" in hits[0]["text"]


def test_deleted_file_disappears_from_the_index(toy_tree, index_dir):
    build_toy(toy_tree, index_dir)
    (toy_tree / "lib/Conversion/LoadStoreOpToLLVM.cpp").unlink()
    report = build_toy(toy_tree, index_dir)
    assert report.removed_files == 1
    hits = indexer.search("getVectorWidth ld.global.b32 vector width", k=20, index_dir=str(index_dir))
    assert "lib/Conversion/LoadStoreOpToLLVM.cpp" not in files_of(hits)
    assert "toy/lib/Conversion/LoadStoreOpToLLVM.cpp" not in Store(index_dir).current().manifest["files"]


def test_a_build_that_dies_halfway_leaves_the_old_index_queryable(toy_tree, index_dir, monkeypatch):
    first = build_toy(toy_tree, index_dir)
    (toy_tree / "python/compiler.py").write_text("def replaced():\n    return 'new text'\n")

    def crash(*args, **kwargs):
        raise KeyboardInterrupt  # the process is interrupted between vectors and keywords

    monkeypatch.setattr(build_module, "_write_keywords", crash)
    with pytest.raises(KeyboardInterrupt):
        build_toy(toy_tree, index_dir)
    store = Store(index_dir)
    assert store.current_id() == first.build
    assert [p.name for p in store.builds.iterdir()] == [first.build]
    hits = indexer.search("ToyBackend make_ttgir passes in order", k=3, index_dir=str(index_dir))
    assert "python/compiler.py" in files_of(hits)

    monkeypatch.undo()
    report = build_toy(toy_tree, index_dir)
    assert report.changed_files == 1 and store.current_id() == report.build


def test_a_second_build_is_refused_while_one_holds_the_lock(toy_tree, index_dir):
    store = Store(index_dir)
    with store.lock():
        with pytest.raises(BuildLocked, match="another build"):
            build_toy(toy_tree, index_dir)
    build_toy(toy_tree, index_dir)  # the lock is released afterwards


def test_the_lock_is_held_for_the_whole_build(toy_tree, index_dir, monkeypatch):
    inside, release = threading.Event(), threading.Event()
    real = build_module._write_keywords

    def slow(*args, **kwargs):
        inside.set()
        release.wait(30)
        return real(*args, **kwargs)

    monkeypatch.setattr(build_module, "_write_keywords", slow)
    worker = threading.Thread(target=build_toy, args=(toy_tree, index_dir))
    worker.start()
    assert inside.wait(60)
    try:
        with pytest.raises(BuildLocked):
            with Store(index_dir).lock():
                pass
    finally:
        release.set()
        worker.join()


def test_missing_source_path_is_an_error(tmp_path, index_dir):
    with pytest.raises(SourceError, match="does not exist"):
        build([str(tmp_path / "nowhere")], index_dir=str(index_dir), embed_spec=TOY)
    assert Store(index_dir).current_id() is None


def test_source_without_indexable_files_is_an_error(tmp_path, index_dir):
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("nothing to index")
    with pytest.raises(SourceError, match="nothing to index"):
        build([str(tmp_path / "empty")], index_dir=str(index_dir), embed_spec=TOY)


def test_binary_huge_and_non_utf8_files_are_skipped_and_counted(toy_tree, index_dir):
    (toy_tree / "lib/blob.cpp").write_bytes(b"int x;\0\0\0binary")
    (toy_tree / "lib/latin1.cpp").write_bytes("// caf\xe9\nint y;\n".encode("latin-1"))
    (toy_tree / "lib/huge.cpp").write_text("int z;\n" * 100_000)
    report = build_toy(toy_tree, index_dir)
    assert report.skipped["toy"] == {"binary": 1, "non_utf8": 1, "huge": 1}
    assert status(str(index_dir))["trees"]["toy"]["skipped"] == {"binary": 1, "non_utf8": 1, "huge": 1}


def test_query_without_an_index_says_how_to_build_one(index_dir):
    with pytest.raises(IndexMissing, match="ladder index build"):
        indexer.search("anything", index_dir=str(index_dir))


def test_corrupt_index_names_rebuild_and_rebuild_recovers(toy_tree, index_dir):
    first = build_toy(toy_tree, index_dir)
    (Store(index_dir).builds / first.build / "manifest.json").write_text("{not json")
    with pytest.raises(IndexCorrupt, match="--rebuild"):
        indexer.search("coalesce", index_dir=str(index_dir))
    with pytest.raises(IndexCorrupt, match="--rebuild"):
        build_toy(toy_tree, index_dir)
    report = build_toy(toy_tree, index_dir, rebuild=True)
    assert not report.up_to_date
    assert indexer.search("coalesce", k=1, index_dir=str(index_dir))


def test_corrupt_vectors_name_rebuild(toy_tree, index_dir):
    first = build_toy(toy_tree, index_dir)
    for path in (Store(index_dir).builds / first.build / "bm25").iterdir():
        path.write_bytes(b"garbage")
    with pytest.raises(IndexCorrupt, match="--rebuild"):
        indexer.search("coalesce", index_dir=str(index_dir))


@pytest.mark.parametrize("damage", ["truncate", "delete", "edit"])
def test_status_and_build_find_a_damaged_or_partial_index_and_say_how_to_recover(toy_tree, index_dir, damage):
    first = build_toy(toy_tree, index_dir)
    vectors = Store(index_dir).builds / first.build / "vectors.npy"
    if damage == "truncate":
        vectors.write_bytes(vectors.read_bytes()[:100])
    elif damage == "delete":
        vectors.unlink()
    else:
        data = bytearray(vectors.read_bytes())
        data[-1] ^= 0xFF
        vectors.write_bytes(bytes(data))
    with pytest.raises(IndexCorrupt, match="vectors.npy.*--rebuild"):
        status(str(index_dir))
    with pytest.raises(IndexCorrupt, match="vectors.npy.*--rebuild"):
        build_toy(toy_tree, index_dir)
    recovered = build(None, index_dir=str(index_dir), rebuild=True)
    assert list(recovered.trees) == ["toy"] and status(str(index_dir))["chunks"] == first.chunks


def test_rebuild_without_sources_keeps_the_trees_already_indexed(toy_tree, tmp_path, index_dir):
    notes = write_tree(tmp_path / "notes", {"guide.md": "# Notes\n\nThe grid maps programs to cores.\n"})
    build([f"toy={toy_tree}", f"notes={notes}"], index_dir=str(index_dir), embed_spec=TOY)
    again = build(None, index_dir=str(index_dir), rebuild=True)
    assert sorted(again.trees) == ["notes", "toy"] and again.embedded_chunks == again.chunks
    assert {r["metadata"]["tree"] for r in Store(index_dir).current().records()} == {"notes", "toy"}


def test_a_rebuild_whose_manifest_is_unreadable_asks_for_the_trees(toy_tree, index_dir):
    first = build_toy(toy_tree, index_dir)
    (Store(index_dir).builds / first.build / "manifest.json").write_text("{not json")
    with pytest.raises(IndexCorrupt, match="--source"):
        build(None, index_dir=str(index_dir), rebuild=True)


def test_status_reports_trees_versions_and_a_newer_version_on_disk(toy_tree, index_dir):
    (toy_tree / "version.txt").write_text("1.0\n")
    build_toy(toy_tree, index_dir)
    info = status(str(index_dir))
    assert info["trees"]["toy"]["version"] == "1.0" and "now" not in info["trees"]["toy"]
    assert info["chunks"] > 0 and info["embed"] == TOY and info["passes"] == 2
    (toy_tree / "version.txt").write_text("1.1\n")
    assert status(str(index_dir))["trees"]["toy"]["now"] == "1.1"


def test_new_tree_version_relabels_chunks_without_re_embedding(toy_tree, index_dir):
    (toy_tree / "version.txt").write_text("1.0\n")
    first = build_toy(toy_tree, index_dir)
    (toy_tree / "version.txt").write_text("1.1\n")
    second = build_toy(toy_tree, index_dir)
    assert not second.up_to_date and second.embedded_chunks == 0 and second.reused_vectors == first.chunks
    records = list(Store(index_dir).current().records())
    assert {r["metadata"]["version"] for r in records} == {"1.1"}


def test_default_build_reuses_the_trees_already_indexed(toy_tree, index_dir):
    build_toy(toy_tree, index_dir)
    again = build(None, index_dir=str(index_dir))
    assert again.up_to_date and list(again.trees) == ["toy"]


def test_build_report_is_json_serialisable(toy_tree, index_dir):
    report = build_toy(toy_tree, index_dir)
    assert json.loads(json.dumps(report.to_json()))["chunks"] == report.chunks


def test_identical_files_in_two_places_are_both_indexed(toy_tree, index_dir):
    (toy_tree / "python/__init__.py").write_text('"""Package marker with a docstring."""\n')
    (toy_tree / "docs/__init__.py").write_text('"""Package marker with a docstring."""\n')
    build_toy(toy_tree, index_dir)
    records = list(Store(index_dir).current().records())
    paths = {r["metadata"]["path"] for r in records}
    assert {"python/__init__.py", "docs/__init__.py"} <= paths
    assert len({r["id"] for r in records}) == len(records)


def test_pasted_ir_op_finds_the_cpp_that_spells_it_in_camel_case(toy_tree, index_dir):
    (toy_tree / "lib/Conversion/Layouts.cpp").write_text(
        "struct ConvertLayoutOpConversion {\n  void rewrite(Op op) {\n    shuffleRegisters(op);\n  }\n};\n")
    build_toy(toy_tree, index_dir)
    store = Store(index_dir)
    opened = retrieve._open(str(store.root), store.current_id())
    best = retrieve.top(opened.keyword_scores(keyword_query("ttg.convert_layout"), None), 5)[0]
    assert opened.records[best]["metadata"]["path"] == "lib/Conversion/Layouts.cpp"
    # In a corpus this small every chunk is a candidate of both retrievers, so a file with several
    # chunks (the pass definitions, followed by their code) gathers score; the file that spells
    # the op still comes right after them.
    hits = indexer.search("ttg.convert_layout", k=3, index_dir=str(index_dir))
    assert "lib/Conversion/Layouts.cpp" in files_of(hits)


def test_pass_notes_carry_the_pass_they_are_named_after(tmp_path, index_dir):
    notes = write_tree(tmp_path / "kb", {
        "passes/tritongpu-coalesce.md": "# tritongpu-coalesce (Coalesce)\n\nPicks the blocked layout of loads.\n",
        "passes/axis-info.md": "# AxisInfo analysis\n\nContiguity and divisibility of every value.\n",
    })
    build([f"kb={notes}"], index_dir=str(index_dir), embed_spec=TOY)
    passes = {r["metadata"]["path"]: r["metadata"].get("pass") for r in Store(index_dir).current().records()}
    assert passes == {"passes/tritongpu-coalesce.md": "tritongpu-coalesce", "passes/axis-info.md": None}


def test_an_answer_cites_each_file_once(toy_tree, index_dir):
    build_toy(toy_tree, index_dir)
    hits = indexer.search("pass coalesce layout load store lowering", k=8, index_dir=str(index_dir))
    keys = [(h["tree"], h["path"]) for h in hits]
    assert len(keys) == len(set(keys)) > 3


def test_asking_for_more_results_keeps_the_first_ones(toy_tree, index_dir):
    build_toy(toy_tree, index_dir)
    for question in ("vector width of a global load", "ub overflow sub-blocks", "coalesce pass order"):
        five = indexer.search(question, k=5, index_dir=str(index_dir))
        ten = indexer.search(question, k=10, index_dir=str(index_dir))
        assert [(h["path"], h["start"]) for h in ten[:5]] == [(h["path"], h["start"]) for h in five]


def test_results_come_in_descending_order_of_their_score(toy_tree, index_dir):
    build_toy(toy_tree, index_dir)
    for question in ("nv.scalar-access symptom expected ld.global.v4.b32", "make_ttgir passes in order"):
        scores = [h["score"] for h in indexer.search(question, k=10, index_dir=str(index_dir))]
        assert scores == sorted(scores, reverse=True) and all(0 <= s <= 1 for s in scores)


def test_a_minimum_score_leaves_out_what_is_not_relevant(toy_tree, index_dir):
    build_toy(toy_tree, index_dir)
    everything = indexer.search("sourdough bread proofing temperature", k=10, index_dir=str(index_dir))
    assert everything  # without a threshold every pooled file is an answer
    assert indexer.search("sourdough bread proofing temperature", k=10, index_dir=str(index_dir),
                          min_score=rerank.MIN_RELEVANCE) == []
    assert indexer.search("getVectorWidth contiguity alignment ld.global.b32", k=3, index_dir=str(index_dir),
                          min_score=rerank.MIN_RELEVANCE)


def test_chunks_of_a_pass_implementation_carry_the_pass_summary(toy_tree, index_dir):
    build_toy(toy_tree, index_dir)
    coalesce = [r for r in Store(index_dir).current().records() if r["metadata"]["path"] == "lib/Transforms/Coalesce.cpp"]
    assert coalesce and {r["metadata"]["summary"] for r in coalesce} == {"coalesce global memory accesses"}


def test_the_same_index_answers_the_same_way_when_opened_again(toy_tree, index_dir):
    build_toy(toy_tree, index_dir)
    first = indexer.search("vector width of a global load", k=5, index_dir=str(index_dir))
    retrieve._open.cache_clear()
    again = indexer.search("vector width of a global load", k=5, index_dir=str(index_dir))
    assert [(h["path"], h["start"], h["score"]) for h in first] == [(h["path"], h["start"], h["score"]) for h in again]


def test_an_index_of_an_older_format_names_rebuild(toy_tree, index_dir):
    build_toy(toy_tree, index_dir)
    manifest_path = Store(index_dir).current().path / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest_path.write_text(json.dumps({**manifest, "format": 1}))
    retrieve._open.cache_clear()
    with pytest.raises(IndexCorrupt, match="older version.*--rebuild"):
        indexer.search("coalesce", index_dir=str(index_dir))
    assert build_toy(toy_tree, index_dir, rebuild=True).chunks > 0
    assert indexer.search("coalesce", index_dir=str(index_dir))


def test_status_shows_the_commit_and_date_of_a_checkout(toy_tree, index_dir):
    import subprocess

    git = ["git", "-C", str(toy_tree), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "toy", "--date", "2024-05-06T07:08:09+00:00"], check=True,
                   env={"GIT_COMMITTER_DATE": "2024-05-06T07:08:09+00:00", "PATH": "/usr/bin:/bin"})
    head = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    build_toy(toy_tree, index_dir)
    tree = status(str(index_dir))["trees"]["toy"]
    assert tree["commit"] == head and tree["date"].startswith("2024-05-06T07:08:09")
    assert tree["version"] == f"git:{head[:12]}"


ZH_ONLY_DOC = """\
# triton.language.multibuffer

## 1. OP 概述

简介：为张量设置多缓冲，允许编译器对同一张量创建多个副本。

## 2. 特殊限制说明

当前实现仅支持 `size` 为 `2`。
"""


def test_a_doc_written_only_in_chinese_answers_an_english_question(toy_tree, index_dir):
    (toy_tree / "docs/zh").mkdir(parents=True)
    (toy_tree / "docs/zh/multibuffer.md").write_text(ZH_ONLY_DOC)
    build_toy(toy_tree, index_dir)
    hits = indexer.search("which restrictions apply to multiple buffers copies of a tensor, is only size 2 supported",
                          k=3, index_dir=str(index_dir))
    assert hits[0]["path"] == "docs/zh/multibuffer.md"
    chinese = indexer.search("多缓冲 限制", k=3, index_dir=str(index_dir))
    assert chinese[0]["path"] == "docs/zh/multibuffer.md"


def test_default_sources_add_the_triton_checkouts_found_on_the_machine(tmp_path, monkeypatch):
    from ladder.indexer import sources

    checkout = write_tree(tmp_path / "src" / "triton-ascend", {"include/triton/x.h": "int x;\n", "lib/y.cpp": "int y;\n"})
    write_tree(tmp_path / "src" / "triton-notes", {"notes.md": "# not a checkout\n"})
    monkeypatch.delenv("LADDER_COMPILER_SOURCES", raising=False)
    monkeypatch.setattr(sources, "CHECKOUT_PLACES", (str(tmp_path / "src"),))
    assert sources.compiler_checkouts() == [f"triton-ascend={checkout.resolve()}"]
    assert sources.default_sources()[-1] == f"triton-ascend={checkout.resolve()}"
    monkeypatch.setenv("LADDER_COMPILER_SOURCES", f"a=/x{':'}b=/y")
    assert sources.compiler_checkouts() == ["a=/x", "b=/y"]


def test_a_new_keyword_version_re_indexes_keywords_without_re_embedding(toy_tree, index_dir, monkeypatch):
    from ladder.indexer import text

    first = build_toy(toy_tree, index_dir)
    monkeypatch.setattr(text, "KEYWORD_VERSION", text.KEYWORD_VERSION + 1)
    second = build_toy(toy_tree, index_dir)
    assert not second.up_to_date and second.embedded_chunks == 0 and second.reused_vectors == first.chunks
    assert Store(index_dir).current().manifest["keywords"] == text.KEYWORD_VERSION
    assert build_toy(toy_tree, index_dir).up_to_date
