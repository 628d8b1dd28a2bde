"""`ladder index build|status` and `ladder query` through click, as a user runs them."""
from __future__ import annotations

import json

from click.testing import CliRunner

from ladder.diagnoser.cli import main
from ladder.diagnoser.cli.errors import CANNOT_RUN

from .conftest import TOY


def run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_build_status_and_query_json(toy_tree, index_dir):
    built = run("index", "build", "--source", f"toy={toy_tree}", "--index-dir", str(index_dir), "--embed", TOY)
    assert built.exit_code == 0, built.output
    assert "toy" in built.output and "kb" in built.output  # the catalog always comes along

    shown = run("index", "status", "--index-dir", str(index_dir))
    assert shown.exit_code == 0 and "toy" in shown.output and "chunks" in shown.output

    asked = run("query", "getVectorWidth contiguity alignment", "--k", "2", "--json", "--tree", "toy",
                "--index-dir", str(index_dir))
    hits = json.loads(asked.stdout)
    assert len(hits) == 2
    assert hits[0]["path"] == "lib/Conversion/LoadStoreOpToLLVM.cpp"
    assert {"path", "start", "end", "pass", "score", "text"} <= set(hits[0])


def test_query_prints_path_lines_pass_and_score(toy_tree, index_dir):
    run("index", "build", "--source", f"toy={toy_tree}", "--index-dir", str(index_dir), "--embed", TOY)
    shown = run("query", "getVectorWidth contiguity alignment", "--k", "1", "--tree", "toy",
                "--index-dir", str(index_dir))
    assert "lib/Conversion/LoadStoreOpToLLVM.cpp:" in shown.output
    assert "pass=toy-convert-to-llvm" in shown.output and "score=" in shown.output


def test_user_mistakes_end_with_one_line_and_no_traceback(tmp_path, index_dir):
    missing = run("index", "build", "--source", str(tmp_path / "nowhere"), "--index-dir", str(index_dir),
                  "--embed", TOY)
    assert missing.exit_code == CANNOT_RUN
    assert missing.output.strip().splitlines() == [(f"Error: source path does not exist or is not a directory: "
                                                   f"{tmp_path / 'nowhere'}")]
    no_index = run("query", "anything", "--index-dir", str(index_dir))
    assert no_index.exit_code == CANNOT_RUN and "ladder index build" in no_index.output
    assert "Traceback" not in no_index.output


def test_errors_under_json_are_json(tmp_path, index_dir):
    for args in (["index", "build", "--source", str(tmp_path / "nowhere"), "--json"], ["index", "status", "--json"],
                 ["query", "anything", "--json"]):
        done = run(*args, "--index-dir", str(index_dir))
        assert done.exit_code == CANNOT_RUN
        error = json.loads(done.stdout)
        assert error["kind"] in {"SourceError", "IndexMissing"} and error["error"]


def test_status_of_a_damaged_index_says_how_to_recover(toy_tree, index_dir):
    run("index", "build", "--source", f"toy={toy_tree}", "--index-dir", str(index_dir), "--embed", TOY)
    build_dir = next((index_dir / "builds").iterdir())
    (build_dir / "chunks.jsonl").write_text("")
    shown = run("index", "status", "--index-dir", str(index_dir))
    assert shown.exit_code == CANNOT_RUN and "chunks.jsonl" in shown.output and "--rebuild" in shown.output


def test_a_build_without_compiler_source_says_how_to_add_one(tmp_path, index_dir):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "guide.md").write_text("# Guide\n\nLaunch one program per core and loop inside.\n")
    built = run("index", "build", "--source", f"notes={notes}", "--index-dir", str(index_dir), "--embed", TOY)
    assert built.exit_code == 0 and "ladder index build --source" in built.output


def test_build_progress_off_a_terminal_gives_counts_share_and_time_left(capsys):
    from ladder.diagnoser.cli.index import _Progress

    progress = _Progress("embedding", 4)
    progress.update(2)
    progress.EVERY = 0.0
    progress.update(1)
    progress.update(1)
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines[0].startswith("embedding 3/4 (75%), about ") and lines[0].endswith("s left")
    assert lines[1].startswith("embedding 4/4 (100%), done in ")
