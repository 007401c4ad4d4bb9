"""Bisect a slowdown: which commit in GOOD..BAD made one benchmark slower?

    python -m tools.bisect_slowdown GOOD BAD BENCHMARK [--params REGEX] [-- ASV OPTIONS]

BENCHMARK is a full name (``bench_activation.Silu.time_silu``) or a regex that matches
exactly one; otherwise the candidates are listed. ``asv find`` then bisects GOOD..BAD
(GOOD included) on that benchmark, and the verdict names the guilty commit with its
subject and the times before and after it, for the parameter combination that moved most.

``asv find`` assumes one step change in the range, and it follows single measurements: one
slow process can make it name the wrong commit. So a wall-time verdict is checked. The row
that moved most from GOOD to BAD is measured again at both ends, interleaved, in four
processes a side (the PR gate's confirming pass); then the named commit against its parent
the same way, and the stretches before and after it. If that step is not slower,
significantly, by the square root of the whole (the guilty commit carries most of it), or
a stretch beside it is, the range is bisected again with such interleaved pairs, each
middle commit against the last one known good. Instruction counts are
deterministic, so their verdict is asv find's; so is that of ``--invert`` (a speed-up, the
rarer search). A rate (GB/s, % of peak) is searched for a fall. ``--params`` narrows the
benchmark to the combinations it matches, e.g. ``"'cpu', 'float32'"``.

Exit status: 0 a commit named, 3 asv or git failed, 4 bad input (an unknown commit or
benchmark, GOOD not an ancestor of BAD, or no slowdown from GOOD to BAD measured again).
"""

from __future__ import annotations

import difflib
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from asv.config import Config

from tools.common import (
    RESULTS_DIR,
    ArgumentParser,
    BadInput,
    ExternalFailure,
    Row,
    append_step_summary,
    asv_environment,
    asv_executable,
    bench_selection,
    compare,
    discovered_units,
    first_parent_commits,
    git,
    higher_is_better,
    register_machine,
    repo_root,
    resolve_commit,
    row_selection,
    run_main,
)
from tools.pr_gate import CONFIRMING_ROUNDS, COUNT_UNIT, DEFAULT_FACTOR, Gate

FOUND = re.compile(r"Greatest (?:regression|improvement) found: ([0-9a-f]{7,40})")


def resolve_benchmark(pattern: str, names: list[str]) -> str:
    if pattern in names:
        return pattern
    try:
        matches = [name for name in names if re.search(pattern, name)]
    except re.error as error:
        raise BadInput(f"benchmark {pattern!r} is not a valid regex: {error}") from None
    if len(matches) == 1:
        return matches[0]
    candidates = matches or difflib.get_close_matches(pattern, names, n=10, cutoff=0.4)
    shown = ", ".join(candidates[:20]) + (" ..." if len(candidates) > 20 else "")
    if matches:
        raise BadInput(f"{pattern!r} matches {len(matches)} benchmarks: {shown}")
    raise BadInput(f"{pattern!r} matches no benchmark" + (f"; close: {shown}" if shown else ""))


def find_range(repo: Path, good: str, bad: str) -> tuple[str, list[str]]:
    """asv's range spec with GOOD included (``A..B`` leaves A out), and its commits."""
    if subprocess.run(["git", "merge-base", "--is-ancestor", good, bad], cwd=repo).returncode:
        raise BadInput(f"{good} is not an ancestor of {bad}")
    has_parent = git("rev-parse", "--verify", "--quiet", f"{good}^", cwd=repo, check=False)
    spec = f"{bad} ^{good}^" if has_parent else bad
    commits = first_parent_commits(spec.split(), repo)
    if len(commits) < 2:
        raise BadInput(f"{good}..{bad} holds no commit to bisect")
    return spec, commits


FOR_COMMIT = re.compile(r"For \S+ commit ([0-9a-f]{7,40})")


@dataclass(frozen=True)
class Bisection:
    """What ``asv find`` named: the guilty commit, its parent, and how many commits it
    built and measured to get there."""

    guilty: str
    parent: str
    builds: int


