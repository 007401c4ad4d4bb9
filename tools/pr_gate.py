"""The PR gate: does HEAD make any benchmark slower than BASE by more than a factor?

    python -m tools.pr_gate BASE HEAD [--factor F] [--no-confirm] [--machine pr-gate]
                                      [-- ASV CONTINUOUS OPTIONS]

Runs ``asv continuous --split --interleave-rounds`` (both commits measured in alternating
rounds, so drift on a shared runner hits both alike) and reads the comparison
(tools.common.compare, asv's rule) for benchmarks that got slower by more than the factor.
asv reads every value as lower is better, so a rate (GFLOP/s, GB/s, % of peak) that
*drops* is the slowdown, and one that rises is not.
The first pass is a screen: every sampled row slower by more than the square root of the
factor (1.07 at 1.15), significant or not, is measured again, interleaved, in four rounds a
side, and only a slowdown beyond the factor on that pass fails the gate: a no-op comparison
on a 2-core runner flags a few noisy benchmarks by chance, and a real slowdown can read low
in one pass when a side's process runs slow (docs/measurement.md, "Choosing the factor").
The tables go as Markdown to ``$GITHUB_STEP_SUMMARY`` (stdout when unset).

Instruction counts are deterministic, so they are judged at ``COUNT_FACTOR`` (a 1% rise
fails) and are not measured again. By default it measures the ``pr`` tier: one
representative shape per op, every variant, on the CPU, its time_, peakmem_ and
instruction-count rows (benchmarks/_harness/tiers.py); ``-- --bench REGEX`` chooses
others.
Exit status: 0 no slowdown beyond the factor, 1 performance regressed, 2 a benchmark
failed, 3 asv or git failed, 4 bad input (an unknown commit, BASE equal to HEAD, a factor
that is not a finite number above 1).
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from tools.common import (
    RESULTS_DIR,
    ArgumentParser,
    BadInput,
    Row,
    asv,
    bench_selection,
    compare,
    register_machine,
    repo_root,
    resolve_commit,
    row_selection,
    run_main,
    split_bench_selection,
    tier_selection,
    write_summary,
)

# Eight no-op runs of the pr tier on jemalloc judged at 1.15: three first passes failed,
# the confirming pass cleared all three (docs/measurement.md, "Eight runs on jemalloc").
DEFAULT_FACTOR = 1.15
# What the gate measures unless told otherwise (``-- --bench REGEX``): the pr tier, whose
# rows asv samples and tests for significance (time_, peakmem_) or counts
# deterministically (track_instructions). The throughput tracks are one number per run
# with no samples; on the 2-core runner their no-op spread reached 2.4x, and one
# reproduced on a confirming pass (README), so no tier puts them in the gate.
DEFAULT_TIERS = ("pr",)
# Ten no-op comparisons of a count (two builds of the same code, each counted in its own
# process) differed by at most 0.05%; a count that rises by more than 1% is a change in
# the code run, not noise (README, "Is a planted slowdown caught?"). asv knows one
# factor per comparison, so the gate applies this one to the count rows itself.
COUNT_FACTOR = 1.01
COUNT_UNIT = "instructions"
# A row measured again (the gate's confirming pass, the nightly triage) runs in four
# processes a side, interleaved, against asv's default two: on the 2-core runner a whole
# process sometimes runs at a fraction of its speed, and with two a side one such process
# decided the median (a 1.3x plant read 1.20; docs/measurement.md, "Is a planted slowdown
# caught?"). Only the flagged rows pay for it.
CONFIRMING_ROUNDS = ("-a", "rounds=4")
VERDICTS = {
    0: "no benchmark got slower by more than the factor",
    1: "performance regressed: a benchmark is slower than the factor allows",
    2: "a benchmark failed: it raised or timed out (see the asv log above)",
    3: "asv failed before giving a verdict (see the log above)",
}


def factor(text: str) -> float:
    """A slowdown factor: a finite number above 1 (nan or inf would let nothing fail)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not (math.isfinite(value) and value > 1.0):
        raise argparse.ArgumentTypeError(f"must be a finite number above 1.0, got {text}")
    return value


