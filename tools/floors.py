"""Measure this host's detection floors for one machine: no-op comparisons of the current
commit against itself, by alternation, and per row the smallest slowdown the comparison can
call here with no false alarm (tools/_lib/measure/host_floors.py). The gate and the triage
judge each row at its floor on the host they run on.

    python -m tools.floors --machine NAME [--runs 4] [--tier pr] [--rows REGEX]
                           [--outbox DIR --no-fetch | --out FILE] [--noise PROFILE]
                           [--samples FILE | --from-samples FILE]

The floors land in ``NAME/floors.json`` on the results branch, beside those of the other
hosts the machine's runs landed on (or in ``--out``, with no results branch at all).
``--samples`` also writes every no-op run's pairs (each side's blocks, by row and round), so
another estimate can be tried on the same samples (tools/studies/estimates.py);
``--from-samples`` makes the floors again from such a file, measured on this host, with
today's paired estimate (no new runs: when the estimate changes, its floors need not
wait for the week's).
Exit status: 0 written, 3 asv or git failed, 4 bad input.
"""

from __future__ import annotations

import datetime
import json
import re
from pathlib import Path

from tools._lib.asv.machines import this_host
from tools._lib.asv.results import RESULTS_DIR
from tools._lib.asv.run import ensure_environment
from tools._lib.asv.suites import tier_rows
from tools._lib.base.cli import ArgumentParser, BadInput, machine_name, regex, run_main
from tools._lib.base.git import git, repo_root
from tools._lib.measure.alternation import compare_commits
from tools._lib.measure.antagonist import PROFILES, noise
from tools._lib.measure.host_floors import FLOORS_FILE, Floors, write_floors
from tools._lib.measure.no_op_floors import floor_of, read_samples, samples_of
from tools._lib.measure.paired import Paired
from tools._lib.store.branch import DEFAULT_BRANCH, ResultsBranch
from tools._lib.store.outbox import Outbox
from tools._lib.verdict.gate import DEFAULT_TIERS

# The rows the alternation measures on a CPU runner: times and tracks, not the instruction
# counts (deterministic, and asv's to run: their setup_cache is one valgrind process).
TIMED = re.compile(r"\.(time_\w+|track_(?!instructions\b)\w+)\('cpu'")


def no_op_runs(repo: Path, labels: list[str], runs: int) -> list[dict[str, Paired]]:
    """Each no-op run's paired measurement of every row it measured."""
    head = git("rev-parse", "HEAD", cwd=repo)
    found = []
    for number in range(runs):
        print(f"floors: no-op run {number + 1} of {runs}", flush=True)
        outcomes = compare_commits(repo, head, head, labels)
        found.append({label: o.paired for label, o in outcomes.items() if o.paired is not None})
    return found


def parse():
    parser = ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--machine", required=True, type=machine_name)
    parser.add_argument("--runs", type=int, default=4, help="no-op comparisons (default 4)")
    parser.add_argument("--tier", action="append", help="the tiers' rows (default pr)")
    parser.add_argument("--rows", type=regex, help="regex: only the rows it matches from the start")
    parser.add_argument("--out", type=Path, help="write the floors file here, no branch")
    parser.add_argument("--outbox", type=Path, help="save to the outbox for push_results")
    parser.add_argument("--no-fetch", action="store_true", help="no network for the branch")
    parser.add_argument("--remote", default="origin")
    parser.add_argument("--branch", default=DEFAULT_BRANCH)
    parser.add_argument("--noise", choices=sorted(PROFILES), help="an antagonist throughout")
    parser.add_argument("--samples", type=Path, help="also write every no-op run's pairs here")
    parser.add_argument(
        "--from-samples", type=Path, help="no new runs: the floors of this host's samples file"
    )
    args = parser.parse_args()
    if args.runs < 2:
        raise BadInput("--runs must be at least 2: one no-op says little of the next")
    return args


def measure(repo: Path, args) -> tuple[Floors, dict[str, list[float]]]:
    """This host's floors, and the no-op slowdowns they stand on (kept beside them, so a
    floor can be checked against its evidence)."""
    labels = [row for row in tier_rows(repo, args.tier or DEFAULT_TIERS) if TIMED.search(row)]
    if args.rows:
        labels = [label for label in labels if re.match(args.rows, label)]
    if not labels:
        raise BadInput("no CPU timed row to measure floors for")
    if args.from_samples:
        runs = read_samples(args.from_samples)
        args.runs = len(runs)
    else:
        ensure_environment(repo)
        with noise(args.noise):
            runs = no_op_runs(repo, labels, args.runs)
    if args.samples:
        args.samples.write_text(json.dumps(samples_of(runs)) + "\n")
    slowdowns: dict[str, list[float]] = {}
    wanted = set(labels)
    for run in runs:
        for label, paired in run.items():
            if label in wanted:
                slowdowns.setdefault(label, []).append(paired.slowdown)
    measured = {
        label: floor_of(read) for label, read in slowdowns.items() if len(read) == args.runs
    }
    return Floors(this_host(), args.runs, dict(sorted(measured.items()))), slowdowns


def main() -> int:
    args = parse()
    repo = repo_root()
    facts = {
        "measured": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%MZ"),
        "commit": git("rev-parse", "HEAD", cwd=repo),
        "noise": args.noise,
        **({"from_samples": args.from_samples.name} if args.from_samples else {}),
    }
    if args.out:
        floors, slowdowns = measure(repo, args)
        write_floors(args.out, floors, {**facts, "no_op_slowdowns": slowdowns})
    else:
        branch = ResultsBranch(repo, args.remote, args.branch, fetch=not args.no_fetch)
        with branch.guard.locked():
            branch.check_out()
            if not (repo / RESULTS_DIR / args.machine / "machine.json").exists():
                raise BadInput(
                    f"{args.branch} holds no results of {args.machine!r} yet: "
                    "floors go beside a machine's results (run its nightly first)"
                )
            outbox = Outbox(args.outbox) if args.outbox else None
            if outbox is not None:
                outbox.start(args.machine, branch.remote_base)
            floors, slowdowns = measure(repo, args)
            write_floors(
                repo / RESULTS_DIR / args.machine / FLOORS_FILE,
                floors,
                {**facts, "no_op_slowdowns": slowdowns},
            )
            branch.save(f"{args.machine}: floors of {floors.host}", outbox)
    print(
        f"floors: {len(floors.by_row)} rows on {floors.host}; "
        f"{sum(f > 1.15 for f in floors.by_row.values())} above 1.15"
    )
    return 0


if __name__ == "__main__":
    run_main("floors", main)
