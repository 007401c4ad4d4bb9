"""Torch releases as an axis, without building them: the matrix's releases as the tools read
them (the first is the default, the one asv runs unless told), a comparison of two
releases' result files row by row (n/a and failed rows read the right way, the count twin
and % of peak beside each timed row), its table, JSON, issues and site page. The real
comparison, both environments built: tests/integration/test_releases.py."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys

import pytest

from tests.support import REPO_ROOT
from tests.support.github_standin import github_standin
from tools import file_issues
from tools._lib.asv.matrix import Release, chosen_releases, default_release, releases
from tools._lib.asv.run import with_environment
from tools._lib.base.cli import BadInput, Status
from tools._lib.measure.alternation import Outcome
from tools._lib.measure.host_floors import Floors
from tools._lib.measure.paired import Paired
from tools._lib.store.releases_page import write_releases_page
from tools._lib.store.tree import check_path, machine_of
from tools._lib.verdict import release_comparison
from tools._lib.verdict.release_comparison import Compared, ReleaseComparison
from tools._lib.verdict.release_report import filing_report, markdown
from tools._lib.verdict.row import Judgement, RowVerdict

OLD_ENV, NEW_ENV = "env-old", "env-new"
COMMIT = "c" * 40
TIME = "bench_x.Op.time_op"
PEAK = "bench_x.Op.track_percent_of_peak"
COUNT = "bench_instructions.Op.track_instructions"
PROBE = "bench_x.New.time_new"
BROKEN = "bench_x.Broken.time_broken"


def test_the_matrix_lists_each_release_in_order_and_the_first_is_the_default():
    listed = releases(REPO_ROOT)
    assert [release.torch for release in listed] == ["2.13.0", "2.14.1"]
    assert default_release(REPO_ROOT) == listed[0]
    assert listed[0].env_name.endswith("-torch2.13.0") and listed[1].env_name.endswith("2.14.1")
    assert all(r.env_dir.parent == REPO_ROOT / ".asv" / "env" for r in listed)
    assert listed[0].env_dir != listed[1].env_dir
    assert listed[1].graph_part == "torch-2.14.1"


def test_asv_runs_the_default_release_unless_the_caller_names_an_environment():
    default = default_release(REPO_ROOT).env_name
    assert with_environment(["run", "--bench", "x", "HEAD^!"], REPO_ROOT) == [
        "run",
        "-E",
        default,
        "--bench",
        "x",
        "HEAD^!",
    ]
    for command in ("continuous", "find", "setup"):
        assert with_environment([command, "a"], REPO_ROOT)[1:3] == ["-E", default]
    assert with_environment(["run", "-E", "other", "HEAD^!"], REPO_ROOT) == [
        "run",
        "-E",
        "other",
        "HEAD^!",
    ]
    assert with_environment(["run", "--environment=existing:same"], REPO_ROOT)[1] != "-E"
    assert with_environment(["publish", "--no-pull"], REPO_ROOT) == ["publish", "--no-pull"]


def test_a_releases_option_names_the_matrix_releases_or_is_refused():
    versions = lambda spec: [r.torch for r in chosen_releases(REPO_ROOT, spec)]  # noqa: E731
    assert versions("default") == ["2.13.0"]
    assert versions("others") == ["2.14.1"]
    assert versions("all") == ["2.13.0", "2.14.1"]
    assert versions("2.14.1,2.13.0,2.14.1") == ["2.14.1", "2.13.0"]
    with pytest.raises(BadInput, match=r"2\.99\.0 is not a release of asv\.conf\.json"):
        chosen_releases(REPO_ROOT, "2.99.0")


@pytest.mark.parametrize(
    "arguments, message",
    [
        (["2.13.0", "2.13.0"], "same release"),
        (["2.13.0", "9.9.9"], "not a release of asv.conf.json's matrix"),
        (["2.13.0"], "name both releases"),
    ],
)
def test_the_releases_command_refuses_what_it_cannot_compare(arguments, message):
    done = subprocess.run(
        [sys.executable, "-m", "tools.releases", *arguments],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == Status.BAD_INPUT and message in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_the_nightly_chooses_releases_by_its_own_option_not_asvs(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "tools.nightly", "--machine", "m", "--no-fetch", "--", "-E", "x"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == Status.BAD_INPUT
    assert "choose torch releases with --releases, not asv's -E" in done.stderr


def result_file(results, env: str, values: dict) -> None:
    """One asv result file of ``COMMIT`` under ``env``: each benchmark's values, by CPU
    row (None: failed; NaN: skipped)."""
    data = {
        "commit_hash": COMMIT,
        "env_name": env,
        "date": 0,
        "params": {"machine": "m"},
        "python": "3.11",
        "requirements": {},
        "env_vars": {},
        "result_columns": ["result", "params"],
        "results": {name: [[value], [["'cpu'"]]] for name, value in values.items()},
        "durations": {},
        "version": 2,
    }
    (results / "m" / f"{COMMIT[:8]}-{env}.json").write_text(json.dumps(data))


@pytest.fixture
def recorded(tmp_path, monkeypatch):
    results = tmp_path / ".asv" / "results"
    (results / "m").mkdir(parents=True)
    (results / "m" / "machine.json").write_text(json.dumps({"machine": "m", "version": 1}))
    units = {TIME: "seconds", PEAK: "% of peak", COUNT: "instructions", PROBE: "seconds"}
    units[BROKEN] = "seconds"
    described = {name: {"unit": unit} for name, unit in units.items()}
    (results / "benchmarks.json").write_text(json.dumps({**described, "version": 2}))
    nan = float("nan")
    result_file(results, OLD_ENV, {TIME: 1.0, PEAK: 40.0, COUNT: 1000.0, PROBE: nan, BROKEN: 1.0})
    result_file(results, NEW_ENV, {TIME: 2.0, PEAK: 20.0, COUNT: 1500.0, PROBE: 1.0, BROKEN: None})
    old = Release("2.13.0", OLD_ENV, tmp_path / "old")
    new = Release("2.14.1", NEW_ENV, tmp_path / "new")
    floors = Floors("a host", 4, {f"{TIME}('cpu')": 1.04})
    shutil.copy(REPO_ROOT / "asv.conf.json", tmp_path)  # the counts' factors
    comparison = ReleaseComparison(tmp_path, COMMIT, (old, new), "m", 1.15, floors)
    measured_again = []

    def alternated(thresholds):
        labels = list(thresholds)
        measured_again.append(labels)
        assert thresholds == {labels[0]: 1.04}  # measured by its floor
        paired = Paired(labels[0], "seconds", (1.0,) * 9, (1.9, 2.0, 2.1) * 3, (3, 3, 3))
        return {labels[0]: Outcome(labels[0], paired)}

    monkeypatch.setattr(comparison, "alternate", alternated)
    twins = {f"{TIME}('cpu')": f"{COUNT}('cpu')"}
    monkeypatch.setattr(release_comparison, "count_twins", lambda repo: twins)
    return comparison, comparison.decide(0), measured_again


def test_each_row_is_read_the_right_way_between_two_releases(recorded):
    _, verdict, measured_again = recorded
    rows = {row.label: row for row in verdict.rows}
    assert measured_again == [[f"{TIME}('cpu')"]]  # the timed row alone; not the % of peak
    timed = rows[f"{TIME}('cpu')"]
    assert timed.change == "slower" and timed.slowdown == 2.0 and timed.threshold == 1.04
    assert timed.twin == f"{COUNT}('cpu')" and timed.twin_slowdown == 1.5
    assert timed.peak == (40.0, 20.0)
    assert rows[f"{COUNT}('cpu')"].change == "slower" and rows[f"{COUNT}('cpu')"].interval is None
    assert rows[f"{PROBE}('cpu')"].change == "n/a under torch 2.13.0"
    assert rows[f"{BROKEN}('cpu')"].change == "failed under torch 2.14.1"
    assert f"{PEAK}('cpu')" not in rows  # shown beside its timed row, not judged
    assert verdict.status == Status.BENCHMARK_FAILED  # a row failed under the new release


@pytest.mark.parametrize(("old_value", "new_value"), [(0.0, 1.0), (-1.0, 1.0), (1.0, 0.0)])
def test_a_value_that_is_no_measurement_is_named_with_its_release_and_fails(
    tmp_path, monkeypatch, old_value, new_value
):
    """A row whose value under a release is 0 or less read "n/a under " (no release)."""
    results = tmp_path / ".asv" / "results"
    (results / "m").mkdir(parents=True)
    (results / "m" / "machine.json").write_text(json.dumps({"machine": "m", "version": 1}))
    (results / "benchmarks.json").write_text(json.dumps({TIME: {"unit": "seconds"}}))
    result_file(results, OLD_ENV, {TIME: old_value})
    result_file(results, NEW_ENV, {TIME: new_value})
    old = Release("2.13.0", OLD_ENV, tmp_path / "old")
    new = Release("2.14.1", NEW_ENV, tmp_path / "new")
    comparison = ReleaseComparison(tmp_path, COMMIT, (old, new), "m", 1.15, Floors("h", 0, {}))
    monkeypatch.setattr(release_comparison, "count_twins", lambda repo: {})
    verdict = comparison.decide(0)
    (row,) = verdict.rows
    release = "torch 2.13.0" if new_value > 0 else "torch 2.14.1"
    bad = old_value if new_value > 0 else new_value
    assert row.change == f"no measurement under {release}: it gave {bad!r}", row.change
    assert verdict.status == Status.BENCHMARK_FAILED


def test_a_skipped_row_alone_never_makes_a_regression_or_a_recovery():
    states = [release_comparison.state_of(v) for v in ((math.nan,), (1.0,), (None,), None)]
    assert states == ["skipped", "measured", "failed", "absent"]
    names = ("torch a", "torch b")
    assert release_comparison.unavailable(["skipped", "measured"], names) == "n/a under torch a"
    assert release_comparison.unavailable(["skipped", "skipped"], names) == (
        "n/a under torch a and torch b"
    )
    unavailable = Compared(RowVerdict("x", "", Judgement.UNAVAILABLE, "asv", why="n/a under a"))
    assert release_comparison.status_of(0, [unavailable]) == Status.OK


def test_the_table_the_json_and_the_issues_say_the_same(recorded, tmp_path):
    comparison, verdict, _ = recorded
    facts = {
        "torch 2.13.0": {"torch": "2.13.0+cpu", "build compiler": "GCC 11.2"},
        "torch 2.14.1": {"torch": "2.14.1+cu130", "build compiler": "GCC 11.2"},
    }
    table = markdown(comparison, verdict, facts, ("AMD EPYC", "32 MiB"), "python -m tools.releases")
    assert "| torch (differs) | `2.13.0+cpu` | `2.14.1+cu130` |" in table
    assert "| build compiler | `GCC 11.2` | `GCC 11.2` |" in table
    assert "| slower | 1.00s | 2.00s | 2.000x (" in table
    assert "| 40.0 → 20.0 |" in table and "| n/a under torch 2.13.0 |" in table
    report = filing_report(comparison, verdict, ("AMD EPYC", "32 MiB")).to_json()
    assert report["kind"] == "release"
    (opened,) = report["regressions"]  # the timed row; the count is in the table only
    assert opened["key"] == f"release|m|{TIME}('cpu')|2.13.0" and opened["state"] == "open"
    assert opened["title"] == f"2.00x slower under torch 2.14.1: {TIME}('cpu')"


def test_a_row_no_longer_slower_closes_its_release_issue(recorded):
    comparison, verdict, _ = recorded
    calmer = release_comparison.ReleaseVerdict(
        Status.OK,
        [
            Compared(
                RowVerdict(
                    f"{TIME}('cpu')",
                    "seconds",
                    Judgement.UNCHANGED,
                    "paired",
                    before=1.0,
                    after=1.0,
                    slowdown=1.0,
                    interval=(0.99, 1.01),
                    threshold=1.04,
                )
            )
        ],
    )
    (closing,) = filing_report(comparison, calmer, ("AMD EPYC", "32 MiB")).issues
    opened = filing_report(comparison, verdict, ("AMD EPYC", "32 MiB")).issues[0]
    assert closing.key == opened.key and closing.state == "resolved"
    with github_standin() as standin:
        github = file_issues.GitHub(standin.url, "tensorops/tensorops", "standin-token")
        kind = file_issues.KINDS["release"]
        file_issues.file_all(github, [opened], kind)
        file_issues.file_all(github, [closing], kind)
        (issue,) = standin.issues.values()
        assert issue["state"] == "closed"
        assert [label["name"] for label in issue["labels"]] == ["release-regression"]
        assert issue["body"].rstrip().endswith(f"<!-- tensorops-release: {opened.key} -->")
        # The triage's kind does not see it: another label, another marker.
        regression = file_issues.KINDS["regression"]
        assert file_issues.filed_issues(github, regression, regression.label) == {}


def test_a_report_of_an_unknown_kind_is_refused(tmp_path):
    report = tmp_path / "r.json"
    report.write_text(json.dumps({"kind": "nonsense", "regressions": []}))
    with pytest.raises(BadInput, match="unknown kind"):
        file_issues.read_report(report)


def test_the_site_page_shows_each_comparison_and_escapes_what_came_from_outside(tmp_path):
    results, site = tmp_path / "results", tmp_path / "site"
    (results / "releases").mkdir(parents=True)
    site.mkdir()
    row = {
        "label": "bench.<script>alert(1)</script>",
        "unit": "seconds",
        "change": "slower",
        "old": 1.0,
        "new": 2.0,
        "slowdown": 2.0,
        "interval": [1.9, 2.1],
        "threshold": 1.04,
        "twin": "",
        "twin_slowdown": None,
        "peak": None,
        "explanation": "",
    }
    data = {
        "machine": "m",
        "commit": COMMIT,
        "measured": "now",
        "host": {"cpu": "AMD EPYC", "l3": "32 MiB"},
        "releases": [{"torch": "2.13.0", "facts": {}}, {"torch": "2.14.1", "facts": {}}],
        "rows": [row],
    }
    (results / "releases" / "m.json").write_text(json.dumps(data))
    assert write_releases_page(results, site) == ["m"]
    page = (site / "releases.html").read_text()
    assert "torch 2.14.1 against torch 2.13.0 on m" in page and "<script>" not in page
    assert "&lt;script&gt;" in page and json.loads((site / "releases" / "m.json").read_text())


def test_a_comparison_the_page_cannot_show_is_left_out_saying_so_and_the_rest_published(
    tmp_path, capsys
):
    """One bad file on the branch (``{"rows": []}``) must not stop every machine's publish."""
    results, site = tmp_path / "results", tmp_path / "site"
    (results / "releases").mkdir(parents=True)
    site.mkdir()
    good = {
        "machine": "m",
        "commit": COMMIT,
        "measured": "now",
        "host": {"cpu": "AMD EPYC", "l3": "32 MiB"},
        "releases": [{"torch": "2.13.0", "facts": {}}, {"torch": "2.14.1", "facts": {}}],
        "rows": [],
    }
    (results / "releases" / "m.json").write_text(json.dumps(good))
    (results / "releases" / "bad.json").write_text(json.dumps({"rows": []}))
    assert write_releases_page(results, site) == ["m"]
    assert "bad.json is not a releases comparison" in capsys.readouterr().err
    assert not (site / "releases" / "bad.json").exists()


def test_a_releases_comparison_belongs_on_the_results_branch_as_its_machines():
    check_path("releases/gha-cpu.json")
    assert machine_of("releases/gha-cpu.json") == "gha-cpu"
    with pytest.raises(BadInput):
        check_path("releases/../gha-cpu.json")
