"""How noisy is a no-op comparison? The evidence behind the PR gate's factor.

Clones the committed HEAD, adds an empty commit, and runs the PR gate (tools/pr_gate.py)
between the two (identical code) ``--runs`` times. For every benchmark and parameter
combination of each first pass it records the ratio after/before and whether asv's own
rule (ratio beyond the factor *and* a statistically significant difference) would flag
it, at each candidate factor; and it records the gate's verdict at ``--factor`` after
confirming what the first pass flagged. Every failing verdict is a false alarm.

By default it measures what the gate measures by default (the ``pr`` tier) less the
instruction counts, which are deterministic (``count_repeatability`` shows it). Runs made
in batches hours apart are summarized together with ``--combine``, and the summary gives
the time_ rows their own spread and every row its distribution over the runs.
``--rows REGEX`` narrows the default rows to those whose ``name(params)`` it matches from
the start; options after ``--`` go to each first pass's ``asv continuous``, so one class
can be measured with more processes than its own (``-- -a rounds=4``).

    python -m tools.studies.noise_study --runs 3 [--factor 1.3] [--bench REGEX] [--out noise.json]
    python -m tools.studies.noise_study --runs 4 --rows "bench_creation.Zeros" -- -a rounds=4
    python -m tools.studies.noise_study --combine batch1.json batch2.json [--out all.json]
"""

from __future__ import annotations

import json
import math
import re
import statistics
import tempfile
from pathlib import Path

from tools.common import (
    REPO_ROOT,
    RESULTS_DIR,
    ArgumentParser,
    BadInput,
    ExternalFailure,
    Row,
    git,
    register_machine,
    run_main,
    tier_selection,
)
from tools.pr_gate import DEFAULT_FACTOR, DEFAULT_TIERS, Gate

MACHINE = "noise-study"
FACTORS = (1.05, 1.10, 1.15, 1.20, 1.25, 1.30, 1.50)


def comparison_rows(rows: list[Row]) -> list[dict]:
    """One record per benchmark and parameter combination measured at both commits: its
    ratio, and the factors at which asv's rule flags it (either direction)."""
    return [
        {
            "benchmark": row.benchmark,
            "params": row.params,
            "ratio": row.ratio,
            "flagged_at": [factor for factor in FACTORS if row.changed(factor)],
        }
        for row in rows
    ]


def suggested_thresholds(runs: list[list[dict]], floor: float = 0.10) -> dict[str, float]:
    """asv's ``regressions_thresholds`` per benchmark: its worst no-op change over every
    run and parameter combination, plus a margin of 0.05, rounded up to 0.05, and never
    below ``floor``. A step the nightly history shows beyond it is not this noise."""
    return {
        name: max(floor, math.ceil((spread - 1 + 0.05) * 20 - 1e-9) / 20)
        for name, spread in sorted(worst_spreads(runs).items())
    }


def worst_spreads(runs: list[list[dict]]) -> dict[str, float]:
    """Per benchmark, the largest max(ratio, 1/ratio) over every run and parameter
    combination."""
    worst: dict[str, float] = {}
    for rows in runs:
        for row in rows:
            worst[row["benchmark"]] = max(worst.get(row["benchmark"], 1.0), spread(row))
    return worst


def spread(row: dict) -> float:
    return max(row["ratio"], 1 / row["ratio"])


def spread_figures(spreads: list[float]) -> dict[str, float]:
    """Median, 95th percentile and maximum of no-op spreads."""
    if not spreads:
        return {}
    p95 = statistics.quantiles(spreads, n=20, method="inclusive")[-1] if spreads[1:] else spreads[0]
    return {"median": statistics.median(spreads), "p95": p95, "max": max(spreads)}


def per_row(runs: list[list[dict]]) -> dict[str, list[float]]:
    """Every row's ratios, one per run, as ``name(params)``."""
    ratios: dict[str, list[float]] = {}
    for rows in runs:
        for row in rows:
            ratios.setdefault(f"{row['benchmark']}{row['params']}", []).append(row["ratio"])
    return dict(sorted(ratios.items()))


def is_time_row(row: dict) -> bool:
    return row["benchmark"].split(".")[-1].startswith("time_")


def summarize(runs: list[list[dict]], verdicts: list[dict]) -> dict:
    spreads = [spread(row) for rows in runs for row in rows]
    overall = spread_figures(spreads)
    return {
        "runs": len(runs),
        "comparisons": len(spreads),
        "spread_median": overall["median"],
        "spread_p95": overall["p95"],
        "spread_max": overall["max"],
        "time_rows": {
            **spread_figures([spread(r) for rows in runs for r in rows if is_time_row(r)]),
            "above_1.25": sorted(
                {
                    f"{r['benchmark']}{r['params']}"
                    for rows in runs
                    for r in rows
                    if is_time_row(r) and spread(r) > 1.25
                }
            ),
        },
        "flags_per_factor": {
            str(factor): sum(factor in row["flagged_at"] for rows in runs for row in rows)
            for factor in FACTORS
        },
        "noisiest": sorted(worst_spreads(runs).items(), key=lambda item: -item[1])[:10],
        "suggested_thresholds": suggested_thresholds(runs),
        "gate": {
            "first_passes_failing": sum(v["first_pass"] == 1 for v in verdicts),
            "false_alarms_after_confirming": sum(v["verdict"] == 1 for v in verdicts),
            # Older runs predate the screen and did not record what they measured again.
            "rows_measured_again": sum(len(v.get("confirmed", ())) for v in verdicts),
            "runs": verdicts,
        },
    }


