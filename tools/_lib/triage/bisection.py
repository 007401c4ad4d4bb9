"""Which commit in GOOD..BAD made one row slower: ``asv find`` over the range (its results join
the machine's history), its verdict checked by alternation, and bisected again by
alternation where it does not hold.

``asv find`` assumes one step in the range and follows single measurements: one slow
process can make it name the wrong commit. So a wall-time verdict is checked: the named
commit against its parent must be slower, significantly, by the square root of the whole
step (it carries most of it), and neither the stretch before it nor the one after it may
be; otherwise the range is bisected again with alternated pairs, each middle commit
against the last one known good. An instruction count is deterministic: asv find's verdict
on it stands.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from tools._lib.asv.matrix import default_release
from tools._lib.asv.results import RESULTS_DIR
from tools._lib.asv.run import (
    asv_environment,
    asv_executable,
    bench_selection,
    launch_method,
    run_folder,
    with_environment,
)
from tools._lib.base.cli import BadInput, ExternalFailure
from tools._lib.base.git import (
    commit_count,
    first_parent_commits,
    git,
    is_ancestor,
    subject_and_author,
)
from tools._lib.measure.alternation import measure_pair
from tools._lib.measure.comparison import (
    Row,
    compare,
    higher_is_better,
    is_count,
    row_selection,
    shown,
)
from tools._lib.measure.paired import Paired

FOUND = re.compile(r"Greatest (?:regression|improvement) found: ([0-9a-f]{7,40})")
FOR_COMMIT = re.compile(r"For \S+ commit ([0-9a-f]{7,40})")


def resolve_benchmark(pattern: str, names: list[str]) -> str:
    """The one benchmark ``pattern`` names (a full name or a regex); bad input listing
    the candidates otherwise."""
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
    """asv's range spec with GOOD included (``A..B`` leaves A out), and its commits,
    newest first."""
    if not is_ancestor(good, bad, repo):
        raise BadInput(f"{good} is not an ancestor of {bad}")
    has_parent = git("rev-parse", "--verify", "--quiet", f"{good}^", cwd=repo, check=False)
    spec = f"{bad} ^{good}^" if has_parent else bad
    commits = first_parent_commits(spec.split(), repo)
    if len(commits) < 2:
        raise BadInput(f"{good}..{bad} holds no commit to bisect")
    return spec, commits


@dataclass(frozen=True)
class Bisection:
    """The guilty commit, its parent, and how many commits were built to get there."""

    guilty: str
    parent: str
    builds: int


def echoed(command: list[str], repo: Path) -> list[str]:
    """``asv find``'s lines, echoed as it runs, in a folder of its own."""
    lines = []
    env = asv_environment(repo, selection=bench_selection(command[1:]))
    with (
        run_folder(env) as env,
        subprocess.Popen(command, cwd=repo, stdout=subprocess.PIPE, text=True, env=env) as found,
    ):
        for line in found.stdout:
            print(line, end="", flush=True)
            lines.append(line)
    if found.returncode != 0:
        raise ExternalFailure(f"asv find exited {found.returncode}")
    return lines


def asv_find(
    repo: Path,
    machine: str,
    good: str,
    bad: str,
    selection: str,
    *,
    invert: bool,
    asv_args: tuple[str, ...] = (),
) -> Bisection:
    """``asv find`` over GOOD..BAD with GOOD included, on the rows ``selection`` (a regex
    asv matches against ``name(params)``), echoed as it runs. ``invert``: look for a fall
    (a rate that dropped is the slowdown)."""
    spec, commits = find_range(repo, good, bad)
    command = [
        asv_executable(),
        *with_environment(
            [
                "find",
                "--machine",
                machine,
                "--launch-method",
                launch_method(repo),  # asv find ignores the config's
                *(["--invert"] if invert else []),
                *asv_args,
                spec,
                selection,
            ],
            repo,
        ),
    ]
    lines = echoed(command, repo)
    named = [match.group(1) for line in lines if (match := FOUND.search(line))]
    if not named:
        raise ExternalFailure("asv find named no commit")
    oldest_first = commits[::-1]
    (index,) = [i for i, commit in enumerate(oldest_first) if commit.startswith(named[-1])]
    if index == 0:
        raise ExternalFailure(f"asv find named {named[-1]}, the first commit of the range")
    builds = len({match.group(1) for line in lines if (match := FOR_COMMIT.search(line))})
    return Bisection(oldest_first[index], oldest_first[index - 1], builds)


