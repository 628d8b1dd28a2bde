"""The bundled all-MiniLM-L6-v2 end to end: offline build and a query by meaning."""
from __future__ import annotations

import pytest

from ladder import indexer
from ladder.indexer.build import build


@pytest.mark.slow
def test_bundled_model_builds_offline_and_answers_a_paraphrase(toy_tree, index_dir, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    report = build([f"toy={toy_tree}"], index_dir=str(index_dir), embed_spec="minilm")
    assert report.embedded_chunks == report.chunks > 0
    # Words the guide does not use: only the dense model can connect them.
    hits = indexer.search("on-chip scratchpad too small for my tile", k=3, index_dir=str(index_dir),
                          where={"language": "markdown"})
    assert hits[0]["path"] == "docs/ascend_guide.md"
    assert "Unified buffer" in hits[0]["symbol"]
