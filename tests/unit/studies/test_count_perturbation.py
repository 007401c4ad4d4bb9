"""The count-perturbation study without valgrind: each variant's edits apply to the tree as
it stands and leave Python that compiles, a missing anchor says where to look, and the
shifts between two sets of counts are summed up against the gate's count factor. Its
figures come from running it on an idle machine (docs/explanation/measurement.md,
"Instruction counts")."""

from __future__ import annotations

import ast
import json

import pytest

from tools._lib.base.cli import ExternalFailure
from tools.studies import count_perturbation as study


@pytest.mark.parametrize("name", sorted(study.VARIANTS))
def test_each_variant_edits_the_tree_into_python_that_compiles(tmp_path, name):
    copy = study.edited_copy(tmp_path / "copy", study.VARIANTS[name])
    for edit in study.VARIANTS[name]:
        text = (copy / edit.path).read_text()
        assert edit.replacement in text
        ast.parse(text)
    edited = {edit.path for edit in study.VARIANTS[name]}
    for path in (study.COUNTER, study.HARNESS, "benchmarks/_harness/callgrind.py"):
        if path not in edited:  # the others are copied as they are
            assert (copy / path).read_text() == (study.REPO_ROOT / path).read_text()


def test_an_anchor_no_longer_in_the_tree_is_named(tmp_path):
    gone = study.Edit(study.COUNTER, "a line the counter never had\n", "")
    with pytest.raises(ExternalFailure, match=r"holds 0 of the study's anchor.*never had"):
        study.edited_copy(tmp_path / "copy", (gone,))


def test_shifts_count_the_rows_past_the_gates_count_factor_both_ways():
    base = {"a": 1000.0, "b": 1000.0, "c": 1000.0, "d": 1000.0}
    other = {"a": 1000.0, "b": 1015.0, "c": 985.0, "d": 1005.0, "only-here": 1.0}
    shifted = study.shifts(base, other)
    assert shifted["rows"] == 4 and shifted["unchanged"] == 1
    assert shifted["largest_rise_row"] == "b" and shifted["largest_rise_percent"] == 1.5
    assert shifted["largest_fall_row"] == "c" and shifted["largest_fall_percent"] == -1.5
    assert shifted["risen_past_count_factor"] == 1 and shifted["fallen_as_far"] == 1
    assert shifted["median_abs_percent"] == 1.0
    assert study.shifts(base, {})["rows"] == 0


def test_phase_sums_add_each_phase_over_the_children():
    lines = '{"switch": 1.0, "counted": 0.25}\n{"switch": 0.96, "counted": 0.35}\n'
    assert study.phase_sums(lines) == {"switch": 2.0, "counted": 0.6}  # rounded to 0.1 s
    assert study.phase_sums("") == {}


def test_a_variant_that_fails_keeps_the_variants_counted_before_it(tmp_path, monkeypatch):
    def count_variant(name, cases):
        if name == "unused-import":
            raise ExternalFailure("counting unused-import failed: valgrind died")
        return {"seconds": 1.0, "cases": 2, "counts": {"a": 100.0, "b": 200.0}}

    out = tmp_path / "figures.json"
    monkeypatch.setattr(study, "count_variant", count_variant)
    argv = ["count_perturbation", "--variant", "as-is-again", "--variant", "unused-import"]
    monkeypatch.setattr("sys.argv", [*argv, "--out", str(out)])
    with pytest.raises(ExternalFailure, match="unused-import failed"):
        study.main()
    kept = json.loads(out.read_text())
    assert set(kept["variants"]) == {"as-is", "as-is-again"}
    assert kept["variants"]["as-is-again"]["against_as_is"]["unchanged"] == 2
