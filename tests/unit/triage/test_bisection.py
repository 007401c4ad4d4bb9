"""Bisect's checks on scripted measurements, against a real git history: a verdict of asv
find that does not hold measured again, or whose neighbouring stretch is slower as well, is
bisected again by pairs and the planted commit found; one that holds stands. The real runs
are in tests/integration/test_pr_gate_bisect.py and test_triage.py."""

from __future__ import annotations

import pytest

from tests.support.project_repo import ProjectRepo, isolated_env
from tests.support.scripted_gate import TIME_ROW, pairs
from tools._lib.measure.paired import Paired
from tools._lib.triage import bisection
from tools._lib.triage.bisection import Bisection


@pytest.fixture
def history(tmp_path):
    repo = ProjectRepo(tmp_path / "repo", isolated_env(tmp_path / "home"))
    repo.path.mkdir()
    repo.git("init", "-q", "-b", "main")
    commits = [repo.commit(f"commit {n}") for n in range(7)]
    return repo.path, commits


def scripted(commits: list[str], planted: str, measured: list, thresholds: list | None = None):
    """measure_pair as a host would answer it: 2x across the planted commit, else 1x."""

    def measure_pair(repo, label, first, second, threshold=None):
        measured.append((first, second))
        (thresholds if thresholds is not None else []).append(threshold)
        crosses = commits.index(first) < commits.index(planted) <= commits.index(second)
        return Paired(label, "seconds", *pairs(2.0 if crosses else 1.0))

    return measure_pair


def test_a_verdict_that_does_not_hold_is_bisected_again_by_pairs(history, monkeypatch, capsys):
    repo, commits = history
    planted, named = commits[3], commits[5]  # asv find followed one slow process
    measured, thresholds = [], []
    monkeypatch.setattr(bisection, "measure_pair", scripted(commits, planted, measured, thresholds))
    whole = Paired(TIME_ROW, "seconds", *pairs(2.0))
    found, step = bisection.checked(
        repo, TIME_ROW, commits[0], commits[-1], Bisection(named, commits[4], 2), whole
    )
    assert (found.guilty, found.parent) == (planted, commits[2])
    assert step.slowdown > 1.9 and found.builds > 2
    assert f"asv find named {named[:12]}, which measured again is 1.00x" in capsys.readouterr().out
    assert (commits[4], named) in measured  # the named commit against its parent, first
    # every pair is measured by the bar it is judged at (more rounds near it)
    assert thresholds and all(abs(t - whole.slowdown**0.5) < 1e-9 for t in thresholds)


def test_a_stretch_beside_the_named_commit_that_is_slower_too_casts_doubt(history, monkeypatch):
    repo, commits = history
    planted = commits[2]
    monkeypatch.setattr(bisection, "measure_pair", scripted(commits, planted, []))

    def also_slow(repo_, label, first, second, threshold=None):  # the named one reads slow too
        slow = (first, second) == (commits[3], commits[4])
        return (
            Paired(label, "seconds", *pairs(2.0))
            if slow
            else scripted(commits, planted, [])(repo_, label, first, second)
        )

    monkeypatch.setattr(bisection, "measure_pair", also_slow)
    found, _ = bisection.checked(
        repo,
        TIME_ROW,
        commits[0],
        commits[-1],
        Bisection(commits[4], commits[3], 2),
        Paired(TIME_ROW, "seconds", *pairs(2.0)),
    )
    assert found.guilty == planted


def test_a_verdict_that_holds_stands(history, monkeypatch):
    repo, commits = history
    measured = []
    monkeypatch.setattr(bisection, "measure_pair", scripted(commits, commits[3], measured))
    named = Bisection(commits[3], commits[2], 3)
    found, _ = bisection.checked(
        repo, TIME_ROW, commits[0], commits[-1], named, Paired(TIME_ROW, "seconds", *pairs(2.0))
    )
    assert found == named
    assert measured == [
        (commits[2], commits[3]),
        (commits[0], commits[2]),
        (commits[3], commits[6]),
    ]
