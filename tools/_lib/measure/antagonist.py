"""A noisy host on demand: processes that steal the benchmark cores or the memory bandwidth
the way a busy shared host does, seeded and bounded in time, so every noise and power claim
can be checked on any machine, a quiet one included (``--noise PROFILE`` on the studies;
``python -m tools.studies.antagonist_alone`` alone).

- ``bursty``: a process per core, at the benchmarks' priority, all on one schedule drawn
  from the seed (so a benchmark cannot escape to an idle core). Time runs in quarter-second
  slots grouped into spells of one to six seconds; a spell is busy (most slots burn a random
  share of the slot) or calm (few do). A benchmark sharing a burning core runs at about
  half speed meanwhile: a one-sided drift that lasts seconds, the shape measured on the
  drifting hosts (docs/explanation/comparison.md, "A noisy host on
  demand").
- ``membw``: one process streaming a 256 MiB buffer into another in bursts of a random
  length, saturating the memory bandwidth the benchmarks share.
- ``mixed``: both.
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

SLOT_SECONDS = 0.25
SPELL_SLOTS = (4, 24)  # a spell lasts one to six seconds
BUSY_SPELL = 0.5  # the chance that a spell is busy
BURN_CHANCE = {True: 0.85, False: 0.15}  # per slot, in a busy spell and in a calm one
BURN_SHARE = (0.3, 1.0)  # of the slot, when it burns
# A burning slot alternates busy and asleep every half millisecond, in the slot's share: a
# burner busy for the whole slot would leave most of a benchmark's calls whole (the
# scheduler preempts it in slices of milliseconds, which a median of calls discards), not
# slow every call the way a busy host does.
DUTY_PERIOD = 0.0005
STREAM_BYTES = 256 * 2**20
STREAM_SPELL_SECONDS = (0.5, 4.0)


@dataclass(frozen=True)
class Profile:
    name: str
    burns_cores: bool
    streams_memory: bool


PROFILES = {
    "bursty": Profile("bursty", True, False),
    "membw": Profile("membw", False, True),
    "mixed": Profile("mixed", True, True),
}


def schedule(seed: int, slots: int) -> list[float]:
    """The share of each quarter-second slot to burn (0: none), in spells of busy and calm
    slots; the same for every process given the same seed."""
    draw = random.Random(seed)
    shares: list[float] = []
    while len(shares) < slots:
        busy = draw.random() < BUSY_SPELL
        for _ in range(draw.randint(*SPELL_SLOTS)):
            burns = draw.random() < BURN_CHANCE[busy]
            shares.append(draw.uniform(*BURN_SHARE) if burns else 0.0)
    return shares[:slots]


def burn_core(core: int, seed: int, started: float, deadline: float) -> None:
    """Steal ``core`` on the shared schedule, slot boundaries on the wall clock, until
    ``deadline``: in a burning slot, busy its share of every half millisecond."""
    with contextlib.suppress(OSError):
        os.sched_setaffinity(0, {core})
    shares = schedule(seed, int((deadline - started) / SLOT_SECONDS) + 1)
    while (now := time.time()) < deadline:
        slot = int((now - started) / SLOT_SECONDS)
        slot_end = started + (slot + 1) * SLOT_SECONDS
        share = shares[slot]
        while share and time.time() < slot_end:
            until = time.perf_counter() + share * DUTY_PERIOD
            while time.perf_counter() < until:
                pass
            time.sleep((1 - share) * DUTY_PERIOD)
        time.sleep(max(0.0, slot_end - time.time()))


def stream_memory(seed: int, deadline: float) -> None:
    """Copy a 256 MiB buffer back and forth in spells of streaming and rest."""
    draw = random.Random(seed)
    source, target = bytearray(STREAM_BYTES), bytearray(STREAM_BYTES)
    while time.time() < deadline:
        until = time.time() + draw.uniform(*STREAM_SPELL_SECONDS)
        if draw.random() < BUSY_SPELL:
            while time.time() < min(until, deadline):
                target[:] = source
        else:
            time.sleep(max(0.0, min(until, deadline) - time.time()))


def start(profile: Profile, seed: int, seconds: float) -> list[subprocess.Popen]:
    """The profile's processes, each a ``python -m tools._lib.measure.antagonist`` of its own (so
    nothing of the caller's process is copied into them)."""
    started = time.time()
    deadline = started + seconds
    jobs = []
    if profile.burns_cores:
        jobs += [
            ["burn", core, seed, started, deadline] for core in sorted(os.sched_getaffinity(0))
        ]
    if profile.streams_memory:
        jobs.append(["stream", seed * 1000 + 999, deadline])
    root = Path(__file__).resolve().parents[3]  # the repository, where tools is a package
    return [
        subprocess.Popen(
            [sys.executable, "-m", "tools._lib.measure.antagonist", *map(str, job)],
            cwd=root,
            start_new_session=True,
            stdin=subprocess.DEVNULL,
        )
        for job in jobs
    ]


@contextlib.contextmanager
def noise(name: str | None, seed: int = 0, seconds: float = 4 * 3600) -> Iterator[None]:
    """The profile ``name`` running for the block's duration (at most ``seconds``);
    nothing when ``name`` is None."""
    if name is None:
        yield
        return
    processes = start(PROFILES[name], seed, seconds)
    try:
        yield
    finally:
        for process in processes:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def main() -> None:
    kind, *values = sys.argv[1:]
    if kind == "burn":
        core, seed, started, deadline = values
        burn_core(int(core), int(seed), float(started), float(deadline))
    else:
        seed, deadline = values
        stream_memory(int(seed), float(deadline))


if __name__ == "__main__":
    main()
