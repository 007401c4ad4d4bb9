"""Throughput tracks that read their class's time_ row instead of timing the call again.

GFLOP/s, GB/s and % of peak divide an amount of the case (its FLOPs, its bytes) by seconds
per call, which the class's ``time_`` row measured at the same params moments before, in
the same asv run. asv runs each benchmark in a process of its own and gives none a way to
read what another measured, so two benchmark types go ahead of asv_runner's own in its
list of types (``asv_runner.benchmarks.benchmark_types``, the list its benchmark plugins
extend):

- :class:`RecordedTime`, for every ``time_`` row: a row of a class with throughput tracks
  leaves asv_runner's result (seconds per call of each sample, calls per sample) in the
  run's folder (``TENSOROPS_RUN_DIR``), for this commit and environment, as it hands the
  same result to asv, one list of samples per round. A round removes the record before it
  times, so a row that failed leaves none.
- :class:`DerivedTrack`, for ``track_gflops``, ``track_gbps`` and ``track_percent_of_peak``:
  where that record is there, the class sets up only its controls and its case
  (``OpBenchmark.set_up_case``: no inputs, no warm-up, which for a row of seconds a call
  cost more than the timing) and answers one value per sample, of which asv keeps the
  median and interval as it does for the time_ row. Without a record (the track asked for
  alone, its time_ row skipped or failed, asv run by hand without the tools' folder) the
  track sets up and times the call itself.

asv runs a class's rows in name order within a round (``time_`` before ``track_``), so a
track's samples are the very samples of its time_ row's result (:func:`unread_rounds`;
docs/explanation/measurement.md, "Tracks that read the time_ row").
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

from asv_runner.benchmarks import benchmark_types
from asv_runner.benchmarks.time import TimeBenchmark
from asv_runner.benchmarks.track import TrackBenchmark

from .run_folder import commit_folder, write_whole
from .tracks import _Tracks

DERIVED_TRACKS = ("track_gflops", "track_gbps", "track_percent_of_peak")


def record_path(benchmark: str, params: tuple) -> Path | None:
    """Where the time_ row of ``benchmark``'s class leaves its samples at ``params`` in
    this run, for this commit and environment; None outside a run the tools started."""
    folder, environment = commit_folder(), os.environ.get("ASV_ENV_NAME")
    if folder is None or not environment:
        return None
    digest = hashlib.sha256(f"{row_class(benchmark)}{params!r}".encode()).hexdigest()[:24]
    return folder / "timed" / environment / f"{digest}.json"


def row_class(benchmark: str) -> str:
    """asv's name of a benchmark, less its method: the class its rows share."""
    return benchmark.rsplit(".", 1)[0]


def write_record(path: Path, benchmark: str, params: tuple, result: dict[str, Any]) -> None:
    write_whole(path, json.dumps({"class": row_class(benchmark), "params": repr(params), **result}))


def read_record(path: Path, benchmark: str, params: tuple) -> tuple[list[list[float]], int] | None:
    """The rounds of samples and the number the record holds, if it is this class's at
    these params."""
    try:
        record = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if record.get("class") != row_class(benchmark) or record.get("params") != repr(params):
        return None
    rounds, number = record.get("rounds"), record.get("number")
    if not rounds or not all(rounds) or not isinstance(number, int):
        return None
    return [[float(s) for s in samples] for samples in rounds], number


def unread_rounds(path: Path, track: str, rounds: list[list[float]]) -> list[float]:
    """The samples of the rounds ``track`` has not read yet, marked read: asv runs a
    track in its last round only (each of its samples then is one of the time_ row's),
    unless told a number of rounds for every row (``--attribute rounds=N``), when the
    track runs after each of the time_ row's rounds and reads that round's."""
    mark = path.with_name(f"{path.stem}.{track}.read")
    try:
        read = int(mark.read_text())
    except (OSError, ValueError):
        read = 0
    mark.write_text(str(len(rounds)))
    return [s for samples in rounds[read:] for s in samples]


class RecordedTime(TimeBenchmark):
    """asv_runner's time benchmark, leaving its result where its class's tracks read it."""

    def run(self, *param: Any) -> dict[str, Any]:
        params = tuple(self._current_params)
        path = None
        if isinstance(self.func.__self__, _Tracks):
            path = record_path(self.name, params)
        if path is None:
            return super().run(*param)
        earlier = read_record(path, self.name, params)
        path.unlink(missing_ok=True)
        result = super().run(*param)
        rounds = [*(earlier[0] if earlier else []), list(result["samples"])]
        write_record(path, self.name, params, {"rounds": rounds, "number": result["number"]})
        return result


class DerivedTrack(TrackBenchmark):
    """asv_runner's track benchmark, answering from its time_ row's record where one is."""

    name_regex = re.compile(f"^({'|'.join(DERIVED_TRACKS)})$")

    def do_setup(self) -> bool:
        owner, params = self.func.__self__, tuple(self._current_params)
        path = None
        if isinstance(owner, _Tracks) and params not in self._skip_tuples:
            path = record_path(self.name, params)
        recorded = read_record(path, self.name, params) if path is not None else None
        samples = unread_rounds(path, self.name, recorded[0]) if recorded else []
        if not samples:
            return super().do_setup()
        try:
            owner.set_up_case(*self._build_params())
        except NotImplementedError as reason:
            print(f"asv: skipped: {reason!r} ")  # as asv_runner reports a skip in setup
            return True
        owner.timed = (samples, recorded[1])
        return False


def register() -> None:
    """Put the two types ahead of asv_runner's, once per process."""
    for kind in (DerivedTrack, RecordedTime):
        if kind not in benchmark_types:
            benchmark_types.insert(0, kind)
