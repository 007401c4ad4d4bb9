"""Is this machine's own speed steady? The drift no harness controls, measured directly.

    python -m tools.studies.host_speed [--seconds 180] [--window 0.25] [--noise PROFILE]
                                       [--seed N] [--out FILE]

One process, one thread, nothing else of tensorops running: a compute-bound call (a
512x512x512 float32 ``torch.mm``) and a memory-bound one (a 64 MiB copy) take turns in
windows of about ``--window`` seconds each, for ``--seconds``. Per window, the median call.
The windows' medians divided by their overall median show how far the machine itself moves
the same call from one moment to the next: the floor under any no-op comparison it runs.
A benchmark's process lasts about a second, so a machine whose windows wander by 20% can
put one side of a comparison 20% off whatever the harness does (docs/explanation/
comparison.md, "Hosts that drift"). ``--noise`` runs it under an antagonist, to see the
shape a profile gives a quiet host.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from tools._lib.base.cli import ArgumentParser, BadInput, run_main
from tools._lib.measure.antagonist import PROFILES, noise
from tools.studies.noise_summary import OFF_BY, window_spread

MM_SIZE = 512
COPY_BYTES = 64 * 2**20


def calls_per_window(call: Callable[[], object], window: float) -> int:
    """How many calls of ``call`` fill about ``window`` seconds (at least 5)."""
    begun = time.perf_counter()
    for _ in range(3):
        call()
    each = (time.perf_counter() - begun) / 3
    return max(5, round(window / each))


def window_median(call: Callable[[], object], count: int) -> float:
    """The median of ``count`` timed calls, in seconds."""
    times = []
    for _ in range(count):
        begun = time.perf_counter()
        call()
        times.append(time.perf_counter() - begun)
    return statistics.median(times)


def measure(seconds: float, window: float) -> dict:
    import torch

    from benchmarks._harness.controls import Controls, controlled

    with controlled(Controls()):
        a, b = torch.randn(MM_SIZE, MM_SIZE), torch.randn(MM_SIZE, MM_SIZE)
        source = torch.randn(COPY_BYTES // 4)
        target = torch.empty_like(source)
        calls = {
            f"mm {MM_SIZE}^3 float32": lambda: torch.mm(a, b),
            "copy 64 MiB": lambda: target.copy_(source),
        }
        counts = {name: calls_per_window(call, window) for name, call in calls.items()}
        series = {name: [] for name in calls}
        started = time.perf_counter()
        while time.perf_counter() - started < seconds:
            for name, call in calls.items():
                series[name].append(window_median(call, counts[name]))
    return {
        "seconds": seconds,
        "window": window,
        "threads": Controls().threads,
        "ops": {name: window_spread(values) for name, values in series.items()},
        "series_ms": {name: [value * 1e3 for value in values] for name, values in series.items()},
    }


def main() -> int:
    parser = ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=180.0)
    parser.add_argument("--window", type=float, default=0.25, help="seconds per window")
    parser.add_argument("--noise", choices=sorted(PROFILES), help="an antagonist throughout")
    parser.add_argument("--seed", type=int, default=0, help="the antagonist's seed")
    parser.add_argument("--out", type=Path, help="also write every window's median here")
    args = parser.parse_args()
    if not (args.seconds > 0 and 0 < args.window <= args.seconds):
        raise BadInput("--seconds and --window must be positive, the window within the run")
    with noise(args.noise, args.seed, args.seconds + 60):
        result = measure(args.seconds, args.window)
    result["noise"], result["seed"] = args.noise, args.seed
    for name, figures in result["ops"].items():
        print(
            f"{name}: {figures['windows']} windows, median {figures['median_ms']:.3f} ms; "
            f"windows relative to it: 5th to 95th percentile {figures['p5']:.3f} to "
            f"{figures['p95']:.3f}, extremes {figures['min']:.3f} to {figures['max']:.3f}, "
            f"{figures['share_off']:.0%} more than {OFF_BY:.0%} off"
        )
    if args.out:
        args.out.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    run_main("host_speed", main)
