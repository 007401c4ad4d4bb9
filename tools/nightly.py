"""The nightly run of one machine: benchmark the newest commits it has not measured yet,
saving each commit's results as soon as it is measured, and optionally publish the site.

    python -m tools.nightly --machine NAME [--tier nightly|weekly] [--max-commits 5]
                            [--shard I/K] [--releases default|others|all|V,V]
                            [--budget-minutes M]
                            [--outbox DIR --no-fetch] [--site _site] [-- ASV RUN OPTIONS]

1. The results branch is checked out clean at ``.asv/results`` (tools/_lib/store/branch.py),
   after checking it was not rewound or replaced, and that ``--machine`` does not already
   stand for other hardware there.
2. The commits to run: the newest ``--max-commits`` first-parent commits of ``--ref``
   whose results on this machine lack some benchmark of the tier under one of the
   releases (a new commit, or one measured only in part: a bisection step, a benchmark
   added since). ``--tier nightly`` (the default) is the ``pr`` and ``nightly`` rows,
   ``--tier weekly`` the sweeps (benchmarks/_harness/tiers.py); both land in the same
   result files. ``--releases`` says under which torch releases of asv's matrix: the
   default release (the default), the ``others`` (the releases run), ``all``, or named
   versions; each keeps its own result files and its own series on the site.
   ``--shard I/K`` runs the I-th of K shards of the tier, whole classes balanced by rows
   (benchmarks/_harness/tiers.py), under the same machine name as the others: K runners
   of one machine class share a night, and a commit lacks rows of this shard only where
   this shard did not finish it.
3. Each commit in turn: ``asv run`` of the tier's rows it lacks, a manifest of the
   environments, then its files are landed: committed and pushed (replayed onto the new
   tip if another machine or shard pushed first, a result file that both wrote merged
   benchmark by benchmark), or, with ``--outbox``, committed here and copied
   to the outbox for a job holding the write token to push (tools/push_results.py).
   A run cut at any point keeps every commit it finished; the next run does the rest.
   ``--budget-minutes`` stops before a commit that would not fit: it waits for the next
   night.
4. A full run of the nightly tier under the default release keeps, beside the results, the
   map of what each pr row reaches at the newest commit of ``--ref``
   (``reach/<machine>.json``): the PR gate selects the rows a change can reach with it
   (tools/_lib/reach/selection.py).
5. With ``--site``, every machine's results are published there.

A selection or a quick run (``-- --bench X``, ``--quick``, ``-a``) is partial: its results
go under the machine name NAME-partial, never shadowing NAME's full results; a
``--bench`` of the caller's replaces the tier's.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from tools._lib.asv.machines import describe_machine, register_machine
from tools._lib.asv.matrix import Release, chosen_releases, default_release
from tools._lib.asv.results import RESULTS_DIR, machine_result_files
from tools._lib.asv.run import ENVIRONMENT_OPTIONS, asv, bench_selection, ensure_environment
from tools._lib.asv.suites import tier_rows, tier_selection
from tools._lib.asv.torch_builds import write_manifest
from tools._lib.base.cli import (
    BadInput,
    ExternalFailure,
    Status,
    command_parser,
    machine_name,
    minutes,
    run_main,
)
from tools._lib.base.git import first_parent_commits, repo_root
from tools._lib.reach.reach_map import refresh_branch_map, traced_rows
from tools._lib.store.branch import DEFAULT_BRANCH, ResultsBranch
from tools._lib.store.outbox import Outbox
from tools._lib.store.site import publish
from tools._lib.verdict.gate import DEFAULT_TIERS

# asv run options that measure less than the full suite, or measure it less well.
PARTIAL_OPTIONS = ("--bench", "-b", "--quick", "-q", "--attribute", "-a")
PARTIAL_SUFFIX = "-partial"
# What each --tier runs (benchmarks/_harness/tiers.py).
RUNS = {"nightly": ("pr", "nightly"), "weekly": ("weekly",)}


def shard_spec(text: str) -> tuple[int, int]:
    """``I/K``: the I-th of K shards, 1 <= I <= K."""
    index, _, count = text.partition("/")
    if not (index.isdigit() and count.isdigit() and 1 <= int(index) <= int(count)):
        raise argparse.ArgumentTypeError(f"{text!r} is not I/K with 1 <= I <= K, e.g. 2/3")
    return int(index), int(count)


def is_partial(asv_args: list[str]) -> bool:
    return any(arg.split("=")[0] in PARTIAL_OPTIONS for arg in asv_args)


def commits_to_run(
    repo: Path,
    machine: str,
    ref: str,
    limit: int,
    env_names: list[str],
    expected: set[str] | None = None,
) -> list[str]:
    """The newest ``limit`` first-parent commits of ``ref`` whose results on ``machine``
    under one of the environments lack one of the ``expected`` benchmarks (None: that
    have no result file there at all)."""
    covered: dict[tuple[str, str], set[str]] = {}
    for data in machine_result_files(repo / RESULTS_DIR, machine).values():
        side = (data["commit_hash"], data.get("env_name"))
        covered.setdefault(side, set()).update(data.get("results", {}))

    def lacking(commit: str, env: str) -> bool:
        if (commit, env) not in covered:
            return True
        return expected is not None and not expected <= covered[commit, env]

    wanted = [
        commit
        for commit in first_parent_commits(ref, repo)
        if any(lacking(commit, env) for env in env_names)
    ]
    return wanted[:limit]


class Night:
    """One machine's run: the branch, where results go, and the time budget."""

    def __init__(self, args, repo: Path):
        self.args, self.repo = args, repo
        self.machine = args.machine + (PARTIAL_SUFFIX if is_partial(args.asv_args) else "")
        self.branch = ResultsBranch(repo, args.remote, args.branch, fetch=not args.no_fetch)
        self.outbox = Outbox(args.outbox) if args.outbox else None
        self.started = time.monotonic()
        self.longest = 0.0
        self.selection, self.expected = tier_selection(repo, RUNS[args.tier], args.shard)
        if is_partial(args.asv_args):
            self.expected = None  # a partial run's results never count as complete
        if any(arg.split("=")[0] in ENVIRONMENT_OPTIONS for arg in args.asv_args):
            raise BadInput("choose torch releases with --releases, not asv's -E")
        self.releases: list[Release] = []  # read from asv.conf.json once the branch is checked

    def fits(self) -> bool:
        """Whether one more commit, as long as the longest so far, fits the budget."""
        if self.args.budget_minutes is None:
            return True
        spent = time.monotonic() - self.started
        return spent + self.longest <= self.args.budget_minutes * 60

    def measure(self, commit: str) -> bool:
        """Benchmark ``commit`` and save its results; True when a benchmark failed."""
        begun = time.monotonic()
        done = asv(
            "run",
            *(arg for release in self.releases for arg in ("-E", release.env_name)),
            "--machine",
            self.machine,
            "--skip-existing",
            *self.args.asv_args,
            *([] if bench_selection(self.args.asv_args) else ["--bench", self.selection]),
            f"{commit}^!",
            cwd=self.repo,
        )
        # asv run exits 2 when a benchmark failed: its results, failures included, are
        # still the record for the commit. Anything else means no usable results.
        if done.returncode not in (0, 2):
            raise ExternalFailure(f"asv run exited {done.returncode} on {commit[:8]}")
        write_manifest(self.repo, self.machine, self.releases)
        self.save(f"{self.machine}: results for {commit[:8]}")
        self.longest = max(self.longest, time.monotonic() - begun)
        return done.returncode == 2

    def map_reach(self) -> None:
        """What each of the gate's rows reaches at the newest commit, kept beside the
        results, where a full nightly-tier run under the default release made it."""
        release = default_release(self.repo)
        if self.args.tier != "nightly" or self.expected is None or release not in self.releases:
            return
        if self.args.shard is not None and self.args.shard[0] != 1:
            return  # the first shard maps every row, once a night
        newest = first_parent_commits(self.args.ref, self.repo)[0]
        _, labels = traced_rows(self.repo, tier_rows(self.repo, DEFAULT_TIERS))
        if refresh_branch_map(
            self.repo / RESULTS_DIR, self.machine, self.repo, newest, labels, release.python
        ):
            self.save(f"{self.machine}: what the gate's rows reach at {newest[:8]}")

    def save(self, message: str) -> None:
        landed = self.branch.save(message, self.outbox)
        where = (
            f"added to {self.outbox.path}"
            if self.outbox
            else f"pushed to {self.args.remote} {self.args.branch}"
        )
        print(f"nightly: {message}: {where if landed else 'nothing new'}", flush=True)

    def run(self) -> int:
        branch = self.branch
        with branch.guard.locked():
            branch.check_out()
            if self.outbox is not None:
                self.outbox.start(self.machine, branch.remote_base)
            register_machine(self.machine)
            branch.guard.check_machine(self.machine, describe_machine(self.machine))
            self.releases = chosen_releases(self.repo, self.args.releases)
            ensure_environment(self.repo, self.releases)
            commits = commits_to_run(
                self.repo,
                self.machine,
                self.args.ref,
                self.args.max_commits,
                [release.env_name for release in self.releases],
                self.expected,
            )
            failed = False
            if self.args.shard is not None:
                index, count = self.args.shard
                print(f"nightly: shard {index} of {count}: {len(self.expected or ())} benchmarks")
            if not commits:
                print(f"nightly: every one of the newest commits of {self.args.ref} has results")
            for number, commit in enumerate(commits):
                if not self.fits():
                    print(f"nightly: budget spent; {len(commits) - number} commits wait")
                    break
                print(
                    f"nightly: benchmarking {commit[:8]} ({number + 1} of {len(commits)}) "
                    f"on {self.machine}",
                    flush=True,
                )
                failed |= self.measure(commit)
            self.map_reach()
        if self.args.site:
            publish(self.repo, self.args.site)
        if failed:
            print("nightly: some benchmarks failed (results saved); see asv's output above")
            return Status.REGRESSED
        return 0


