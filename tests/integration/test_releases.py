"""Torch releases as an axis, end to end: asv builds both releases' environments, and
tools.releases compares a small selection at one commit of a copy of the project whose
logsumexp does its work twice under torch 2.14 only and whose suite has a row only torch
2.14 runs. The planted row is reported slower, confirmed by alternation and explained (the
profiler's operators, the count twin's functions); the other row is n/a, never a
regression; both releases' results land on the results branch through the outbox; the
site shows both releases' series for one benchmark, and the filed issue has its own
label."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support import planted
from tests.support.github_standin import github_standin
from tests.support.project_repo import ProjectRepo, isolated_env, make_project_repo
from tests.support.site_browser import browse_series
from tools._lib.asv.matrix import named_release

pytestmark = pytest.mark.timeout(3600)

MACHINE = "rel"
PROBE = "bench_release_probe.ReleaseProbe.time_new_op"
PROBE_SUITE = '''
import torch


class ReleaseProbe:
    """A row only torch 2.14 runs: n/a under 2.13, as an op a release lacks would be."""

    def setup(self):
        if not torch.__version__.startswith("2.14."):
            raise NotImplementedError("this op is new in torch 2.14")

    def time_new_op(self):
        torch.ones(64).add_(1)
'''
# Under torch 2.14 only, the functional variant reduces every row twice.
RELEASE_PLANT = planted.ORIGINAL.replace(
    "    return",
    '    if torch.__version__.startswith("2.14."):\n        torch.logsumexp(x, dim=-1)\n    return',
)
SELECTION = planted.selection(planted.ROW, planted.COUNT_ROW, PROBE)


def plant(root: Path) -> None:
    source, text = planted.reduction(root)
    assert planted.ORIGINAL in text, "logsumexp's functional variant changed; update the plant"
    source.write_text(text.replace(planted.ORIGINAL, RELEASE_PLANT))
    (root / "benchmarks" / "bench_release_probe.py").write_text(PROBE_SUITE)


@dataclass
class Compared:
    repo: ProjectRepo
    done: subprocess.CompletedProcess
    seconds: float
    table: str
    rows: dict[str, dict]
    report: dict
    outbox: Path


@pytest.fixture(scope="module")
def compared(tmp_path_factory, shared_asv_env):
    root = tmp_path_factory.mktemp("releases")
    remote = root / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    repo = make_project_repo(root / "repo", isolated_env(root / "home"), shared_asv_env)
    repo.commit("logsumexp does more under torch 2.14; a row only torch 2.14 runs", plant)
    repo.git("remote", "add", "origin", str(remote))
    repo.git("push", "-q", "origin", "main")
    out = root / "out"
    begun = time.monotonic()
    done = repo.tool(
        "releases",
        "2.13.0",
        "2.14.1",
        "--machine",
        MACHINE,
        "--summary-file",
        str(out / "table.md"),
        "--json",
        str(out / "table.json"),
        "--report",
        str(out / "report.json"),
        "--outbox",
        str(root / "outbox"),
        "--no-fetch",
        "--",
        "--bench",
        SELECTION,
        timeout=3000,
    )
    seconds = time.monotonic() - begun
    print(f"tools.releases took {seconds:.0f} s (both environments built)")
    rows = {}
    if (out / "table.json").exists():
        rows = {row["label"]: row for row in json.loads((out / "table.json").read_text())["rows"]}
    table = (out / "table.md").read_text() if (out / "table.md").exists() else ""
    report = json.loads((out / "report.json").read_text()) if rows else {}
    yield Compared(repo, done, seconds, table, rows, report, root / "outbox")
    # The newer release's environment is 5.5 GB: no later test needs it.
    shutil.rmtree(named_release(repo.path, "2.14.1").env_dir, ignore_errors=True)


def test_the_planted_row_is_slower_under_the_new_release_confirmed_and_explained(compared):
    assert compared.done.returncode == 1, compared.done.stderr[-3000:]  # a row is slower
    row = compared.rows[planted.ROW]
    assert row["change"] == "slower" and row["slowdown"] > 1.5, row
    assert row["interval"][0] > 1.0
    assert row["twin"] == planted.COUNT_ROW and row["twin_slowdown"] > 1.5
    # Why: the profiler sees every operator of the call twice as often under 2.14.1 (the
    # table lists those that cost most; logsumexp's own entry may be below them) ...
    calls = re.findall(
        r"^\| `aten::\w+` \| [\d.]+ \| [\d.]+ \| (\d+) \| (\d+) \|$", row["explanation"], re.M
    )
    doubled = [before for before, after in calls if 2 * int(before) == int(after)]
    assert len(doubled) >= 4 and len(doubled) >= 0.8 * len(calls), row["explanation"]
    # ... and callgrind names the functions the twin's count grew by.
    assert "grew or shrank most" in row["explanation"] and "| +" in row["explanation"]


def test_the_count_twin_moved_with_it_on_asvs_numbers(compared):
    count = compared.rows[planted.COUNT_ROW]
    assert count["change"] == "slower" and count["slowdown"] > 1.5, count
    assert count["interval"] is None  # deterministic: judged on asv's numbers


def test_a_row_one_release_skips_is_n_a_never_a_regression(compared):
    probe = compared.rows[PROBE]
    assert probe["change"] == "n/a under torch 2.13.0", probe
    assert "| n/a under torch 2.13.0 |" in compared.table
    assert not [e for e in compared.report["regressions"] if PROBE in e["key"]]


def test_the_table_heads_its_columns_with_both_builds(compared):
    table = compared.table
    assert "## torch 2.14.1 against torch 2.13.0:" in table
    assert re.search(r"\| torch \(differs\) \| `2\.13\.0\+cpu` \| `2\.14\.1\S*` \|", table), table
    assert "| cpu capability" in table and "Rerun: `python -m tools.releases 2.13.0" in table


def test_one_issue_is_filed_for_the_slower_row_with_its_own_label(compared, tmp_path):
    (opened,) = [e for e in compared.report["regressions"] if e["state"] == "open"]
    assert opened["key"] == f"release|{MACHINE}|{planted.ROW}|2.13.0"
    report = tmp_path / "report.json"
    report.write_text(json.dumps(compared.report))
    with github_standin() as standin:
        filer = ProjectRepo(compared.repo.path, {**compared.repo.env, **standin.env()})
        filer.run(sys.executable, "-m", "tools.file_issues", str(report))
        (issue,) = standin.issues.values()
    assert [label["name"] for label in issue["labels"]] == ["release-regression"]
    assert issue["body"].rstrip().endswith(f"<!-- tensorops-release: {opened['key']} -->")


def test_both_releases_land_and_the_site_shows_both_series(compared, request):
    repo = compared.repo
    pushed = repo.tool("push_results", str(compared.outbox))
    assert pushed.returncode == 0, pushed.stderr
    files = repo.git("ls-tree", "-r", "--name-only", "origin/asv-results").splitlines()
    envs = {
        name.split("/")[1].split("-", 1)[1]
        for name in files
        if name.startswith(f"{MACHINE}/") and re.match(r"[0-9a-f]{8}-", name.split("/")[1])
    }
    assert any("torch2.13.0" in env for env in envs) and any("torch2.14.1" in env for env in envs)
    assert f"releases/{MACHINE}.json" in files
    site = repo.path.parent / "site"
    published = repo.tool("publish", "--site", str(site))
    assert published.returncode == 0, published.stderr
    page = (site / "releases.html").read_text()
    assert "n/a under torch 2.13.0" in page and "LogSumExp" in page
    artifacts = Path(request.config.rootpath) / "test-artifacts" / "releases-site"
    seen = browse_series(site, "bench_reduction.LogSumExp.time_logsumexp", artifacts)
    assert seen.off_host_requests == [] and seen.console_errors == []
    assert {"2.13.0", "2.14.1"} <= set(seen.releases), seen.releases


def test_the_nightly_measures_every_release_with_its_build_in_the_manifest(compared):
    repo = compared.repo
    done = repo.tool(
        "nightly",
        "--machine",
        "nightly-rel",
        "--releases",
        "all",
        "--max-commits",
        "1",
        "--",
        "--bench",
        planted.selection(PROBE),
        timeout=1800,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    repo.git("fetch", "-q", "origin")
    files = repo.git("ls-tree", "-r", "--name-only", "origin/asv-results").splitlines()
    mine = [name for name in files if name.startswith("nightly-rel-partial/")]
    assert sum(name.endswith("torch2.13.0.json") for name in mine) == 1
    assert sum(name.endswith("torch2.14.1.json") for name in mine) == 1
    manifest = repo.git("show", "origin/asv-results:nightly-rel-partial/manifest.txt")
    assert "torch: 2.13.0+cpu" in manifest and "torch: 2.14.1" in manifest
    assert re.search(r"^\[virtualenv-py3\.11-.*-torch2\.14\.1\]$", manifest, re.M)
