"""Bisect a slowdown: which commit in GOOD..BAD made one benchmark slower?

    python -m tools.bisect_slowdown GOOD BAD BENCHMARK [--params REGEX] [--invert]
                                    [--machine bisect] [-- ASV FIND OPTIONS]

BENCHMARK is a full name (``bench_activation.Silu.time_silu``) or a regex that matches
exactly one; otherwise the candidates are listed. ``--params`` narrows it to the
combinations it matches, e.g. ``"'cpu', 'float32'"``. The row that moved most from GOOD to
BAD, measured by alternation, is bisected by ``asv find`` (its results join the machine's
history), and its verdict checked by alternation and bisected again where it does not hold
(tools/_lib/triage/bisection.py); the verdict names the guilty commit with its subject and the row
before and after it. An instruction count's verdict, and that of ``--invert`` (a speed-up,
the rarer search), is asv find's. A rate (GB/s, % of peak) is searched for a fall.

Exit status: 0 a commit named, 3 asv or git failed, 4 bad input (an unknown commit or
benchmark, GOOD not an ancestor of BAD, or no slowdown from GOOD to BAD measured again).
"""

from __future__ import annotations

import re

from tools._lib.asv.machines import register_machine
from tools._lib.asv.matrix import default_release
from tools._lib.asv.results import RESULTS_DIR
from tools._lib.asv.suites import discovered
from tools._lib.base.cli import BadInput, command_parser, regex, run_main
from tools._lib.base.git import repo_root, resolve_commit
from tools._lib.base.step_summary import append_step_summary
from tools._lib.measure.alternation import compare_commits
from tools._lib.measure.comparison import compare, higher_is_better, is_count, row_selection
from tools._lib.triage.bisection import asv_find, find_range, locate, resolve_benchmark, verdict


def parse():
    parser = command_parser(__doc__, "find")
    parser.add_argument("good", help="a commit without the slowdown")
    parser.add_argument("bad", help="a later commit with it")
    parser.add_argument("benchmark", help="full benchmark name, or a regex matching one")
    parser.add_argument("--machine", default="bisect", help="asv machine name")
    parser.add_argument(
        "--params", type=regex, help="regex of the parameter combinations to measure"
    )
    parser.add_argument("--invert", action="store_true", help="look for a speed-up instead")
    return parser.parse_args()


def main() -> int:
    args = parse()
    repo = repo_root()
    good, bad = resolve_commit(args.good, repo), resolve_commit(args.bad, repo)
    find_range(repo, good, bad)  # bad input (not an ancestor, nothing between) before any run
    benchmarks = discovered(repo)
    benchmark = resolve_benchmark(args.benchmark, sorted(benchmarks))
    unit, rows = benchmarks[benchmark]
    if args.params:
        rows = [row for row in rows if re.search(args.params, row[len(benchmark) :])]
    register_machine(args.machine)
    if is_count(unit) or args.invert:  # asv find's own measurements are the verdict
        selection = "|".join(row_selection(row) for row in rows)
        found = asv_find(
            repo,
            args.machine,
            good,
            bad,
            selection,
            asv_args=tuple(args.asv_args),
            invert=higher_is_better(unit) != args.invert,
        )
        env = default_release(repo).env_name
        moved = compare(
            repo / RESULTS_DIR,
            args.machine,
            (found.parent, env),
            (found.guilty, env),
            {benchmark: unit},
        )
        step = max(moved, key=lambda row: row.slowdown ** (-1 if args.invert else 1), default=None)
        label = step.label if step else benchmark
    else:
        label, whole = most_slowed(repo, rows, good, bad)
        found, step = locate(
            repo, args.machine, label, unit, good, bad, whole, tuple(args.asv_args)
        )
    text = verdict(repo, found, label, step)
    print(text)
    append_step_summary(f"## Bisect: {benchmark}\n\n```\n{text}\n```")
    return 0


def most_slowed(repo, rows: list[str], good: str, bad: str):
    """The row slowed most from GOOD to BAD, measured by alternation, and that measurement;
    bad input when none is slower."""
    measured = [o.paired for o in compare_commits(repo, good, bad, rows).values() if o.paired]
    slowed = [paired for paired in measured if paired.slower(1.0)]
    if not slowed:
        shown = ", ".join(f"{p.label}: {p.slowdown:.2f}x" for p in measured) or "no row measured"
        raise BadInput(f"no row is slower at {bad[:12]} than at {good[:12]} ({shown})")
    whole = max(slowed, key=lambda paired: paired.slowdown)
    return whole.label, whole


if __name__ == "__main__":
    run_main("bisect_slowdown", main)
