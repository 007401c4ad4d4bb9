"""The count floors' rule, on made-up figures, and asv.conf.json held to the floors the
count-perturbation study's own figures give."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from tests.support import REPO_ROOT
from tools._lib.asv.private import config_thresholds, regressions_threshold
from tools._lib.measure.comparison import COUNT_FACTOR
from tools.studies import count_floors

STUDY = REPO_ROOT / "docs" / "studies" / "data"
FIGURES = sorted(STUDY.glob("*-count-perturbation*.json"))
STACK = "stack/stack/float32/contiguous/(12, 8, 16, 16)"
ADD = "add/functional/float32/contiguous/(64, 512)"


def figures(**layouts: dict[str, float]) -> dict:
    return {"counts": {"as-is": {STACK: 1000.0, ADD: 1000.0}, **layouts}}


def test_every_layout_but_the_control_is_a_draw_of_how_far_a_count_moves():
    moves = count_floors.layout_moves(
        figures(**{"as-is-again": {STACK: 1000.0}, "longer-path": {STACK: 986.0, ADD: 1001.0}})
    )
    assert moves == {STACK: [pytest.approx(-0.014)], ADD: [pytest.approx(0.001)]}
    with pytest.raises(ValueError, match="no layout"):
        count_floors.layout_moves(figures(**{"as-is-again": {STACK: 1000.0}}))
    with pytest.raises(ValueError, match="as-is"):
        count_floors.layout_moves({"counts": {"longer-path": {}}})


def test_a_floor_is_twice_the_largest_move_in_half_per_cent_steps_never_below_1_01():
    assert count_floors.floor_of([0.014, -0.003]) == 1.03  # 2.8%, up to the next step
    assert count_floors.floor_of([-0.0125]) == 1.025  # 2.5% exactly: that step
    assert count_floors.floor_of([0.002, -0.001]) == COUNT_FACTOR  # 0.4%: the counts' own
    assert count_floors.floor_of([0.0]) == COUNT_FACTOR


def test_a_held_out_layout_past_a_floor_is_named_either_way():
    floors = {STACK: 1.03, ADD: 1.01}
    held_out = {STACK: [-0.031], ADD: [0.009]}
    assert count_floors.crossings(floors, held_out) == [f"{STACK}: -3.10% (floor 1.03)"]


def test_an_entry_matches_its_row_alone_where_asv_reads_it():
    label = "bench_instructions.Stack.track_instructions('cpu', 'stack float32 contiguous (1, 2)')"
    other = label.replace("(1, 2)", "(1, 20)")
    entries = count_floors.threshold_entries({STACK: 1.045, ADD: 1.01}, {label: STACK, other: ADD})
    assert list(entries.values()) == [0.045]
    thresholds = {"^bench_instructions\\.": 0.01, **entries}
    assert regressions_threshold(thresholds, label) == 0.045
    assert regressions_threshold(thresholds, other) == 0.01


def test_asv_conf_holds_the_floors_the_studys_own_figures_give():
    """Every count row's entry in asv.conf.json is what the tool prints from the study's
    figures, no more and no fewer: a renamed count row, an edited floor or new figures
    without their entries fail here."""
    assert len(FIGURES) >= 2, FIGURES
    floors = count_floors.count_floors(count_floors.moves_of(FIGURES))
    expected = count_floors.threshold_entries(floors, count_floors.count_rows())
    configured = {
        pattern: value
        for pattern, value in config_thresholds(REPO_ROOT).items()
        if pattern.startswith("^bench_instructions\\.") and pattern.endswith("$")
    }
    assert configured == expected
    assert max(expected.values()) < 0.1 and len(expected) < len(count_floors.count_rows()) / 2


def test_figures_that_are_not_the_studys_are_refused_in_one_line(tmp_path):
    bad = tmp_path / "figures.json"
    bad.write_text(json.dumps({"counts": {"longer-path": {}}}))
    done = subprocess.run(
        [sys.executable, "-m", "tools.studies.count_floors", str(bad)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 4, done.stderr
    assert re.fullmatch(r"count_floors: .*figures\.json: no counts of as-is.*\n", done.stderr)
