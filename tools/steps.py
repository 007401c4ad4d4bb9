"""Steps in a machine's history: the slowdowns asv's publish finds (its regression
detection, with the config's thresholds), rates read upside down, and the row's latest
value that says whether a step is still there."""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tools.common import (
    RESULTS_DIR,
    ExternalFailure,
    asv,
    commit_values,
    first_parent_commits,
    git,
    higher_is_better,
)


@dataclass(frozen=True)
class Step:
    """A step up (a slowdown) in one row of one machine's history."""

    machine: str
    benchmark: str
    params: str
    unit: str
    good: str  # the last commit before the step
    bad: str  # the first commit after it
    before: float
    after: float
    threshold: float

    @property
    def label(self) -> str:
        return f"{self.benchmark}{self.params}"

    @property
    def key(self) -> str:
        return f"{self.machine}|{self.label}|{self.good[:12]}..{self.bad[:12]}"

    @property
    def slowdown(self) -> float:
        ratio = self.after / self.before
        return 1 / ratio if higher_is_better(self.unit) else ratio


def threshold_of(thresholds: dict[str, float], entry: str) -> float:
    """asv's rule for a row's threshold: the largest of the patterns that match, 0.05
    when none does (asv/plugins/regressions.py, _GraphDataFilter._get_threshold)."""
    matched = [float(value) for pattern, value in thresholds.items() if re.match(pattern, entry)]
    return max(matched) if matched else 0.05


def published_steps(repo: Path, machine: str) -> list[Step]:
    """The steps asv's publish finds in ``machine``'s history, rates read upside down."""
    from asv.config import Config
    from asv.step_detect import detect_regressions, detect_steps

    thresholds = Config.load(str(repo / "asv.conf.json")).regressions_thresholds
    with tempfile.TemporaryDirectory(prefix="triage-site-") as site:
        done = asv("publish", "--no-pull", "--html-dir", site, cwd=repo, capture=True)
        if done.returncode != 0:
            raise ExternalFailure(f"asv publish failed: {(done.stderr or done.stdout)[-300:]}")
        index = json.loads(Path(site, "index.json").read_text())
        found = json.loads(Path(site, "regressions.json").read_text())["regressions"]
        hashes = {int(rev): sha for rev, sha in index["revision_to_hash"].items()}
        ours = f"/machine-{machine}/"
        steps = []

        def step(entry: str, jump: tuple, unit: str) -> Step:
            name, _, params = entry.partition("(")
            rev1, rev2, value1, value2 = jump
            bad = hashes[rev2]
            good = hashes[rev1] if rev1 is not None else git("rev-parse", f"{bad}^", cwd=repo)
            return Step(
                machine,
                name,
                f"({params}" if params else "",
                unit,
                good,
                bad,
                value1,
                value2,
                threshold_of(thresholds, entry),
            )

        for entry, graph_path, _, _, _, _, jumps in found:
            unit = index["benchmarks"][entry.split("(")[0]].get("unit", "")
            if ours in f"/{graph_path}" and not higher_is_better(unit):
                steps += [step(entry, jump, unit) for jump in jumps]
        # asv reads every value as lower-is-better: a rate's fall is found on 1/value.
        for name, described in index["benchmarks"].items():
            if not higher_is_better(described.get("unit", "")):
                continue
            for graph in Path(site, "graphs").glob(f"*/machine-{machine}/*/{name}.json"):
                points = json.loads(graph.read_text())
                combos = itertools.product(*described["params"]) if described["params"] else [()]
                for index_, combo in enumerate(combos):
                    series = [
                        (rev, values[index_] if described["params"] else values)
                        for rev, values in points
                    ]
                    series = [(rev, v) for rev, v in series if v is not None and v == v and v > 0]
                    entry = f"{name}({', '.join(combo)})" if combo else name
                    revisions = [rev for rev, _ in series]
                    # In revision coordinates, as asv's graphs hand them to the detection.
                    segments = [
                        (revisions[left], revisions[right - 1] + 1, value, low, error)
                        for left, right, value, low, error in detect_steps(
                            [1 / v for _, v in series]
                        )
                    ]
                    jumps = detect_regressions(segments, threshold_of(thresholds, entry))[2]
                    for rev1, rev2, inverse_before, inverse_after in jumps or []:
                        jump = (rev1, rev2, 1 / inverse_before, 1 / inverse_after)
                        steps.append(step(entry, jump, described["unit"]))
    return steps


def contains(repo: Path, outer: dict, step: Step) -> bool:
    """Whether ``step`` lies inside the range of a step triaged before (backfilled
    commits narrow a range; it is still the same step)."""

    def ancestor(older: str, newer: str) -> bool:
        return (
            subprocess.run(
                ["git", "merge-base", "--is-ancestor", older, newer], cwd=repo
            ).returncode
            == 0
        )

    return (
        outer["machine"] == step.machine
        and outer["label"] == step.label
        and ancestor(outer["good"], step.good)
        and ancestor(step.bad, outer["bad"])
    )


def latest_value(repo: Path, machine: str, step: Step) -> tuple[str, float] | None:
    """The row's value at the newest commit of ``machine`` that measured it."""
    for commit in first_parent_commits("HEAD", repo):
        try:
            measured = commit_values(repo / RESULTS_DIR, machine, commit)
        except Exception:
            continue
        if (step.benchmark, step.params) in measured:
            return commit, measured[step.benchmark, step.params][0]
    return None
