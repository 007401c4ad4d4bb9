"""What no-op comparisons say, in figures: how far apart each comparison put the rows (asv's
interleaved rounds, the paired alternation), how often each would have flagged one, and the
history thresholds the spread suggests (tools/studies/noise_study.py measures them)."""

from __future__ import annotations

import math
import statistics

from tools._lib.measure.no_op_floors import spread

FACTORS = (1.05, 1.10, 1.15, 1.20, 1.25, 1.30, 1.50)
# Beyond this share of its median, a window counts as off (the gate's factor is 1.15).
OFF_BY = 0.10


def figures(spreads: list[float]) -> dict[str, float]:
    """Median, 95th percentile and maximum of spreads, and how many lie past 1.15 and 1.25."""
    if not spreads:
        return {}
    p95 = statistics.quantiles(spreads, n=20, method="inclusive")[-1] if spreads[1:] else spreads[0]
    return {
        "count": len(spreads),
        "median": statistics.median(spreads),
        "p95": p95,
        "max": max(spreads),
        "above_1.15": sum(s > 1.15 for s in spreads),
        "above_1.25": sum(s > 1.25 for s in spreads),
    }


def is_time_row(row: dict) -> bool:
    return row["benchmark"].split(".")[-1].startswith("time_")


def worst_spreads(runs: list[list[dict]]) -> dict[str, float]:
    """Per benchmark, the largest spread of asv's ratio over every run and combination."""
    worst: dict[str, float] = {}
    for rows in runs:
        for row in rows:
            worst[row["benchmark"]] = max(worst.get(row["benchmark"], 1.0), spread(row["ratio"]))
    return worst


def suggested_thresholds(runs: list[list[dict]], floor: float = 0.10) -> dict[str, float]:
    """asv's ``regressions_thresholds`` per benchmark: its worst no-op change over every
    run and parameter combination, plus a margin of 0.05, rounded up to 0.05, and never
    below ``floor``. A step the nightly history shows beyond it is not this noise."""
    return {
        name: max(floor, math.ceil((worst - 1 + 0.05) * 20 - 1e-9) / 20)
        for name, worst in sorted(worst_spreads(runs).items())
    }


def per_row(runs: list[list[dict]], key: str) -> dict[str, list[float]]:
    """Every row's ``key`` (``ratio`` or ``paired``), one per run, as ``name(params)``."""
    found: dict[str, list[float]] = {}
    for rows in runs:
        for row in rows:
            if key in row:
                found.setdefault(f"{row['benchmark']}{row['params']}", []).append(row[key])
    return dict(sorted(found.items()))


def summarize(runs: list[list[dict]], verdicts: list[dict]) -> dict:
    time_rows = [row for rows in runs for row in rows if is_time_row(row)]
    paired = [row for row in time_rows if "paired" in row]
    noisiest = sorted(
        ((f"{r['benchmark']}{r['params']}", r["paired"]) for r in paired),
        key=lambda item: -spread(item[1]),
    )[:10]
    return {
        "runs": len(runs),
        "asv_interleaved_rounds": figures([spread(row["ratio"]) for row in time_rows]),
        "paired_alternation": figures([spread(row["paired"]) for row in paired]),
        "paired_noisiest": noisiest,
        "not_measured": sorted({n for v in verdicts for n in v.get("not_measured", [])}),
        "asv_flags_per_factor": {
            str(f): sum(f in row["flagged_at"] for row in time_rows) for f in FACTORS
        },
        "suggested_thresholds": suggested_thresholds(runs),
        "gate": {
            "false_alarms": sum(v["verdict"] == 1 for v in verdicts),
            "failed_rows": sorted({n for v in verdicts for n in v.get("failed", [])}),
            "not_judged": sorted({n for v in verdicts for n in v.get("not_judged", [])}),
            "runs": verdicts,
        },
    }


def window_spread(medians: list[float]) -> dict:
    """The windows' medians relative to their median: 5th and 95th percentiles (nearest
    rank), extremes, and the share more than ``OFF_BY`` away."""
    middle = statistics.median(medians)
    relative = sorted(value / middle for value in medians)

    def rank(share: float) -> float:
        return relative[max(0, math.ceil(share * len(relative)) - 1)]

    return {
        "windows": len(medians),
        "median_ms": middle * 1e3,
        "p5": rank(0.05),
        "p95": rank(0.95),
        "min": relative[0],
        "max": relative[-1],
        "share_off": sum(abs(value - 1) > OFF_BY for value in relative) / len(relative),
    }
