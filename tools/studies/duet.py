"""Does a duet cancel this host's drift? Two processes, one pinned to each core, time the same
call at the same moments (quarter-second windows on the wall clock), and the per-window
ratio of the two is set beside each side's own spread. Where the host slows both cores
together, the ratio is narrower than either side; where it slows one core at a time, it
is not (docs/explanation/comparison.md, "Alternation").

    python -m tools.studies.duet [--seconds 120] [--window 0.25] [--noise PROFILE] [--out FILE]
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from tools._lib.base.cli import ArgumentParser, BadInput, run_main
from tools._lib.measure.antagonist import PROFILES, noise
from tools.studies.noise_summary import window_spread as spread


def side(core: int, started: float, seconds: float, window: float) -> list[float]:
    """The median ``mm`` of every window from ``started``, on ``core``."""
    import torch

    os.sched_setaffinity(0, {core})
    torch.set_num_threads(1)
    a, b = torch.randn(512, 512), torch.randn(512, 512)
    while time.time() < started:
        torch.mm(a, b)
    medians = []
    for index in range(int(seconds / window)):
        until = started + (index + 1) * window
        times = []
        while time.time() < until:
            begun = time.perf_counter()
            torch.mm(a, b)
            times.append(time.perf_counter() - begun)
        medians.append(statistics.median(times) if times else float("nan"))
    return medians


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "side":
        core, started, seconds, window = sys.argv[2:6]
        print(json.dumps(side(int(core), float(started), float(seconds), float(window))))
        return 0
    parser = ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=120.0)
    parser.add_argument("--window", type=float, default=0.25)
    parser.add_argument("--noise", choices=sorted(PROFILES), help="an antagonist throughout")
    parser.add_argument("--out", type=Path, help="write every window here as JSON")
    args = parser.parse_args()
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) < 2 or not 0 < args.window < args.seconds:
        raise BadInput("needs two cores, and a window shorter than the run")
    started = time.time() + 5  # both sides import torch first
    with noise(args.noise, 0, args.seconds + 30):
        processes = [
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "tools.studies.duet",
                    "side",
                    str(core),
                    str(started),
                    str(args.seconds),
                    str(args.window),
                ],
                stdout=subprocess.PIPE,
                text=True,
            )
            for core in cores[:2]
        ]
        first, second = (json.loads(p.communicate()[0]) for p in processes)
    ratios = [b / a for a, b in zip(first, second, strict=True) if a == a and b == b]
    result = {
        "noise": args.noise,
        "alone": [spread(first), spread(second)],
        "ratio": {k: v for k, v in spread(ratios).items() if k != "median_ms"},
    }
    print(json.dumps({k: v for k, v in result.items()}, indent=1))
    if args.out:
        args.out.write_text(json.dumps({**result, "windows": [first, second]}, indent=1))
    return 0


if __name__ == "__main__":
    run_main("duet", main)
