"""`ladder explain` and `ladder kb list|check`."""
from __future__ import annotations

import json

from click.testing import CliRunner

from ladder.diagnoser.cli.errors import USAGE
from ladder.diagnoser.cli.kb import explain, kb


def summary(tmp_path):
    path = tmp_path / "triage-suite.json"
    path.write_text(json.dumps({"kernels": {"level1/19_relu": {"findings": [
        {"pattern": "nv.scalar-access", "kernel": "relu_kernel", "line": 13, "confidence": 0.85,
         "title": "global accesses not vectorized"}]}}}))
    return path


def test_explain_prints_entry_references_and_suite_hits(tmp_path):
    result = CliRunner().invoke(explain, ["nv.scalar-access", "--index-dir", str(tmp_path / "no-index"),
                                          "--suite-summary", str(summary(tmp_path))])
    assert result.exit_code == 0, result.output
    assert "nv.scalar-access: Global loads and stores are not vectorized" in result.output
    assert "lib/Analysis/AxisInfo.cpp:1256-1285" in result.output
    assert "no knowledge index" in result.output
    assert "level1/19_relu: relu_kernel line 13" in result.output


def test_explain_json_has_entry_citations_and_suite(tmp_path):
    result = CliRunner().invoke(explain, ["nv.tiny-block", "--json", "--index-dir", str(tmp_path / "none"),
                                          "--suite-summary", str(summary(tmp_path))])
    data = json.loads(result.stdout)
    assert data["pattern"]["id"] == "nv.tiny-block" and data["citations"] == []
    assert data["index"] and data["suite"]["hits"] == []


def test_explain_unknown_id_suggests_close_ones():
    result = CliRunner().invoke(explain, ["nv.tiny-blok", "--no-suite"])
    assert result.exit_code == USAGE and "did you mean nv.tiny-block" in result.output


def test_explain_cites_retrieved_chunks(tmp_path, monkeypatch):
    from ladder import indexer

    chunk = {"path": "lib/Dialect/TritonGPU/Transforms/Coalesce.cpp", "start": 25, "end": 105,
             "pass": "tritongpu-coalesce", "score": 0.91, "text": "struct CoalescePass"}
    monkeypatch.setattr(indexer, "search", lambda query, k=5, where=None, index_dir=None: [chunk])
    result = CliRunner().invoke(explain, ["nv.scalar-access", "--no-suite"])
    assert "lib/Dialect/TritonGPU/Transforms/Coalesce.cpp:25-105 [tritongpu-coalesce]" in result.output


def test_kb_list_shows_all_ids_and_fixes():
    result = CliRunner().invoke(kb, ["list", "--json"])
    rows = json.loads(result.stdout)
    from ladder.diagnoser.triage.fixes import FIXES

    assert len(rows) >= 28 and {r["id"] for r in rows if r["mechanical"]} == set(FIXES)  # 7 NVIDIA, 6 Ascend


def test_kb_check_passes():
    result = CliRunner().invoke(kb, ["check"])
    assert result.exit_code == 0 and "entries valid" in result.output
