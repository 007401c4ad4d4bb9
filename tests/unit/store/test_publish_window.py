"""The published window: asv publish over the result files of the commits of the last days
(of chosen machines and one environment), read from a view of links, and the site's graphs
written compact. Real git and real asv over a synthetic history
(tools/studies/synthetic_history.py)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.support import REPO_ROOT
from tools._lib.asv import publish_pages
from tools._lib.asv.results import RESULTS_DIR
from tools._lib.asv.window import Window, chosen_files, publish_data, window_commits
from tools._lib.base.cli import BadInput
from tools._lib.store.site import GRAPH_DIGITS, publish
from tools.studies.synthetic_history import History

NIGHTS = 4


@pytest.fixture(scope="module")
def history(tmp_path_factory) -> History:
    return History(tmp_path_factory.mktemp("history"), REPO_ROOT, NIGHTS, machines=2)


def published_commits(site: Path) -> set[str]:
    return set(json.loads((site / "index.json").read_text())["revision_to_hash"].values())


def graph_folders(site: Path) -> set[tuple[str, str]]:
    """(machine, torch release) of every graph asv wrote."""
    return {
        (path.parent.parent.parent.name, path.parent.name)
        for path in (site / "graphs").rglob("*.json")
        if "summary" not in path.parts
    }


def test_the_window_is_the_branch_commits_of_the_last_days_before_its_tip(history):
    assert window_commits(history.project, "main", 0) is None
    assert window_commits(history.project, "main", 1) == set(history.commits[-2:])
    assert window_commits(history.project, "main", 10_000) == set(history.commits)
    with pytest.raises(BadInput, match="a window of -1 days"):
        window_commits(history.project, "main", -1)


def test_asv_publishes_the_window_alone(history, tmp_path):
    publish_data(history.project, tmp_path / "last", Window(days=1))
    assert published_commits(tmp_path / "last") == set(history.commits[-2:])
    assert len(graph_folders(tmp_path / "last")) == 4  # two machines, two releases

    release = history.releases[0]
    said = publish_data(
        history.project,
        tmp_path / "one",
        Window(days=0, machines=("synthetic-1",), env_name=release.env_name),
    )
    assert said == f"every commit ({NIGHTS} commits measured)"
    assert published_commits(tmp_path / "one") == set(history.commits)
    assert graph_folders(tmp_path / "one") == {("machine-synthetic-1", release.graph_part)}


def test_a_corrupt_file_in_the_window_stops_the_publish_named_one_outside_is_not_read(
    history, tmp_path
):
    results = history.project / RESULTS_DIR
    oldest = next((results / "synthetic-0").glob(f"{history.commits[0][:8]}-*.json"))
    kept = oldest.read_text()
    try:
        oldest.write_text('{"commit_hash": ')
        assert oldest not in chosen_files(results, Window(days=1), set(history.commits[-2:]))
        with pytest.raises(BadInput, match=f"corrupt result file {oldest}"):
            publish_data(history.project, tmp_path / "all", Window(days=0))
    finally:
        oldest.write_text(kept)


def test_the_site_graphs_hold_rounded_values_written_compact(history, tmp_path):
    site = tmp_path / "site"
    publish(history.project, site, days=0)
    graph = next(
        path
        for path in (site / "graphs").rglob("bench_matmul.MatMul.time_matmul.json")
        if "summary" not in path.parts
    )
    text = graph.read_text()
    assert ", " not in text and text.startswith("[[")
    values = [v for _, row in json.loads(text) for v in row if v is not None]
    assert values and all(v == float(f"{v:.{GRAPH_DIGITS}g}") for v in values)


def test_asv_writes_the_graphs_and_only_the_pages_asked_for(history, tmp_path):
    publish_data(history.project, tmp_path / "graphs", Window(days=0))
    publish_data(history.project, tmp_path / "site", Window(days=0), ("Regressions",))
    for site in (tmp_path / "graphs", tmp_path / "site"):
        assert len(graph_folders(site)) == 4
        assert not (site / "graphs" / "summary").exists()  # asv's summary grid: no reader
        assert not list((site / "graphs").rglob("summary.json"))  # its summary list
    assert not (tmp_path / "graphs" / "regressions.json").exists()
    assert isinstance(json.loads((tmp_path / "site" / "regressions.json").read_text()), dict)
    graphs = {
        path.relative_to(tmp_path / "site"): path.read_bytes()
        for path in (tmp_path / "site" / "graphs").rglob("*.json")
    }
    assert graphs == {
        path.relative_to(tmp_path / "graphs"): path.read_bytes()
        for path in (tmp_path / "graphs" / "graphs").rglob("*.json")
    }


def test_an_asv_page_asv_does_not_have_is_named():
    with pytest.raises(SystemExit, match="no asv page Nowhere"):
        publish_pages.keep_only(["Regressions", "Nowhere"])


def test_ranges_from_parents_answer_as_git_does_and_ask_git_only_off_the_parent_chain(
    tmp_path, monkeypatch
):
    from asv.plugins.git import Git

    repo = tmp_path / "repo"
    repo.mkdir()
    commands = [
        "init -q -b main",
        "commit -q --allow-empty -m root",
        "commit -q --allow-empty -m main-1",
        "checkout -q -b side HEAD~1",
        "commit -q --allow-empty -m side-1",
        "checkout -q main",
        "merge -q --no-ff -m merged side",
        "commit -q --allow-empty -m main-2",
    ]
    for command in commands:
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t.invalid", *command.split()],
            cwd=repo,
            check=True,
        )
    hashes = subprocess.run(
        ["git", "rev-list", "--all"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.split()
    asked = []
    from_git = Git.get_hashes_from_range

    def counted(self, range_spec):
        asked.append(range_spec)
        return from_git(self, range_spec)

    monkeypatch.setattr(Git, "get_hashes_from_range", counted)
    asv_repo = Git(str(repo), str(tmp_path / "mirror"))
    expected = {(a, b): asv_repo.get_hashes_from_range(f"{a}..{b}") for a in hashes for b in hashes}
    asked.clear()
    publish_pages.ranges_from_parents()
    answered = {(a, b): asv_repo.get_hashes_from_range(f"{a}..{b}") for a, b in expected}
    assert answered == expected
    singles = {pair for pair, commits in expected.items() if len(commits) == 1}
    parent_child = {pair for pair in singles if f"{pair[0]}..{pair[1]}" not in asked}
    assert len(parent_child) == 4  # root-main1, main1-merge, merge-main2, root-side1
    assert len(asked) == len(expected) - 4
