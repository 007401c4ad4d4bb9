"""Each machine's floors: how one is made from no-op comparisons, what a row is judged at
where its host has floors, where it has none, and where its floor is above the factor; a
machine's file keeps every host's floors, and floors are made again from kept samples."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.support import REPO_ROOT
from tools._lib.base.cli import BadInput
from tools._lib.measure.host_floors import (
    DEEP_MIN_FLOOR,
    Floors,
    deep_floor,
    no_floors,
    read_floors,
    write_floors,
)
from tools._lib.measure.no_op_floors import MIN_FLOOR, floor_of, samples_of
from tools._lib.measure.paired import Paired
from tools.floors import TIMED

ROW = "bench_a.A.time_x('cpu',)"


def test_a_floor_stands_four_times_the_worst_no_op_spread_above_1_and_never_below_the_minimum():
    assert floor_of([1.012, 1.021, 0.99]) == 1.10  # 1 + 4 * 0.021 + 0.01, rounded up
    assert floor_of([1.01, 0.98]) == 1.10  # 0.98 either way: 1/0.98 = 1.0204
    assert floor_of([1.001, 0.998]) == MIN_FLOOR


def test_a_row_is_judged_at_its_floor_at_the_factor_without_one_and_not_above_the_factor():
    floors = Floors("host", 4, {ROW: 1.06, "b": 1.30})
    assert floors.threshold(ROW, 1.15) == 1.06
    assert floors.threshold("other", 1.15) == 1.15
    assert floors.threshold("b", 1.15) is None  # not judged here
    assert no_floors("host").threshold(ROW, 1.15) == 1.15


def test_a_machines_file_keeps_every_hosts_floors(tmp_path):
    path = tmp_path / "m" / "floors.json"
    assert read_floors(path, "EPYC").runs == 0  # no file yet: no floors
    write_floors(path, Floors("EPYC", 4, {ROW: 1.05}), {"measured": "then"})
    write_floors(path, Floors("Xeon", 4, {ROW: 1.20}), {"measured": "later"})
    assert read_floors(path, "EPYC").by_row == {ROW: 1.05}
    assert read_floors(path, "Xeon").threshold(ROW, 1.15) is None
    assert read_floors(path, "another").runs == 0
    assert json.loads(path.read_text())["hosts"]["Xeon"]["measured"] == "later"
    path.write_text('{"hosts": {"EPYC": {"floors": 3}}}')
    with pytest.raises(BadInput, match="is not a floors file"):
        read_floors(path, "EPYC")


def floors_file(path, floors: dict) -> None:
    """A machine's floors file as tools.floors writes it, with these floors for EPYC."""
    hosts = {"EPYC": {"runs": 4, "estimator": 3, "floors": floors}}
    path.write_text(json.dumps({"version": 1, "hosts": hosts}))


@pytest.mark.parametrize(
    "floor", [0, -1, 0.5, 1.0, float("nan"), float("inf"), 10.5, "1.1", True, None]
)
def test_a_floor_that_could_pass_a_regression_or_fail_every_no_op_is_refused_at_read(
    tmp_path, floor
):
    """A floor of 0 would pass a 2x slowdown, 0.5 fail every no-op, NaN read as not judged
    (and the triage dismiss the row's steps), 1.0 set a threshold of no change at all."""
    path = tmp_path / "floors.json"
    floors_file(path, {ROW: floor, "bench_a.A.time_y('cpu',)": 1.08})
    with pytest.raises(BadInput) as refused:
        read_floors(path, "EPYC")
    (line,) = str(refused.value).splitlines()
    assert ROW in line and "above 1.0 and at most 10" in line and "time_y" not in line


def test_every_bad_floor_is_named_in_the_one_line(tmp_path):
    path = tmp_path / "floors.json"
    floors_file(path, {"a": 0, "b": -1, "c": float("nan"), "d": 1.2})
    with pytest.raises(BadInput) as refused:
        read_floors(path, "EPYC")
    (line,) = str(refused.value).splitlines()
    assert all(f"{name!r}" in line for name in "abc") and "'d'" not in line


def test_floors_of_another_paired_estimate_are_not_used(tmp_path, capsys):
    path = tmp_path / "floors.json"
    write_floors(path, Floors("EPYC", 4, {ROW: 1.05}), {"measured": "then"})
    assert read_floors(path, "EPYC").by_row == {ROW: 1.05}
    written = json.loads(path.read_text())
    del written["hosts"]["EPYC"]["estimator"]  # as written before the place was taken out
    path.write_text(json.dumps(written))
    assert read_floors(path, "EPYC").threshold(ROW, 1.15) == 1.15  # the factor, not 1.05
    assert "measured with another paired estimate" in capsys.readouterr().err
    path.write_text('{"hosts": {"EPYC": {"floors": 3}}}')
    with pytest.raises(BadInput, match="is not a floors file"):
        read_floors(path, "EPYC")