def result_files(repo: Path) -> list[Path]:
    folder = repo / RESULTS_DIR / MACHINE
    return [path for path in folder.glob("*.json") if path.name != "machine.json"]


def default_selection(repo: Path, rows: str | None = None) -> str:
    """The gate's default rows less the instruction counts; only those whose
    ``name(params)`` ``rows`` matches from the start, when given."""
    regex, _ = tier_selection(repo, DEFAULT_TIERS)
    narrowed = f"(?={rows})" if rows else ""
    return rf"^{narrowed}(?!bench_instructions\.)" + regex.removeprefix("^")


def measure(
    runs: int,
    factor: float,
    bench: str | None,
    workdir: Path,
    rows_regex: str | None = None,
    asv_args: tuple[str, ...] = (),
):
    repo = workdir / "repo"
    git("clone", "--quiet", str(REPO_ROOT), str(repo), cwd=workdir)
    git(
        "-c",
        "user.name=noise",
        "-c",
        "user.email=noise@example.invalid",
        "commit",
        "--quiet",
        "--allow-empty",
        "-m",
        "no-op",
        cwd=repo,
    )
    register_machine(MACHINE)
    gate = Gate(repo, "HEAD~1", "HEAD", factor, MACHINE)
    selection = ["--bench", bench or default_selection(repo, rows_regex)]
    rows, verdicts = [], []
    for number in range(runs):
        first_pass = gate.continuous(*asv_args, *selection)
        if first_pass not in (0, 1):
            raise ExternalFailure(f"asv continuous exited {first_pass} in run {number + 1}")
        # Rows come from the first pass alone: confirming re-measures what it flagged.
        rows.append(comparison_rows(gate.rows()))
        confirmed = gate.suspects()
        verdict, _ = gate.decide(first_pass, selection, confirmed=True)
        for path in result_files(repo):
            path.unlink()  # the next run measures afresh
        verdicts.append({"first_pass": first_pass, "confirmed": confirmed, "verdict": verdict})
        print(json.dumps(summarize(rows[-1:], verdicts[-1:]), indent=1), flush=True)
    return rows, verdicts


def main() -> int:
    parser = ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--factor",
        type=float,
        default=DEFAULT_FACTOR,
        help=f"the gate's factor (default {DEFAULT_FACTOR}, the gate's default)",
    )
    parser.add_argument(
        "--bench", help="asv --bench regex (default: the gate's pr tier, counts left out)"
    )
    parser.add_argument(
        "--rows", help="regex: only the default rows whose name(params) it matches from the start"
    )
    parser.add_argument(
        "--combine", type=Path, nargs="+", help="summarize earlier --out files, measure nothing"
    )
    parser.add_argument("--out", type=Path, help="write every row and the summary as JSON")
    parser.set_defaults(asv_args=[])  # after --: each first pass's asv continuous
    args = parser.parse_args()
    if args.runs < 1:
        raise BadInput("--runs must be at least 1")
    if args.rows is not None and args.bench is not None:
        raise BadInput("--rows narrows the default rows; it does not combine with --bench")
    if args.rows is not None:
        try:
            re.compile(args.rows)
        except re.error as error:
            raise BadInput(f"--rows {args.rows!r} is not a valid regex: {error}") from None
    if args.combine:
        runs, verdicts = combined(args.combine)
    else:
        with tempfile.TemporaryDirectory(prefix="noise-study-") as workdir:
            runs, verdicts = measure(
                args.runs,
                args.factor,
                args.bench,
                Path(workdir),
                args.rows,
                tuple(args.asv_args),
            )
    summary = summarize(runs, verdicts)
    print(json.dumps(summary, indent=1))
    if args.out:
        saved = {"summary": summary, "runs": runs, "verdicts": verdicts, "rows": per_row(runs)}
        args.out.write_text(json.dumps(saved, indent=1))
    return 0


def combined(paths: list[Path]) -> tuple[list[list[dict]], list[dict]]:
    """The runs and verdicts of earlier ``--out`` files, in order."""
    runs, verdicts = [], []
    for path in paths:
        try:
            saved = json.loads(path.read_text())
            runs += saved["runs"]
            verdicts += saved.get("verdicts") or saved["summary"]["gate"]["runs"]
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise BadInput(f"{path}: not a noise_study --out file ({error})") from None
    return runs, verdicts


if __name__ == "__main__":
    run_main("noise_study", main)
