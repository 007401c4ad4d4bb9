"""The noisy host on demand: its schedule comes from the seed alone, holds busy and calm
spells of seconds, and its processes end with the block that started them or at their
deadline, whichever comes first. What it does to timings is a measurement
(tools/studies/host_speed.py --noise)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from tests.support import REPO_ROOT
from tools._lib.measure import antagonist


def spells(shares: list[float]) -> list[int]:
    """The lengths of the runs of burning and quiet slots."""
    runs, previous = [], None
    for share in shares:
        burning = share > 0
        if burning == previous:
            runs[-1] += 1
        else:
            runs.append(1)
        previous = burning
    return runs


def test_the_schedule_is_the_seeds_and_holds_spells_of_seconds():
    first, again = antagonist.schedule(3, 2000), antagonist.schedule(3, 2000)
    assert first == again and first != antagonist.schedule(4, 2000)
    burning = [share for share in first if share]
    assert 0.3 < len(burning) / len(first) < 0.7
    assert all(antagonist.BURN_SHARE[0] <= share <= antagonist.BURN_SHARE[1] for share in burning)
    assert max(spells(first)) >= 8  # two seconds or more in one state


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_its_processes_end_with_the_block(monkeypatch):
    started = []
    real = antagonist.start

    def recorded(*args):
        started.extend(real(*args))
        return started

    monkeypatch.setattr(antagonist, "start", recorded)
    with antagonist.noise("mixed", seed=1, seconds=120):
        time.sleep(0.5)
        assert len(started) == len(os.sched_getaffinity(0)) + 1  # a burner a core, a streamer
        assert all(process.poll() is None for process in started)
    assert all(process.poll() is not None for process in started)
    assert not [p.pid for p in started if alive(p.pid)]


def test_a_burner_ends_by_itself_at_its_deadline():
    now = time.time()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tools._lib.measure.antagonist",
            "burn",
            "0",
            "5",
            str(now),
            str(now + 1.0),
        ],
        cwd=REPO_ROOT,
        timeout=30,
    )
    assert done.returncode == 0 and time.time() - now < 10