def test_floors_are_measured_for_the_timed_cpu_rows_not_the_counts():
    picked = [
        "bench_reduction.Softmax.time_softmax('cpu', 'float32', (1, 2), 'functional')",
        "bench_linear.Linear.track_gflops('cpu', 'float32', (1, 2), 'functional')",
    ]
    left = [
        "bench_instructions.Cat.track_instructions('cpu', 'cat float32 contiguous (1, 2)')",
        "bench_reduction.Softmax.time_softmax('cuda', 'float32', (1, 2), 'functional')",
        "bench_reduction.Softmax.peakmem_softmax('cpu', 'float32', (1, 2), 'functional')",
    ]
    assert [row for row in picked + left if TIMED.search(row)] == picked


def test_floors_are_made_again_from_kept_samples_without_measuring(tmp_path):
    row = "bench_creation.Zeros.time_zeros('cpu', (32, 512, 768), 'on_device')"
    placed = [2.0, 0.5] * 4  # a place in the ABBA order worth 2x, and no change
    runs = [
        {row: Paired(row, "seconds", (1.0,) * 8, tuple(r * s for r in placed), (8,))}
        for s in (1.0, 1.02)
    ]
    samples, out = tmp_path / "samples.json", tmp_path / "floors.json"
    samples.write_text(json.dumps(samples_of(runs)))
    command = [sys.executable, "-m", "tools.floors", "--machine", "m", "--out", str(out)]
    done = subprocess.run(
        [*command, "--from-samples", str(samples), "--rows", r"bench_creation\.Zeros"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    (entry,) = json.loads(out.read_text())["hosts"].values()
    assert entry["floors"] == {row: floor_of([1.0, 1.02])} == {row: 1.09}
    assert entry["runs"] == 2 and entry["from_samples"] == "samples.json"
    samples.write_text("[{}]")
    done = subprocess.run(
        [*command, "--from-samples", str(samples)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 4 and "fewer than two no-op runs" in done.stderr


def floors_command(tmp_path, *args: str):
    command = [sys.executable, "-m", "tools.floors", "--machine", "m"]
    return subprocess.run(
        [*command, "--out", str(tmp_path / "floors.json"), *args],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize(
    ("before", "after", "rounds"),
    [((0.0, 1.0), (1.0, 1.0), (2,)), ((1.0, "NaN"), (1.0, 1.0), (2,)), ((1.0,), (1.0, 1.0), (2,))],
)
def test_samples_that_are_no_measurement_are_bad_input_not_a_crash(tmp_path, before, after, rounds):
    """0, NaN or unequal sides in a samples file: exit 4 in one line, not 3."""
    row = "bench_creation.Zeros.time_zeros('cpu', (32, 512, 768), 'on_device')"
    one = {row: {"before": before, "after": after, "rounds": rounds, "unit": "seconds"}}
    samples = tmp_path / "samples.json"
    samples.write_text(json.dumps([one, one]).replace('"NaN"', "NaN"))
    done = floors_command(tmp_path, "--from-samples", str(samples))
    assert done.returncode == 4, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert "is not a samples file" in line


def test_a_rows_option_that_is_no_regex_is_bad_input(tmp_path):
    done = floors_command(tmp_path, "--rows", "(")
    assert done.returncode == 4, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert "--rows" in line and "regular expression" in line


@pytest.mark.parametrize("tool", ["pr_gate", "releases"])
def test_a_floors_file_that_does_not_exist_is_bad_input_not_no_floors(tmp_path, tool):
    """A typo in ``--floors`` would judge every row at the factor without a word. (The
    other arguments are refused too, later: nothing is measured either way.)"""
    args = ["HEAD", "HEAD"] if tool == "pr_gate" else ["--commit", "no-such-commit"]
    done = subprocess.run(
        [sys.executable, "-m", f"tools.{tool}", *args, "--floors", str(tmp_path / "nope.json")],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 4, done.stdout + done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert "nope.json" in line and "no such file" in line


def test_a_floor_at_depth_shrinks_in_proportion_to_the_rounds_above_its_margin():
    # (1.30 - 1.01) * 2 / 16 = 0.03625: 1.01 + 0.03625, rounded up
    assert deep_floor(1.30, 16) == 1.05
    assert deep_floor(1.10, 16) == DEEP_MIN_FLOOR == 1.03
    assert deep_floor(1.04, 16) == DEEP_MIN_FLOOR
    assert deep_floor(3.00, 16) == 1.26
    floors = Floors("AMD EPYC", 4, {"a": 1.10, "b": 1.30, "c": 3.00})
    assert floors.threshold_at("a", 1.15, 16) == 1.03
    assert floors.threshold("b", 1.15) is None and floors.threshold_at("b", 1.15, 16) == 1.05
    assert floors.threshold_at("c", 1.15, 16) is None  # 1.26 at depth: above the factor
    assert floors.threshold_at("unfloored", 1.15, 16) == 1.15
    assert floors.threshold_at("a", 1.15, None) == 1.10
    with pytest.raises(ValueError, match="no floors are checked at 9 rounds"):
        floors.threshold_at("a", 1.15, 9)