def markdown_table(rows: list[tuple[Row, str]]) -> str:
    """``(row, change)`` pairs as a Markdown table, the change in words ("slower",
    "faster"): for rates a fall is the slowdown, which asv's own +/- would hide."""
    lines = [
        "| Change | Before | After | Ratio | Benchmark (Parameter) |",
        "|--------|--------|-------|-------|-----------------------|",
    ]
    lines += [
        f"| {change} | {row.shown(row.before)} | {row.shown(row.after)} | {row.ratio:.3f} "
        f"| {row.label} |"
        for row, change in rows
    ]
    return "\n".join(lines)


def with_default_selection(asv_args: list[str], repo: Path) -> list[str]:
    """``asv_args`` with the gate's default ``--bench`` (the pr tier's rows) when the caller
    chose none."""
    if bench_selection(asv_args):
        return asv_args
    return [*asv_args, "--bench", tier_selection(repo, DEFAULT_TIERS)[0]]


class Gate:
    """One base/head comparison on one asv machine."""

    # The rows the confirming pass measured again (``decide``); many on a no-op change
    # means a noisy runner (docs/measurement.md, "A noisier host").
    measured_again: tuple[str, ...] = ()

    def __init__(self, repo: Path, base: str, head: str, factor: float, machine: str):
        self.repo, self.factor, self.machine = repo, factor, machine
        self.base, self.head = resolve_commit(base, repo), resolve_commit(head, repo)

    def continuous(self, *asv_args: str) -> int:
        """asv continuous's exit status: 0 or 1 measured (its 1 ignores rates' direction),
        2 a benchmark failed, anything else asv failed."""
        done = asv(
            "continuous",
            "--split",
            "--interleave-rounds",
            "--factor",
            str(self.factor),
            "--machine",
            self.machine,
            *asv_args,
            self.base,
            self.head,
            cwd=self.repo,
        )
        return done.returncode

    @property
    def count_factor(self) -> float:
        return min(COUNT_FACTOR, self.factor)

    def rows(self) -> list[Row]:
        return compare(self.repo / RESULTS_DIR, self.machine, self.base, self.head)

    def factor_of(self, row: Row) -> float:
        """Counts at ``count_factor``, everything else at ``factor``."""
        return self.count_factor if row.unit == COUNT_UNIT else self.factor

    def slower(self) -> list[str]:
        """Rows slower beyond their factor, as ``name(params)``."""
        return sorted(row.label for row in self.rows() if row.slower(self.factor_of(row)))

    @property
    def screen(self) -> float:
        """The first pass's slowdown that sends a sampled row to the confirming pass: half
        the factor's margin, as a ratio. Two 1.25x plants at factor 1.15 read 1.10 and 1.21
        (not significant) on a first pass whose base side ran one slow process, and passed
        (docs/measurement.md, "Is a planted slowdown caught?")."""
        return math.sqrt(self.factor)

    def suspects(self) -> list[str]:
        """Sampled rows the first pass read slower than ``screen``, significant or not."""
        return sorted(
            row.label
            for row in self.rows()
            if row.unit != COUNT_UNIT and row.slowdown > self.screen
        )

    def changes(self) -> str:
        """The rows changed beyond their factor, as Markdown; empty when none."""
        changed = [
            (row, "slower" if row.slower(self.factor_of(row)) else "faster")
            for row in self.rows()
            if row.changed(self.factor_of(row))
        ]
        return markdown_table(changed) if changed else ""

    def table(self) -> str:
        """Every row, as Markdown."""
        return markdown_table([(row, "") for row in self.rows()])

    def why(self) -> str:
        """For each instruction count slower beyond its factor, the functions that grew."""
        from tools.explain import grown_functions

        sections = [
            grown_functions(self.repo, self.base, self.head, row.benchmark, row.params)
            for row in self.rows()
            if row.unit == COUNT_UNIT and row.slower(self.factor_of(row))
        ]
        return "\n\n".join(section for section in sections if section)

    def decide(self, first_pass: int, asv_args: list[str], confirmed: bool):
        """The verdict after a first ``continuous`` pass exited ``first_pass``; and the
        first pass's changes when a confirming pass replaced them."""
        if first_pass not in (0, 1, 2):
            return 3, ""
        slower = self.slower()
        if first_pass == 2 or not confirmed:
            return (2 if first_pass == 2 else int(bool(slower))), ""
        counted = {row.label for row in self.rows() if row.unit == COUNT_UNIT} & set(slower)
        suspects = self.suspects()
        self.measured_again = tuple(suspects)
        if not suspects:  # a count does not change when taken again
            return int(bool(counted)), ""
        first_changes = self.changes()
        print(
            f"pr_gate: {len(suspects)} rows slower than {self.screen:.3f}; "
            "measuring them again to confirm",
            flush=True,
        )
        # Exactly the suspect rows; asv ORs --bench patterns, so the caller's is dropped.
        selection = "|".join(row_selection(row) for row in suspects)
        second_pass = self.continuous(
            *split_bench_selection(asv_args)[1],
            "--bench",
            selection,
            *CONFIRMING_ROUNDS,
        )
        if second_pass not in (0, 1, 2):
            return 3, first_changes
        if second_pass == 2:
            return 2, first_changes
        reproduced = set(self.slower()) & set(suspects)
        return int(bool(reproduced or counted)), first_changes


