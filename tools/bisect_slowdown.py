"""Bisect a slowdown: which commit in GOOD..BAD made one benchmark slower?

    python -m tools.bisect_slowdown GOOD BAD BENCHMARK [--params REGEX] [-- ASV OPTIONS]

BENCHMARK is a full name (``bench_activation.Silu.time_silu``) or a regex that matches
exactly one; otherwise the candidates are listed. ``asv find`` then bisects GOOD..BAD
(GOOD included) on that benchmark, and the verdict names the guilty commit with its
subject and the times before and after it, for the parameter combination that moved most.

``asv find`` assumes one step change in the range; a range with several, or noise larger
than the step, can name the wrong commit. It follows the largest step of any measured
parameter combination, so a noisy combination elsewhere can mislead it: ``--params``
narrows the benchmark to the combinations it matches, e.g. ``"'cpu', 'float32'"``.
"""

from __future__ import annotations

import difflib
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from asv.config import Config

from tools.common import (
    RESULTS_DIR,
    ArgumentParser,
    BadInput,
    ExternalFailure,
    append_step_summary,
    asv_environment,
    asv_executable,
    bench_selection,
    compare,
    discovered_units,
    first_parent_commits,
    git,
    register_machine,
    repo_root,
    resolve_commit,
    run_main,
)

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


def verdict(repo: Path, machine: str, benchmark: str, unit: str, guilty: str, parent: str) -> str:
    """The guilty commit, and the row of the benchmark that got worst across it."""
    rows = [
        row
        for row in compare(repo / RESULTS_DIR, machine, parent, guilty, {benchmark: unit})
        if row.benchmark == benchmark
    ]
    subject = git("log", "-1", "--format=%s", guilty, cwd=repo)
    lines = [f"guilty commit: {guilty[:12]} {subject!r}"]
    if rows:
        worst = max(rows, key=lambda row: row.slowdown)
        lines.append(
            f"{worst.label}: {worst.shown(worst.before)} at {parent[:12]} -> "
            f"{worst.shown(worst.after)} at {guilty[:12]} ({worst.slowdown:.2f}x)"
        )
    return "\n".join(lines)


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
    parser.add_argument("--invert", action="store_true", help="look for a speed-up instead")
    parser.set_defaults(asv_args=[])  # after --
    args = parser.parse_args()
    repo = repo_root()
    good, bad = resolve_commit(args.good, repo), resolve_commit(args.bad, repo)
    units = discovered_units(repo)
    benchmark = resolve_benchmark(args.benchmark, sorted(units))
    register_machine(args.machine)
    selection = f"^{re.escape(benchmark)}" + (rf"\(.*{args.params}" if args.params else r"(\(|$)")
    found = bisect(
        repo, args.machine, good, bad, selection, invert=args.invert, asv_args=tuple(args.asv_args)
    )
    text = verdict(repo, args.machine, benchmark, units[benchmark], found.guilty, found.parent)
    print(text)
    append_step_summary(f"## Bisect: {benchmark}\n\n```\n{text}\n```")
    return 0


if __name__ == "__main__":
    run_main("bisect_slowdown", main)