def bisect(
    repo: Path,
    machine: str,
    good: str,
    bad: str,
    selection: str,
    *,
    invert: bool = False,
    asv_args: tuple[str, ...] = (),
) -> Bisection:
    """``asv find`` over GOOD..BAD with GOOD included, on the benchmark rows ``selection``
    (a regex asv matches against ``name(params)``), echoed as it runs. Its results join
    ``machine``'s history like any other. ``invert``: look for a fall (a rate that
    dropped is the slowdown)."""
    spec, commits = find_range(repo, good, bad)
    launch = Config.load(str(repo / "asv.conf.json")).launch_method or "spawn"
    # asv find ignores the config's launch_method; pass it on so bisect measures alike.
    command = [
        asv_executable(),
        "find",
        "--machine",
        machine,
        "--launch-method",
        launch,
        *(["--invert"] if invert else []),
        *asv_args,
        spec,
        selection,
    ]
    lines = []
    with subprocess.Popen(
        command,
        cwd=repo,
        stdout=subprocess.PIPE,
        text=True,
        env=asv_environment(repo, selection=bench_selection(command[1:])),
    ) as process:
        for line in process.stdout:
            print(line, end="", flush=True)
            lines.append(line)
    if process.returncode != 0:
        raise ExternalFailure(f"asv find exited {process.returncode}")
    found = [match.group(1) for line in lines if (match := FOUND.search(line))]
    if not found:
        raise ExternalFailure("asv find named no commit")
    oldest_first = commits[::-1]
    (index,) = [i for i, commit in enumerate(oldest_first) if commit.startswith(found[-1])]
    if index == 0:
        raise ExternalFailure(f"asv find named {found[-1]}, the first commit of the range")
    builds = len({match.group(1) for line in lines if (match := FOR_COMMIT.search(line))})
    return Bisection(oldest_first[index], oldest_first[index - 1], builds)


SCRATCH_SUFFIX = "-pairs"  # an interleaved pair's results: measured, then thrown away


def measure_pair(repo: Path, machine: str, label: str, first: str, second: str) -> Row | None:
    """The row ``label`` at two commits, measured again interleaved by the PR gate's
    confirming pass, on a scratch machine name whose results are thrown away."""
    scratch = machine + SCRATCH_SUFFIX
    register_machine(scratch)
    # The factor sets only asv's own exit status, which is read as "measured" either way.
    gate = Gate(repo, first, second, DEFAULT_FACTOR, scratch)
    try:
        status = gate.continuous("--bench", row_selection(label), *CONFIRMING_ROUNDS)
        if status not in (0, 1):
            raise ExternalFailure(f"asv continuous exited {status} measuring {label}")
        rows = [row for row in gate.rows() if row.label == label]
    finally:
        shutil.rmtree(repo / RESULTS_DIR / scratch, ignore_errors=True)
    return rows[0] if rows else None


def pair_search(
    repo: Path, machine: str, label: str, good: str, bad: str, bar: float
) -> tuple[Bisection, Row | None]:
    """Bisect GOOD..BAD with interleaved pairs against the last commit known good: a middle
    commit is "after" when it is ``bar`` times slower. The verdict, and its row measured
    against its parent."""
    commits = find_range(repo, good, bad)[1][::-1]
    lo, hi, built, measured = 0, len(commits) - 1, set(), {}
    while hi - lo > 1:
        mid = (lo + hi) // 2
        row = measure_pair(repo, machine, label, commits[lo], commits[mid])
        built |= {commits[lo], commits[mid]}
        measured[lo, mid] = row
        if row is not None and row.slowdown >= bar:
            hi = mid
        else:
            lo = mid
    if (hi - 1, hi) in measured:
        row = measured[hi - 1, hi]
    else:
        row = measure_pair(repo, machine, label, commits[hi - 1], commits[hi])
    return Bisection(commits[hi], commits[hi - 1], len(built | {commits[hi - 1]})), row


def checked(
    repo: Path, machine: str, label: str, good: str, bad: str, found: Bisection, whole: Row
) -> tuple[Bisection, Row | None]:
    """asv find's verdict ``found`` on the wall-time row ``label``, whose whole step GOOD ->
    BAD measured again is ``whole``. Measured again interleaved, the named commit must
    carry the step: slower than its parent, significantly, by the square root of the whole
    step (it carries most of it), while neither the stretch before it (GOOD -> parent)
    nor the one after it (guilty -> BAD) is. Otherwise (asv find follows single
    measurements, which one slow process can mislead, and a busy runner can make one
    interleaved pair of equal commits read 1.16x) the range is bisected again with
    interleaved pairs. The verdict and its row."""
    bar = whole.slowdown**0.5
    row = measure_pair(repo, machine, label, found.parent, found.guilty)
    if row is None or not row.slower(bar):
        shown = f"{row.slowdown:.2f}x" if row is not None else "no result"
        doubt = f"which measured again is {shown} (below {bar:.2f}x)"
    else:
        doubt = stretch_also_slower(repo, machine, label, (good, found.parent), bar) or (
            stretch_also_slower(repo, machine, label, (found.guilty, bad), bar)
        )
        if not doubt:
            return found, row
    print(
        f"bisect: asv find named {found.guilty[:12]}, {doubt}; "
        "bisecting again with interleaved pairs",
        flush=True,
    )
    again, row = pair_search(repo, machine, label, good, bad, bar)
    return Bisection(again.guilty, again.parent, found.builds + again.builds), row


