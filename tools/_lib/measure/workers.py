"""The tools' end of the worker protocol (benchmarks/_harness/worker.py): a worker process per
side, one row's children on both sides set up at once and timed by turns, and every way a
side can fail (it dies, hangs, skips or refuses the row) turned into the reason, so nothing
waits forever."""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from tools._lib.asv.run import allocator_environment
from tools._lib.measure.comparison import is_measurement

# A block's length: short against the host's drift (seconds), long against the timer's
# and the pipe's cost (microseconds).
BLOCK_SECONDS = 0.02
# A setup (inputs, warm-up, a compile) may take this long; a block, its calls' time and
# this much more.
SETUP_SECONDS = 300.0
BLOCK_SLACK_SECONDS = 60.0


@dataclass(frozen=True)
class Side:
    """One side of a comparison: the interpreter (an asv environment's: its torch) and the
    ``src`` folder of the commit whose library it imports."""

    name: str
    python: Path
    library: Path


@dataclass(frozen=True)
class Timed:
    """One side pair's blocks of one row, in pair order, the row's unit, and how long the
    two sides took to set the row up (what a round spends besides its blocks)."""

    before: list[float]
    after: list[float]
    unit: str
    setup_seconds: float = 0.0


class SideFailed(Exception):
    """A side did not answer as the protocol says: it died, hung, or refused the row."""


class Worker:
    """One side's worker process, started on first use and again after it hangs."""

    def __init__(self, repo: Path, side: Side, log: Path):
        self.repo, self.side, self.log = repo, side, log
        self.process: subprocess.Popen | None = None
        self.pending = b""  # what the process wrote past the last answer read

    def start(self) -> None:
        env = allocator_environment(dict(os.environ))
        env["PYTHONPATH"] = str(self.side.library)
        self.pending = b""
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                [str(self.side.python), "-m", "benchmarks._harness.worker"],
                cwd=self.repo,
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                start_new_session=True,  # its children die with it
            )

    def send(self, **request) -> None:
        if self.process is None or self.process.poll() is not None:
            self.start()
        self.process.stdin.write((json.dumps(request) + "\n").encode())
        self.process.stdin.flush()

    def receive(self, timeout: float) -> dict:
        """The next answer, within ``timeout`` seconds whatever the process writes: read
        from the pipe unbuffered (a buffered line read waits for the rest of half a line,
        and keeps a second answer where no ``select`` sees it), and checked to be one."""
        deadline = time.monotonic() + timeout
        stream = self.process.stdout.fileno()
        while b"\n" not in self.pending:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([stream], [], [], left)[0]:
                self.stop()
                raise SideFailed(f"{self.side.name} gave no answer in {timeout:.0f} s")
            chunk = os.read(stream, 1 << 16)
            if not chunk:
                self.stop()
                raise SideFailed(f"{self.side.name}'s worker ended (see {self.log})")
            self.pending += chunk
        line, _, self.pending = self.pending.partition(b"\n")
        try:
            answer = json.loads(line)
        except ValueError:  # not JSON, or not UTF-8
            answer = None
        if not isinstance(answer, dict) or not isinstance(answer.get("status"), str):
            self.stop()
            raise SideFailed(
                f"{self.side.name} sent a line that is not an answer of the worker protocol: "
                f"{line[:80]!r} (see {self.log})"
            )
        return answer

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        self.process, self.pending = None, b""


class RowOnSides:
    """One row's child on each side, and what each still owes: a child serving the row is
    closed at the end, and every child's end is heard before the next row."""

    def __init__(self, workers: tuple[Worker, ...]):
        self.workers = workers
        self.serving: set[Worker] = set()
        self.ending: set[Worker] = set()  # "closed" or "died" still to come

    def ask(self, worker: Worker, timeout: float, **request) -> dict:
        worker.send(**request)
        return self.hear(worker, timeout)

    def hear(self, worker: Worker, timeout: float) -> dict:
        try:
            answer = worker.receive(timeout)
        except SideFailed:
            self.serving.discard(worker)
            self.ending.discard(worker)
            raise
        if answer["status"] == "ready":
            self.serving.add(worker)
        elif answer["status"] == "died":  # the child is gone, and this was its end
            self.serving.discard(worker)
            self.ending.discard(worker)
        elif answer["status"] in ("skip", "error"):  # the child ends by itself
            self.serving.discard(worker)
        return answer

    def end(self) -> None:
        """Close what serves the row and read each side up to its child's end (an answer
        left unread when the other side failed comes first)."""
        for worker in self.serving:
            with contextlib.suppress(OSError):
                worker.send(close=True)
        for worker in self.serving | self.ending:
            with contextlib.suppress(SideFailed, OSError):
                while worker.process is not None:
                    answer = worker.receive(BLOCK_SLACK_SECONDS)
                    if answer["status"] in ("closed", "died"):
                        break
                    if answer["status"] == "ready":
                        worker.send(close=True)
        self.serving, self.ending = set(), set()


