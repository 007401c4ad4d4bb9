"""Compare two torch releases at one commit, row by row: what the upgrade makes slower or
faster on this host, confirmed, and why.

    python -m tools.releases [OLD NEW] [--commit HEAD] [--tier pr] [--machine releases]
                             [--factor 1.15] [--floors FILE] [--summary-file F] [--json F]
                             [--report F] [--outbox DIR --no-fetch] [-- ASV RUN OPTIONS]

OLD and NEW are releases of asv.conf.json's matrix (by default its first, the nightly's,
and its last); asv builds each its own environment. asv records the tier's rows (``pr`` by
default; ``-- --bench REGEX`` chooses others) and their % of peak under both; every timed
row is then measured again by alternation, the two releases' interpreters taking turns on
one core over the commit's library, and judged at its floor on this host (``--floors``) or
at the factor; counts are judged at 1.01 or their row's floor (asv.conf.json) and peak
memory at the factor on asv's numbers. A
row one release skips is n/a. Each row that moved is explained: torch.profiler's operators
under each release, and the functions its count twin's callgrind run saw grow or shrink
(tools/_lib/verdict/release_comparison.py, tools/_lib/measure/explain.py).

The table goes as Markdown to ``$GITHUB_STEP_SUMMARY`` (stdout when unset) and to
``--summary-file``, as JSON to ``--json``, and ``--report`` writes the issues for
tools.file_issues (label ``release-regression``): one per timed row confirmed slower,
closed when a later comparison against OLD finds it no longer slower. With ``--outbox``
the results of both releases, their manifest and the JSON (``releases/NAME.json``, the
site's page) go to the results branch through the outbox, as the nightly's do.

Exit status: 0 no row slower under NEW, 1 a row slower under NEW, 2 a benchmark failed
(raised, or could not be measured again), 3 asv or git failed, 4 bad input (a release the
matrix does not pin, OLD equal to NEW, an unknown commit, a floors file that is not there
or not one).
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import math
import shlex
import sys
from pathlib import Path

from tools._lib.asv.machines import describe_machine, last_level_cache, register_machine, this_host
from tools._lib.asv.matrix import named_release, releases
from tools._lib.asv.results import RESULTS_DIR
from tools._lib.asv.run import ensure_environment
from tools._lib.asv.torch_builds import facts_of, probe, write_manifest
from tools._lib.base.cli import (
    BadInput,
    Status,
    add_judging,
    command_parser,
    machine_name,
    run_main,
)
from tools._lib.base.git import commit_library, repo_root, resolve_commit
from tools._lib.base.step_summary import write_summary
from tools._lib.measure.explain import explain_releases
from tools._lib.measure.host_floors import no_floors, read_floors
from tools._lib.measure.workers import Side
from tools._lib.store.branch import DEFAULT_BRANCH, ResultsBranch
from tools._lib.store.outbox import Outbox, write_atomically
from tools._lib.verdict.gate import DEFAULT_FACTOR, DEFAULT_TIERS
from tools._lib.verdict.release_comparison import ReleaseComparison, ReleaseVerdict
from tools._lib.verdict.release_report import as_json, filing_report, markdown

# The rows that moved most are explained (a profile under each release costs a setup
# each); the table lists every row.
EXPLAINED = 30
VERDICTS = {
    Status.OK: "no row is slower under the new release",
    Status.REGRESSED: "a row is slower under the new release",
    Status.BENCHMARK_FAILED: "a benchmark failed under a release (see the log above)",
    Status.EXTERNAL_FAILURE: "asv failed before giving a verdict (see the log above)",
}


def parse():
    parser = command_parser(__doc__, "run", "--bench Softmax")
    parser.add_argument("old", nargs="?", help="the release upgraded from (default: the first)")
    parser.add_argument("new", nargs="?", help="the release upgraded to (default: the last)")
    parser.add_argument("--commit", default="HEAD", help="the commit measured (default HEAD)")
    parser.add_argument("--tier", action="append", help="the tiers' rows (default pr)")
    parser.add_argument("--machine", default="releases", type=machine_name)
    add_judging(parser, DEFAULT_FACTOR)
    parser.add_argument("--summary-file", type=Path, help="also write the Markdown here")
    parser.add_argument("--json", type=Path, help="write the comparison here as JSON")
    parser.add_argument("--report", type=Path, help="write the issues for tools.file_issues")
    parser.add_argument("--outbox", type=Path, help="land results through this outbox")
    parser.add_argument("--no-fetch", action="store_true", help="no network for the branch")
    parser.add_argument("--remote", default="origin")
    parser.add_argument("--branch", default=DEFAULT_BRANCH)
    args = parser.parse_args()
    if (args.old is None) != (args.new is None):
        raise BadInput("name both releases, OLD and NEW, or neither")
    return args


def chosen(repo: Path, args):
    listed = releases(repo)
    old = named_release(repo, args.old) if args.old else listed[0]
    new = named_release(repo, args.new) if args.new else listed[-1]
    if old == new:
        raise BadInput(f"OLD and NEW are the same release (torch {old.torch}): nothing to compare")
    return old, new


def explained(comparison: ReleaseComparison, verdict: ReleaseVerdict) -> ReleaseVerdict:
    """The verdict with the why of the rows that moved most."""
    moved = sorted(
        (row for row in verdict.rows if row.moved and row.slowdown),
        key=lambda row: -abs(math.log(row.slowdown)),
    )[:EXPLAINED]
    whys = {}
    with commit_library(comparison.repo, comparison.commit) as library:
        sides = tuple(
            Side(name, release.python, library)
            for name, release in zip(comparison.names, comparison.releases, strict=True)
        )
        torches = tuple(release.torch for release in comparison.releases)
        for row in moved:
            whys[row.label] = explain_releases(
                comparison.repo, comparison.commit, sides, torches, row
            )
    rows = [dataclasses.replace(row, explanation=whys.get(row.label, "")) for row in verdict.rows]
    return ReleaseVerdict(verdict.status, rows)


def compare_releases(repo: Path, args, comparison: ReleaseComparison) -> tuple[ReleaseVerdict, str]:
    ensure_environment(repo, comparison.releases)
    measured = comparison.measure(args.tier or list(DEFAULT_TIERS), args.asv_args)
    verdict = comparison.decide(measured)
    if verdict.status != Status.EXTERNAL_FAILURE:
        verdict = explained(comparison, verdict)
    return verdict, datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%MZ")


def main() -> int:
    args = parse()
    repo = repo_root()
    old, new = chosen(repo, args)
    host = (this_host(), last_level_cache())
    floors = read_floors(args.floors, host[0]) if args.floors else no_floors(host[0])
    commit = resolve_commit(args.commit, repo)
    comparison = ReleaseComparison(repo, commit, (old, new), args.machine, args.factor, floors)
    register_machine(args.machine)
    if args.outbox:
        branch = ResultsBranch(repo, args.remote, args.branch, fetch=not args.no_fetch)
        with branch.guard.locked():
            branch.check_out()
            branch.guard.check_machine(args.machine, describe_machine(args.machine))
            outbox = Outbox(args.outbox)
            outbox.start(args.machine, branch.remote_base)
            verdict, measured = compare_releases(repo, args, comparison)
            write_manifest(repo, args.machine, comparison.releases)
            data = as_json(comparison, verdict, facts(repo, comparison), host, measured)
            target = repo / RESULTS_DIR / "releases" / f"{args.machine}.json"
            write_atomically(target, (json.dumps(data, indent=1) + "\n").encode())
            branch.save(f"{args.machine}: torch {new.torch} against {old.torch}", outbox)
    else:
        verdict, measured = compare_releases(repo, args, comparison)
        data = as_json(comparison, verdict, facts(repo, comparison), host, measured)
    if verdict.status == Status.EXTERNAL_FAILURE:
        print(f"releases: {VERDICTS[verdict.status]}")
        return verdict.status
    command = shlex.join(["python", "-m", "tools.releases", *sys.argv[1:]])
    text = markdown(comparison, verdict, facts_from(data), host, command)
    write_summary(text)
    for path, content in (
        (args.summary_file, text),
        (args.json, json.dumps(data, indent=1) + "\n"),
        (
            args.report,
            json.dumps(filing_report(comparison, verdict, host).to_json(), indent=1) + "\n",
        ),
    ):
        if path:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content)
    print(f"releases: {VERDICTS[verdict.status]}")
    return verdict.status


def facts(repo: Path, comparison: ReleaseComparison) -> dict[str, dict[str, str]]:
    """Each release's build facts, by the table's name for it (the manifest's probe)."""
    return {
        name: facts_of(probe(repo, release.python)[0])
        for name, release in zip(comparison.names, comparison.releases, strict=True)
    }


def facts_from(data: dict) -> dict[str, dict[str, str]]:
    return {f"torch {release['torch']}": release["facts"] for release in data["releases"]}


if __name__ == "__main__":
    run_main("releases", main)
