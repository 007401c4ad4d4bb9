"""Probe suites for the alternation's workers (benchmarks/_harness/worker.py), whose side
misbehaves as its library says: a repository of the real harness and the probe suite, and
sides whose library is one module, ``probe_mode``, holding the side's ``MODE``."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.support import REPO_ROOT
from tools._lib.measure.workers import Side

PROBE = """
import os
import time

from probe_mode import MODE


class Fine:
    def time_sum(self):
        sum(range(200))


class Dies:
    def time_sum(self):
        if MODE == "dies":
            os._exit(7)
        sum(range(200))


class Hangs:
    def time_sum(self):
        if MODE == "hangs":
            time.sleep(3600)
        sum(range(200))


class Skips:
    def setup(self):
        if MODE == "skips":
            raise NotImplementedError("not on this side")

    def time_sum(self):
        sum(range(200))


class Tracked:
    def track_value(self):
        return 2.0 if MODE == "dies" else 1.0

    track_value.unit = "GB/s"


# A track whose side reports what no measurement is (its MODE names the value).
NOT_MEASUREMENTS = {"nan": float("nan"), "inf": float("inf"), "zero": 0.0, "negative": -2.0}


class Reports:
    def track_value(self):
        return NOT_MEASUREMENTS.get(MODE, 1.0)

    track_value.unit = "GB/s"


# A track of a large rate (a GPU's GB/s) whose side hangs after its first call.
class TrackHangs:
    calls = 0

    def track_gbps(self):
        TrackHangs.calls += 1
        if MODE == "hangs" and TrackHangs.calls > 1:
            time.sleep(3600)
        return 5e4

    track_gbps.unit = "GB/s"
"""
FINE = "bench_probe.Fine.time_sum"


def make_probe_repo(root: Path) -> Path:
    """A repository whose suites are the harness and the probe, beside two libraries."""
    repo = root / "repo"
    (repo / "benchmarks").mkdir(parents=True)
    for name in ("__init__.py", "_names.py", "_harness"):
        (repo / "benchmarks" / name).symlink_to(REPO_ROOT / "benchmarks" / name)
    (repo / "benchmarks" / "bench_probe.py").write_text(PROBE)
    return repo


def side(root: Path, mode: str) -> Side:
    library = root / f"library-{mode}"
    library.mkdir(exist_ok=True)
    (library / "probe_mode.py").write_text(f"MODE = {mode!r}\n")
    return Side(mode, Path(sys.executable), library)