def main() -> int:
    parser = ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="Arguments after -- go to asv continuous, e.g. -- --bench bench_matmul",
    )
    parser.add_argument("base", help="the commit to compare against, e.g. origin/main")
    parser.add_argument("head", help="the commit under test, e.g. HEAD")
    parser.add_argument(
        "--factor",
        type=factor,
        default=DEFAULT_FACTOR,
        help=f"slowdown ratio that fails the gate (default {DEFAULT_FACTOR})",
    )
    parser.add_argument(
        "--no-confirm",
        action="store_true",
        help="fail on the first pass, without measuring slower benchmarks again",
    )
    parser.add_argument("--machine", default="pr-gate", help="asv machine name")
    parser.add_argument(
        "--summary-file", type=Path, help="also write the Markdown summary here (the PR comment)"
    )
    parser.set_defaults(asv_args=[])  # after --
    args = parser.parse_args()
    gate = Gate(repo_root(), args.base, args.head, args.factor, args.machine)
    if gate.base == gate.head:
        raise BadInput(
            f"{args.base} and {args.head} are the same commit ({gate.base[:12]}): "
            "nothing to compare"
        )
    register_machine(args.machine)
    asv_args = with_default_selection(args.asv_args, gate.repo)
    status, first_changes = gate.decide(
        gate.continuous(*asv_args), asv_args, confirmed=not args.no_confirm
    )
    sections = [
        f"## Benchmarks: {VERDICTS[status]}",
        f"`{gate.base[:8]}` ({args.base}) → `{gate.head[:8]}` ({args.head}), "
        f"factor {args.factor} ({gate.count_factor} for instruction counts), machine "
        f"`{args.machine}`. For GFLOP/s, GB/s and % of peak a fall is the slowdown.",
    ]
    if status != 3:
        sections.append(gate.changes() or "No benchmark changed beyond the factor.")
        if status == 1 and (why := gate.why()):
            sections.append(f"### Why the instruction counts grew\n\n{why}")
        if gate.measured_again:
            sections.append(
                f"{len(gate.measured_again)} rows read slower than {gate.screen:.3f} on the "
                "first pass were measured again; the verdict is that second measurement's."
            )
        if first_changes:
            sections.append(f"First pass, before confirming:\n\n{first_changes}")
        sections.append(
            f"<details><summary>All benchmarks</summary>\n\n{gate.table()}\n\n</details>"
        )
    markdown = "\n\n".join(sections) + "\n"
    write_summary(markdown)
    if args.summary_file:
        args.summary_file.parent.mkdir(parents=True, exist_ok=True)
        args.summary_file.write_text(markdown)
    print(f"pr_gate: {VERDICTS[status]}")
    return status


if __name__ == "__main__":
    run_main("pr_gate", main)