def alternate(row: RowOnSides, number: int, pairs: int, timeout: float):
    """``pairs`` pairs of blocks in ABBA order after one pair not kept; each side's values
    in pair order. The first block of a row follows its setup, a place no later block has;
    after it, the first block of every pair follows one of its own process and the second
    one of the other's, and each ABBA cycle puts each side once in each place
    (tools/_lib/measure/paired.Paired)."""
    first, second = row.workers
    values: dict[Worker, list[float]] = {first: [], second: []}
    for index in range(pairs + 1):
        for worker in (first, second) if index % 2 == 0 else (second, first):
            answer = row.ask(worker, timeout, block=number)
            if answer["status"] != "measured":
                raise SideFailed(
                    f"{answer['status']} at {worker.side.name}: "
                    f"{answer.get('reason', 'its process died')}"
                )
            if not is_measurement(answer.get("value")):
                raise SideFailed(
                    f"no measurement at {worker.side.name}: it gave {answer.get('value')!r}, "
                    "not a finite positive number"
                )
            if index:
                values[worker].append(answer["value"])
    return values[first], values[second]


def set_up_row(
    row: RowOnSides, label: str, cpus: list[int], setup_order: tuple[Worker, ...] = ()
) -> list[dict]:
    """The row set up on every side at once, in ``setup_order``; each side's ready answer
    (its ready call's seconds and the row's unit), or SideFailed with why not."""
    for worker in setup_order or row.workers:
        worker.send(row=label, cpus=cpus)
        row.ending.add(worker)
    answers = [row.hear(worker, SETUP_SECONDS) for worker in row.workers]
    for worker, answer in zip(row.workers, answers, strict=True):
        if answer["status"] != "ready":
            why = answer.get("reason", "its process died")
            raise SideFailed(f"{answer['status']} at {worker.side.name}: {why}")
        if not (is_measurement(answer.get("seconds")) and isinstance(answer.get("unit"), str)):
            raise SideFailed(
                f"no measurement at {worker.side.name}: its ready call took "
                f"{answer.get('seconds')!r} s, not a finite positive number"
            )
    return answers


def measure_row(
    label: str,
    workers: tuple[Worker, Worker],
    cpus: list[int],
    pairs: int,
    seconds: float,
    setup_order: tuple[Worker, ...] = (),
) -> Timed:
    """One row on both sides: set up at once (both cores), then ``pairs`` pairs of blocks
    by turns on ``cpus``, fewer where a block is so long that they would pass ``seconds``.
    SideFailed says why a row was not timed."""
    row = RowOnSides(workers)
    begun = time.monotonic()
    try:
        answers = set_up_row(row, label, cpus, setup_order)
        set_up = time.monotonic() - begun
        # Sized from the ready call, often slower than a warm one: sizing from warm calls
        # narrowed no floor and made the rounds longer (docs/explanation/comparison.md,
        # "Alternation").
        slowest = max(answer["seconds"] for answer in answers)
        number = max(1, round(BLOCK_SECONDS / max(slowest, 1e-9)))
        block = number * slowest
        affordable = max(2, min(pairs, int(seconds / (2 * block)) - 1))
        affordable -= affordable % 2  # whole ABBA cycles (tools/_lib/measure/paired.Paired)
        before, after = alternate(row, number, affordable, block * 10 + BLOCK_SLACK_SECONDS)
        return Timed(before, after, answers[0]["unit"], set_up)
    finally:
        row.end()


def timing_cpus() -> list[int]:
    """The core both sides are timed on: the last this process may use (the other one
    keeps the coordinator and the system)."""
    return [max(os.sched_getaffinity(0))]