def main() -> int:
    parser = command_parser(__doc__, "run")
    parser.add_argument(
        "--machine", required=True, type=machine_name, help="stable machine name, e.g. gha-cpu"
    )
    parser.add_argument(
        "--tier",
        choices=sorted(RUNS),
        default="nightly",
        help="nightly: the pr and nightly rows (default); weekly: the shape sweeps",
    )
    parser.add_argument("--max-commits", type=int, default=5, metavar="K")
    parser.add_argument(
        "--shard",
        type=shard_spec,
        metavar="I/K",
        help="run the I-th of K shards of the tier (K runners of one machine class)",
    )
    parser.add_argument(
        "--releases",
        default="default",
        metavar="SPEC",
        help="torch releases of asv's matrix: default (the first), others, all, or V,V",
    )
    parser.add_argument(
        "--budget-minutes",
        type=minutes,
        metavar="M",
        help="start no commit that would end past M minutes",
    )
    parser.add_argument("--ref", default="HEAD", help="history to benchmark (default HEAD)")
    parser.add_argument("--remote", default="origin")
    parser.add_argument("--branch", default=DEFAULT_BRANCH, help="the results branch")
    parser.add_argument(
        "--outbox", type=Path, help="save results here for tools.push_results instead of pushing"
    )
    parser.add_argument(
        "--no-fetch",
        action="store_true",
        help="use the results branch the clone already has (no network)",
    )
    parser.add_argument("--site", type=Path, help="publish every machine's results here")
    args = parser.parse_args()
    if args.max_commits < 1:
        raise BadInput("--max-commits must be at least 1")
    return Night(args, repo_root()).run()


if __name__ == "__main__":
    run_main("nightly", main)
