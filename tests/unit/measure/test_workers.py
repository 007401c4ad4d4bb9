"""The tools' end of the worker protocol (tools/_lib/measure/workers.py) against real processes: a
worker that answers half a line, a line that is not an answer, two answers at once, a value
that is no measurement, and a track that hangs; each ends its row with the reason within
the row's bound, and the comparison goes on."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from tests.support.probe_workers import FINE, side
from tools._lib.measure.alternation import measure_rows
from tools._lib.measure.workers import Side, SideFailed, Worker


@pytest.fixture(autouse=True)
def quick(quick_alternation):
    """Every test here measures one round of two pairs a row (tests/conftest.py)."""


def scripted_worker(root: Path, output: str) -> Worker:
    """A started worker whose process (in place of benchmarks/_harness/worker.py) writes
    ``output`` at once, then says nothing more for half a minute."""
    repo = root / "scripted"
    (repo / "benchmarks" / "_harness").mkdir(parents=True)
    (repo / "benchmarks" / "__init__.py").write_text("")
    (repo / "benchmarks" / "_harness" / "__init__.py").write_text("")
    (repo / "benchmarks" / "_harness" / "worker.py").write_text(
        f"import sys, time\nsys.stdout.write({output!r})\nsys.stdout.flush()\ntime.sleep(30)\n"
    )
    worker = Worker(repo, Side("scripted", Path(sys.executable), repo), root / "worker.log")
    worker.start()
    return worker


# ------------------------------------------------------------- an answer and its bound


def test_half_an_answer_is_given_up_on_within_the_bound(tmp_path):
    worker = scripted_worker(tmp_path, '{"status": "rea')
    begun = time.monotonic()
    with pytest.raises(SideFailed, match="no answer in 2 s"):
        worker.receive(2.0)
    assert time.monotonic() - begun < 4
    assert worker.process is None  # stopped, not left hanging


@pytest.mark.parametrize("line", ["not json at all\n", '{"value": 1}\n', "[1]\n", "\xff\n"])
def test_a_line_that_is_not_an_answer_fails_the_side_not_the_run(tmp_path, line):
    worker = scripted_worker(tmp_path, line)
    with pytest.raises(SideFailed, match="scripted sent a line that is not an answer"):
        worker.receive(5.0)
    assert worker.process is None


def test_two_answers_written_at_once_are_both_read_within_the_bound(tmp_path):
    both = '{"status": "ready", "seconds": 0.1, "unit": "seconds"}\n{"status": "closed"}\n'
    worker = scripted_worker(tmp_path, both)
    assert worker.receive(5.0)["status"] == "ready"
    begun = time.monotonic()
    assert worker.receive(5.0)["status"] == "closed"
    assert time.monotonic() - begun < 1  # already read: no wait for more
    worker.stop()


# ------------------------------------------------------------- values that are no measurement


@pytest.mark.parametrize(
    ("value", "at"),
    [
        ("nan", "after"),
        ("inf", "after"),
        ("negative", "after"),
        ("zero", "after"),
        ("zero", "before"),
    ],
)
def test_a_value_that_is_no_measurement_ends_its_row_saying_so(probe_repo, tmp_path, value, at):
    sides = (side(tmp_path, "ok"), side(tmp_path, value))
    sides = sides if at == "after" else sides[::-1]
    found = measure_rows(probe_repo, sides, ["bench_probe.Reports.track_value", FINE])
    bad = found["bench_probe.Reports.track_value"]
    assert bad.paired is None, bad
    assert f"at {value}" in bad.why and "not a finite positive number" in bad.why
    assert found[FINE].paired is not None  # the comparison goes on


# ------------------------------------------------------------- a track's bound


@pytest.mark.timeout(90)
def test_a_hung_track_of_a_large_rate_is_given_up_on_within_its_bound(probe_repo, tmp_path):
    """A track's value is a rate, not its call's seconds: a 5e4 GB/s track that hangs is
    given up on after its block's bound, not 5e5 seconds."""
    sides = (side(tmp_path, "ok"), side(tmp_path, "hangs"))
    begun = time.monotonic()
    found = measure_rows(probe_repo, sides, ["bench_probe.TrackHangs.track_gbps", FINE])
    assert "hangs gave no answer in" in found["bench_probe.TrackHangs.track_gbps"].why
    assert found[FINE].paired is not None
    assert time.monotonic() - begun < 60