def pair_search(repo: Path, label: str, good: str, bad: str, bar: float):
    """Bisect GOOD..BAD with alternated pairs against the last commit known good: a middle
    commit is "after" when it is ``bar`` times slower. The verdict, and its row measured
    against its parent."""
    commits = find_range(repo, good, bad)[1][::-1]
    lo, hi, built, measured = 0, len(commits) - 1, set(), {}
    while hi - lo > 1:
        mid = (lo + hi) // 2
        paired = measure_pair(repo, label, commits[lo], commits[mid], threshold=bar)
        built |= {commits[lo], commits[mid]}
        measured[lo, mid] = paired
        if paired is not None and paired.slowdown >= bar:
            hi = mid
        else:
            lo = mid
    paired = measured.get((hi - 1, hi)) or measure_pair(
        repo, label, commits[hi - 1], commits[hi], threshold=bar
    )
    return Bisection(commits[hi], commits[hi - 1], len(built | {commits[hi - 1]})), paired


def stretch_doubt(repo: Path, label: str, first: str, second: str, bar: float) -> str:
    """Why the stretch ``first -> second`` beside a named commit casts doubt on it: it is
    ``bar`` times slower as well; empty when it is not, or is empty."""
    if first == second:
        return ""
    paired = measure_pair(repo, label, first, second, threshold=bar)
    if paired is None or not paired.slower(bar):
        return ""
    return f"but {first[:12]} -> {second[:12]} is {paired.slowdown:.2f}x slower as well"


def checked(repo: Path, label: str, good: str, bad: str, found: Bisection, whole: Paired):
    """asv find's verdict ``found`` on the wall-time row ``label``, whose whole step is
    ``whole``, kept when it holds measured again, else bisected again by pairs. The
    verdict and the named commit's pair."""
    bar = whole.slowdown**0.5
    paired = measure_pair(repo, label, found.parent, found.guilty, threshold=bar)
    if paired is None or not paired.slower(bar):
        reading = f"{paired.slowdown:.2f}x" if paired is not None else "no result"
        doubt = f"which measured again is {reading} (below {bar:.2f}x)"
    else:
        doubt = stretch_doubt(repo, label, good, found.parent, bar) or stretch_doubt(
            repo, label, found.guilty, bad, bar
        )
        if not doubt:
            return found, paired
    print(
        f"bisect: asv find named {found.guilty[:12]}, {doubt}; bisecting again with "
        "alternated pairs",
        flush=True,
    )
    again, paired = pair_search(repo, label, good, bad, bar)
    return Bisection(again.guilty, again.parent, found.builds + again.builds), paired


def counted_step(repo: Path, machine: str, label: str, unit: str, found: Bisection) -> Row | None:
    """A count row across the named commit, as asv find recorded it."""
    benchmark = label.split("(", 1)[0]
    env = default_release(repo).env_name
    rows = compare(
        repo / RESULTS_DIR, machine, (found.parent, env), (found.guilty, env), {benchmark: unit}
    )
    return next((row for row in rows if row.label == label), None)


def locate(
    repo: Path,
    machine: str,
    label: str,
    unit: str,
    good: str,
    bad: str,
    whole: Paired | None,
    asv_args: tuple[str, ...] = (),
):
    """The commit in GOOD..BAD that made the row slower, and the step measured at it (a
    ``Paired`` for a timed row, asv's ``Row`` for a count)."""
    found = asv_find(
        repo,
        machine,
        good,
        bad,
        row_selection(label),
        invert=higher_is_better(unit),
        asv_args=asv_args,
    )
    if is_count(unit) or whole is None:
        return found, counted_step(repo, machine, label, unit, found)
    return checked(repo, label, good, bad, found, whole)


def values(step: Paired | Row) -> tuple[float, float]:
    """The row before and after a step: its sides' medians measured again, or asv's own
    values of a count."""
    if isinstance(step, Paired):
        return step.before_value, step.after_value
    return step.before, step.after


def verdict(repo: Path, found: Bisection, label: str, step: Paired | Row | None) -> str:
    """The guilty commit with its subject, and the row before and after it."""
    subject, _ = subject_and_author(found.guilty, repo)
    lines = [f"guilty commit: {found.guilty[:12]} {subject!r}"]
    if step is not None:
        before, after = values(step)
        lines.append(
            f"{label}: {shown(before, step.unit)} at {found.parent[:12]} -> "
            f"{shown(after, step.unit)} at {found.guilty[:12]} ({step.slowdown:.2f}x)"
        )
    return "\n".join(lines)


def bisected(repo: Path, machine: str, record, whole: Paired | Row):
    """A confirmed record bisected to its commit when its step spans more than one, with
    the row measured at that commit."""
    step = record.step
    if commit_count(step.good, step.bad, repo) == 1:
        return record
    timed = None if is_count(step.unit) else whole
    found, at = locate(repo, machine, step.label, step.unit, step.good, step.bad, timed)
    before, after = values(at) if at is not None else (record.before, record.after)
    return dataclasses.replace(
        record,
        parent=found.parent,
        guilty=found.guilty,
        builds=found.builds,
        before=before,
        after=after,
    )
