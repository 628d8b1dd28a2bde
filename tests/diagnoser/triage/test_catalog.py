"""The catalog validates, keeps its stable ids, and its references point at real code."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from ladder.diagnoser.triage.catalog import (STABLE_IDS, CatalogError, check_compiler_refs, known_pass_names,
                                      load_catalog, load_entry, render)
from ladder.diagnoser.triage.detectors import DETECTORS
from ladder.diagnoser.triage.fixes import FIXES

COMPILER_TREE = Path(os.environ.get("LADDER_COMPILER_TREE", "/work/src/triton-ascend"))


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def test_every_stable_id_has_a_valid_entry(catalog):
    assert set(STABLE_IDS) <= set(catalog)
    assert len(STABLE_IDS) == 31


@pytest.mark.parametrize("pattern_id", STABLE_IDS)
def test_entry_names_a_detector_that_emits_it(catalog, pattern_id):
    entry = catalog[pattern_id]
    assert entry.detectors
    for name in entry.detectors:
        assert pattern_id in DETECTORS[name].patterns


@pytest.mark.parametrize("pattern_id", STABLE_IDS)
def test_entry_has_a_fix_snippet_and_compiler_references(catalog, pattern_id):
    entry = catalog[pattern_id]
    assert entry.fix["before"].strip() != entry.fix["after"].strip()
    assert entry.compiler and all(ref.get("path") or ref.get("pass") for ref in entry.compiler)
    assert 0 < entry.confidence <= 1


def test_every_detector_pattern_is_in_the_catalog(catalog):
    for name, detector in DETECTORS.items():
        assert set(detector.patterns) <= set(catalog), name


def test_mechanical_entries_and_fixes_agree(catalog):
    assert {p.id for p in catalog.values() if p.mechanical} == set(FIXES)


@pytest.mark.skipif(not COMPILER_TREE.is_dir(), reason="compiler source tree not available")
def test_compiler_references_resolve_in_the_source_tree(catalog):
    assert check_compiler_refs(catalog, COMPILER_TREE) == []


@pytest.mark.skipif(not COMPILER_TREE.is_dir(), reason="compiler source tree not available")
def test_pass_names_are_cli_names_from_passes_td():
    names = known_pass_names(COMPILER_TREE)
    assert {"tritongpu-coalesce", "tritongpu-pipeline", "triton-to-unstructure"} <= names


def test_render_shows_symptom_detection_and_fix(catalog):
    text = render(catalog["nv.tiny-block"])
    assert "Symptom:" in text and "Detect:" in text and "before:" in text and "after:" in text


def _entry(tmp_path: Path, **changes) -> Path:
    data = yaml.safe_load(Path(load_catalog()["nv.tiny-block"].path).read_text())
    data.update(changes)
    path = tmp_path / f"{data['id']}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def test_entry_whose_file_name_is_not_its_id_is_rejected(tmp_path):
    path = _entry(tmp_path)
    path.rename(tmp_path / "other.yaml")
    with pytest.raises(CatalogError, match="file name must be the id"):
        load_entry(tmp_path / "other.yaml")


def test_unknown_detector_is_rejected(tmp_path):
    path = _entry(tmp_path, detect=[{"rung": 1, "level": "source", "detector": "nope", "signal": "x"}])
    with pytest.raises(CatalogError, match="does not exist"):
        load_entry(path)


def test_detector_that_never_emits_the_id_is_rejected(tmp_path):
    path = _entry(tmp_path, detect=[{"rung": 1, "level": "source", "detector": "atomics", "signal": "x"}])
    with pytest.raises(CatalogError, match="never emits"):
        load_entry(path)


def test_ir_signal_must_name_a_fact_kind(tmp_path):
    path = _entry(tmp_path, id="nv.scalar-access",
                  detect=[{"rung": 3, "level": "ir", "detector": "ir_access", "fact": "vibes", "signal": "x"}])
    with pytest.raises(CatalogError, match="not a rung-3 fact kind"):
        load_entry(path)


def test_rung_must_match_level(tmp_path):
    path = _entry(tmp_path, detect=[{"rung": 3, "level": "source", "detector": "block_sizes", "signal": "x"}])
    with pytest.raises(CatalogError, match="rung must be 1"):
        load_entry(path)


def test_mechanical_fix_needs_a_rewrite(tmp_path):
    path = _entry(tmp_path, id="nv.oversized-block")
    data = yaml.safe_load(path.read_text())
    data["detect"] = [{**data["detect"][0], "detector": "block_sizes"}]  # the source rule emits both ids
    data["fix"]["mechanical"] = True
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    with pytest.raises(CatalogError, match="no rewrite"):
        load_entry(path)


def test_line_range_must_be_ordered(tmp_path):
    path = _entry(tmp_path, compiler=[{"path": "lib/Analysis/AxisInfo.cpp", "lines": [20, 10]}])
    with pytest.raises(CatalogError, match="start <= end"):
        load_entry(path)


def test_absolute_compiler_path_is_rejected(tmp_path):
    path = _entry(tmp_path, compiler=[{"path": "/etc/passwd"}])
    with pytest.raises(CatalogError, match="relative"):
        load_entry(path)


def test_missing_field_is_named(tmp_path):
    path = _entry(tmp_path)
    data = yaml.safe_load(path.read_text())
    del data["symptom"]
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(CatalogError, match="missing field `symptom`"):
        load_entry(path)


def test_duplicate_ids_are_rejected(tmp_path):
    first = _entry(tmp_path)
    (tmp_path / "b.yaml").write_text(first.read_text())
    with pytest.raises(CatalogError):
        load_catalog(tmp_path)


def test_reference_past_the_end_of_a_file_is_reported(tmp_path, catalog):
    tree = tmp_path / "tree"
    (tree / "lib" / "Analysis").mkdir(parents=True)
    (tree / "lib" / "Analysis" / "AxisInfo.cpp").write_text("one line\n")
    problems = check_compiler_refs({"nv.index-div-mod": catalog["nv.index-div-mod"]}, tree)
    assert any("past the end" in p for p in problems)