def stretch_also_slower(
    repo: Path, machine: str, label: str, stretch: tuple[str, str], bar: float
) -> str:
    """Why the stretch ``first -> second`` (beside a named commit) casts doubt on it: it
    is ``bar`` times slower as well, measured again; empty when it is not, or is empty."""
    first, second = stretch
    if first == second:
        return ""
    row = measure_pair(repo, machine, label, first, second)
    if row is None or not row.slower(bar):
        return ""
    return f"but {first[:12]} -> {second[:12]} is {row.slowdown:.2f}x slower as well"


def verdict(repo: Path, found: Bisection, row: Row | None) -> str:
    """The guilty commit with its subject, and the row's values before and after it."""
    subject = git("log", "-1", "--format=%s", found.guilty, cwd=repo)
    lines = [f"guilty commit: {found.guilty[:12]} {subject!r}"]
    if row is not None:
        lines.append(
            f"{row.label}: {row.shown(row.before)} at {found.parent[:12]} -> "
            f"{row.shown(row.after)} at {found.guilty[:12]} ({row.slowdown:.2f}x)"
        )
    return "\n".join(lines)


def rows_across(repo: Path, machine: str, benchmark: str, unit: str, first: str, second: str):
    """The benchmark's rows from ``first`` to ``second`` as asv find saved them."""
    rows = compare(repo / RESULTS_DIR, machine, first, second, {benchmark: unit})
    return [row for row in rows if row.benchmark == benchmark]


def main() -> int:
    parser = ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="Arguments after -- go to asv find, e.g. -- --show-stderr",
    )
    parser.add_argument("good", help="a commit without the slowdown")
    parser.add_argument("bad", help="a later commit with it")
    parser.add_argument("benchmark", help="full benchmark name, or a regex matching one")
    parser.add_argument("--machine", default="bisect", help="asv machine name")
    parser.add_argument("--params", help="regex of the parameter combinations to measure")
    parser.add_argument(
        "--invert", action="store_true", help="look for a speed-up instead (not checked)"
    )
    parser.set_defaults(asv_args=[])  # after --
    args = parser.parse_args()
    repo = repo_root()
    good, bad = resolve_commit(args.good, repo), resolve_commit(args.bad, repo)
    units = discovered_units(repo)
    benchmark = resolve_benchmark(args.benchmark, sorted(units))
    register_machine(args.machine)
    selection = f"^{re.escape(benchmark)}" + (rf"\(.*{args.params}" if args.params else r"(\(|$)")
    unit = units[benchmark]
    # asv find follows a rise; a slowdown of a rate is a fall, and so is a speed-up of a time.
    fall = higher_is_better(unit) != args.invert
    found = bisect(
        repo, args.machine, good, bad, selection, invert=fall, asv_args=tuple(args.asv_args)
    )
    if unit == COUNT_UNIT or args.invert:  # asv find's own measurements are the verdict
        moved = rows_across(repo, args.machine, benchmark, unit, found.parent, found.guilty)
        row = max(moved, key=lambda row: row.slowdown ** (-1 if args.invert else 1), default=None)
    else:
        moved = rows_across(repo, args.machine, benchmark, unit, good, bad)
        if not moved:
            raise ExternalFailure(f"asv find left no result of {benchmark} at both ends")
        label = max(moved, key=lambda row: row.slowdown).label
        whole = measure_pair(repo, args.machine, label, good, bad)
        if whole is None or not whole.slower(1.0):
            shown = f"{whole.slowdown:.2f}x" if whole is not None else "no result"
            raise BadInput(f"{label} is not slower at {bad[:12]} than at {good[:12]}: {shown}")
        found, row = checked(repo, args.machine, label, good, bad, found, whole)
    text = verdict(repo, found, row)
    print(text)
    append_step_summary(f"## Bisect: {benchmark}\n\n```\n{text}\n```")
    return 0


if __name__ == "__main__":
    run_main("bisect_slowdown", main)
