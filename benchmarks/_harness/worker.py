"""A benchmark process the tools drive block by block: the half of a paired comparison that
asv cannot be (tools/_lib/measure/alternation.py is the other half).

asv measures one commit's processes, then the other's, minutes apart; on a host whose
speed drifts for seconds at a time that drift lands on one side
(docs/explanation/comparison.md). Here two workers, one per commit (each with that commit's
library first on its path, today's suites and harness, as asv runs them), take turns:
one times a block of calls, then the other, so the two halves of every pair are timed
a few milliseconds apart on the same core.

    python -m benchmarks._harness.worker      (run from the repository root by the tools)

It reads one JSON request per line on stdin and answers each with one JSON line on the
stdout it was started with (anything the benchmarks print goes to stderr). Like asv's
forkserver it imports the suites once and forks a child per row, so every row starts from
the same state; the child serves that row's requests until ``close``:

- ``{"row": LABEL, "cpus": [..]}``: set the row up as asv does (its ``setup``), pin to
  ``cpus``, time one call (a track's too: ``seconds`` is always its call's time);
  ``{"status": "ready", "seconds", "unit"}``, or ``"skip"`` / ``"error"`` with the reason;
- ``{"block": N}``: N calls between the class's own ``timer()`` (which synchronizes the
  device), seconds per call; a ``track_`` row answers one call's value instead;
- ``{"profile": N}``: N calls under torch.profiler; per operator its self and total CPU
  time (µs) and calls, over all N (the triage's "why" of a slower row);
- ``{"close": true}``: teardown, and the child ends; the worker answers ``{"status":
  "closed"}``, or ``"died"`` when the child did not end by itself.
"""

from __future__ import annotations

import ast
import functools
import importlib
import json
import os
import statistics
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any, BinaryIO, NoReturn

from .tiers import suite_modules


def parse_label(label: str) -> tuple[str, str, str, tuple]:
    """``bench_x.Class.method(params)`` as (module, class, method, params)."""
    name, _, text = label.partition("(")
    module, cls, method = name.rsplit(".", 2)
    params = ast.literal_eval(f"({text}") if text else ()
    return module, cls, method, params if isinstance(params, tuple) else (params,)


def one_value(result: Any) -> float:
    """A track's value: its number, or the median of its samples (a sampled track)."""
    if isinstance(result, dict):
        return float(statistics.median(result["samples"]))
    return float(result)


class Row:
    """One benchmark row, set up in this process."""

    def __init__(self, label: str):
        module, cls, method, self.params = parse_label(label)
        suite = getattr(importlib.import_module(f"benchmarks.{module}"), cls)
        if hasattr(suite, "setup_cache"):
            raise LookupError("a row with a setup_cache (an instruction count) is asv's to run")
        self.bench = suite()
        self.method = getattr(self.bench, method)
        self.tracked = method.startswith("track_")
        self.unit = getattr(self.method, "unit", getattr(self.bench, "unit", "seconds"))
        self.timer = getattr(self.bench, "timer", time.perf_counter)

    def setup(self) -> None:
        if hasattr(self.bench, "setup"):
            self.bench.setup(*self.params)

    def block(self, number: int) -> float:
        """Seconds per call over ``number`` calls, or a track's value."""
        if self.tracked:
            return one_value(self.method(*self.params))
        begun = self.timer()
        for _ in range(number):
            self.method(*self.params)
        return (self.timer() - begun) / number

    def call_seconds(self) -> float:
        """One call's seconds, which size the blocks and bound the wait for each: a
        track's, by the clock around it (its value is a rate or a share, not its time)."""
        if not self.tracked:
            return self.block(1)
        begun = time.perf_counter()
        self.block(1)
        return time.perf_counter() - begun

    def profile(self, calls: int) -> dict[str, list[float]]:
        import torch
        from torch.profiler import ProfilerActivity, profile

        activities = [ProfilerActivity.CPU]
        if torch.cuda.is_available():
            activities.append(ProfilerActivity.CUDA)
        with profile(activities=activities) as profiled:
            for _ in range(calls):
                self.method(*self.params)
        return {
            e.key: [e.self_cpu_time_total, e.cpu_time_total, e.count]
            for e in profiled.key_averages()
        }

    def teardown(self) -> None:
        if hasattr(self.bench, "teardown"):
            self.bench.teardown(*self.params)


def answer(replies: BinaryIO, **message: Any) -> None:
    replies.write((json.dumps(message) + "\n").encode())
    replies.flush()


def serve_row(request: dict, requests: BinaryIO, replies: BinaryIO) -> None:
    """The child's part: one row, from its setup to its teardown."""
    try:
        row = Row(request["row"])
        row.setup()
    except NotImplementedError as skip:  # asv's skip: the row is n/a here
        answer(replies, status="skip", reason=str(skip) or "skipped")
        return
    except Exception as error:
        answer(replies, status="error", reason=f"{type(error).__name__}: {error}")
        traceback.print_exc()
        return
    try:
        if request.get("cpus"):
            os.sched_setaffinity(0, request["cpus"])
        answer(replies, status="ready", seconds=row.call_seconds(), unit=row.unit)
        for line in iter(requests.readline, b""):
            asked = json.loads(line)
            if "close" in asked:
                break
            if "profile" in asked:
                answer(replies, status="profiled", operators=row.profile(int(asked["profile"])))
                continue
            answer(replies, status="measured", value=row.block(int(asked["block"])))
    except Exception as error:
        answer(replies, status="error", reason=f"{type(error).__name__}: {error}")
        traceback.print_exc()
    finally:
        row.teardown()


def end_child(work: Callable[[], None]) -> NoReturn:
    """A forked child's whole life: ``work``, its output flushed, and its own exit (0, or 1
    when ``work`` raised), never the parent's cleanup."""
    code = 0
    try:
        work()
    except BaseException:
        code = 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def serve(requests: BinaryIO, replies: BinaryIO) -> None:
    """The worker's part: a forked child per row, and word of how each one ended."""
    suite_modules()  # imported once, before any fork, as asv's forkserver does
    for line in iter(requests.readline, b""):
        request = json.loads(line)
        child = os.fork()
        if child == 0:
            end_child(functools.partial(serve_row, request, requests, replies))
        _, status = os.waitpid(child, 0)
        ended = os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
        answer(replies, status="closed" if ended else "died", code=status)


def main() -> None:
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # the benchmarks' own prints go to stderr, never into the replies
    serve(sys.stdin.buffer, replies)


if __name__ == "__main__":
    main()
