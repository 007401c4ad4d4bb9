"""Steps in a machine's history: the slowdowns asv's own step detection finds in the graphs
``asv publish`` writes, every row read the right way round (a rate's fall is its step), and
the row's latest value, which says whether a step is still there."""

from __future__ import annotations

import itertools
import json
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

from tools._lib.asv.matrix import default_release
from tools._lib.asv.results import RESULTS_DIR, commit_values
from tools._lib.asv.window import WINDOW_DAYS, EmptyWindow, Window, publish_data
from tools._lib.base.git import first_parent_commits, git, is_ancestor
from tools._lib.measure.alternation import measure_pair
from tools._lib.measure.comparison import compare, higher_is_better, is_count, row_label
from tools._lib.triage.record import Regression, Step


def series(
    site: Path, machine: str, name: str, params: list, release: str
) -> Iterator[tuple[str, list]]:
    """``(row, [(revision, value)])`` of the benchmark's graphs on ``machine`` under one
    release (``release``: its folder of the published graphs), measured values only."""
    from asv.util import sanitize_filename

    combos = list(itertools.product(*params)) if params else [()]
    for graph in (site / "graphs").rglob(f"{sanitize_filename(name)}.json"):
        if sanitize_filename(f"machine-{machine}") not in graph.parts or release not in graph.parts:
            continue
        points = json.loads(graph.read_text())
        for index, combo in enumerate(combos):
            values = [(rev, value[index] if params else value) for rev, value in points]
            measured = [(rev, v) for rev, v in values if v is not None and v == v and v > 0]
            yield row_label(name, f"({', '.join(combo)})" if combo else ""), measured


def jumps(points: list, unit: str, threshold: float) -> list[tuple]:
    """asv's detection on one row's points: ``(rev1, rev2, before, after)`` per step up in
    cost (rev1 None: the step spans one commit)."""
    from asv.step_detect import detect_regressions, detect_steps

    if len(points) < 2:
        return []
    revisions = [rev for rev, _ in points]
    flipped = higher_is_better(unit)  # asv reads lower as better: a rate is read as 1/rate
    costs = [1 / v if flipped else v for _, v in points]
    segments = [
        (revisions[left], revisions[right - 1] + 1, value, low, error)
        for left, right, value, low, error in detect_steps(costs)
    ]
    found = detect_regressions(segments, threshold)[2] or []
    return [
        (rev1, rev2, 1 / before if flipped else before, 1 / after if flipped else after)
        for rev1, rev2, before, after in found
    ]


def history_steps(repo: Path, machine: str, threshold: Callable[[str], float]) -> list[Step]:
    """Every step up in ``machine``'s history under the default release, each row at
    ``threshold(row)`` (another release's series is compared with it by tools.releases,
    never bisected as commits)."""
    default = default_release(repo)
    release = default.graph_part
    with tempfile.TemporaryDirectory(prefix="triage-site-") as folder:
        site = Path(folder)
        try:
            publish_data(repo, site, Window(WINDOW_DAYS, (machine,), default.env_name))
        except EmptyWindow:
            return []  # no result of this machine's in the window: no step to find
        index = json.loads((site / "index.json").read_text())
        hashes = {int(rev): sha for rev, sha in index["revision_to_hash"].items()}
        found: dict[str, Step] = {}
        for name, described in index["benchmarks"].items():
            unit = described.get("unit", "")
            grid = described.get("params") or []
            for label, points in series(site, machine, name, grid, release):
                for rev1, rev2, before, after in jumps(points, unit, threshold(label)):
                    bad = hashes[rev2]
                    good = (
                        hashes[rev1] if rev1 is not None else git("rev-parse", f"{bad}^", cwd=repo)
                    )
                    params = label[len(name) :]
                    step = Step(
                        machine, name, params, unit, good, bad, before, after, threshold(label)
                    )
                    found.setdefault(step.key, step)
    return list(found.values())


def contains(repo: Path, outer: Regression, step: Step) -> bool:
    """Whether ``step`` lies inside the range of a step triaged before (backfilled commits
    narrow a range; it is still the same step)."""
    old = outer.step
    return (
        (old.machine, old.label) == (step.machine, step.label)
        and is_ancestor(old.good, step.good, repo)
        and is_ancestor(step.bad, old.bad, repo)
    )


def latest_value(repo: Path, machine: str, step: Step) -> tuple[str, float] | None:
    """The row's value at the newest commit of ``machine`` that measured it."""
    env = default_release(repo).env_name
    for commit in first_parent_commits("HEAD", repo):
        measured = commit_values(repo / RESULTS_DIR, machine, commit, env)
        if (step.benchmark, step.params) in measured:
            return commit, measured[step.benchmark, step.params][0]
    return None


def measured_again(repo: Path, machine: str, step: Step, first: str, second: str, threshold: float):
    """The step's row from ``first`` to ``second``: by alternation for a timed row (a
    ``Paired``, measured by the slowdown ``threshold`` it will be judged at), from the
    history for a count (deterministic: asv's ``Row``); None when it gives no value."""
    if is_count(step.unit):
        env = default_release(repo).env_name
        rows = compare(
            repo / RESULTS_DIR, machine, (first, env), (second, env), {step.benchmark: step.unit}
        )
        return next((row for row in rows if row.label == step.label), None)
    return measure_pair(repo, step.label, first, second, threshold=threshold)
