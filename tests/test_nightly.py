"""The nightly and publish scripts, run for real against a local bare remote: results
accumulate on the results branch commit by commit and machine by machine, nothing is
lost or rewritten, an interrupted run changes nothing, and the published site works
offline in a browser.

About four minutes on 2 cores: asv builds and benchmarks one small benchmark per commit.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from tools.results_branch import ResultsBranch

from .project_repo import ProjectRepo, clone_project_repo, isolated_env, make_project_repo
from .site_browser import browse_site

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]

BRANCH = "asv-results"
BENCH = "bench_creation.Zeros.time_zeros"
SLEEPER = """
import os
import pathlib
import time


class Sleeper:
    timeout = 120

    def setup(self):
        marker = os.environ.get("NIGHTLY_PROBE_MARKER")
        if marker:
            pathlib.Path(marker).touch()
            time.sleep(90)

    def time_nothing(self):
        pass
"""


@dataclass
class Remote:
    path: Path

    def git(self, *args: str) -> str:
        return subprocess.run(
            ["git", "--git-dir", str(self.path), *args],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()

    def tip(self) -> str:
        return self.git("rev-parse", BRANCH)

    def blobs(self) -> dict[str, str]:
        """Every file on the results branch and its blob hash (equal hash, equal bytes)."""
        listing = self.git("ls-tree", "-r", BRANCH).splitlines()
        return {line.split("\t")[1]: line.split()[2] for line in listing}

    def result_commits(self, machine: str, blobs: dict[str, str] | None = None) -> set[str]:
        """Short hashes of the commits with a result file of ``machine``."""
        return {
            name.split("/")[1].split("-")[0]
            for name in (self.blobs() if blobs is None else blobs)
            if name.startswith(f"{machine}/")
            and name.endswith(".json")
            and not name.endswith("machine.json")
        }


def short(commits) -> set[str]:
    return {commit[:8] for commit in commits}


def nightly(repo: ProjectRepo, machine: str, bench: str = BENCH, **env: str):
    runner = ProjectRepo(repo.path, {**repo.env, **env})
    return runner.tool("nightly", "--machine", machine, "--", "--bench", bench, "--quick")


@pytest.fixture(scope="module")
def world(tmp_path_factory, shared_asv_env):
    root = tmp_path_factory.mktemp("nightly")
    env = isolated_env(root / "home")
    remote = Remote(root / "remote.git")
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote.path)], check=True)
    repo = make_project_repo(root / "a", env, shared_asv_env)
    repo.commit("second", lambda r: (r / "src/tensorops/_history.py").write_text("# 2\n"))
    repo.git("remote", "add", "origin", str(remote.path))
    repo.git("push", "-q", "origin", "main")
    return root, env, remote, repo


@pytest.fixture(scope="module")
def first_night(world):
    _, _, remote, repo = world
    done = nightly(repo, "m1")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return remote.tip(), remote.blobs()


@pytest.fixture(scope="module")
def second_night(world, first_night):
    *_, repo = world
    new = repo.commit("third", lambda r: (r / "src/tensorops/_history.py").write_text("# 3\n"))
    repo.git("push", "-q", "origin", "main")
    done = nightly(repo, "m1")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return new, done.stdout


@pytest.fixture(scope="module")
def second_machine(world, second_night, shared_asv_env):
    root, env, remote, _ = world
    other = clone_project_repo(remote.path, root / "b", env, shared_asv_env)
    done = nightly(other, "m2")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return other


@pytest.fixture(scope="module")
def interrupted_night(world, second_machine):
    """A run killed while asv benchmarks, then the same run again."""
    root, _, remote, repo = world
    new = repo.commit("fourth", lambda r: (r / "src/tensorops/_history.py").write_text("# 4\n"))
    repo.git("push", "-q", "origin", "main")
    (repo.path / "benchmarks" / "bench_nightly_probe.py").write_text(SLEEPER)
    tip_before = remote.tip()
    marker = root / "asv-is-benchmarking"
    command = [
        sys.executable,
        "-m",
        "tools.nightly",
        "--machine",
        "m1",
        "--",
        "--bench",
        f"{BENCH}|Sleeper",
        "--quick",
    ]
    process = subprocess.Popen(
        command,
        cwd=repo.path,
        env={**repo.env, "NIGHTLY_PROBE_MARKER": str(marker)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # its own process group: asv and its workers die with it
    )
    deadline = time.monotonic() + 600
    while not marker.exists():
        assert process.poll() is None, "nightly ended before asv started benchmarking"
        assert time.monotonic() < deadline, "asv never reached the probe benchmark"
        time.sleep(0.2)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    tip_after_kill = remote.tip()
    rerun = nightly(repo, "m1", bench=f"{BENCH}|Sleeper")
    return new, tip_before, tip_after_kill, rerun


def test_first_run_benchmarks_every_commit_and_pushes(world, first_night):
    _, _, remote, repo = world
    assert remote.result_commits("m1") == short(repo.git("rev-list", "main").split())
    assert {"benchmarks.json", "m1/machine.json", "m1/manifest.txt"} <= set(first_night[1])


def test_the_machine_file_describes_the_hardware(world, first_night):
    _, _, remote, _ = world
    described = json.loads(remote.git("show", f"{BRANCH}:m1/machine.json"))
    assert described["machine"] == "m1"
    assert described["cpu"] and described["num_cpu"] and described["arch"]


def test_manifest_records_the_environment(world, first_night):
    _, _, remote, _ = world
    manifest = remote.git("show", f"{BRANCH}:m1/manifest.txt")
    facts = [
        "torch: 2.13.0",
        "cuda: None",
        "threads (harness): 1",
        "tf32 (harness): False",
        "cudnn.benchmark (harness): False",
        "numpy==2.4.6",
        "asv_runner==0.2.5",
    ]
    assert [fact for fact in facts if fact not in manifest] == []


def test_second_run_benchmarks_only_the_new_commit(world, first_night, second_night):
    _, _, remote, _ = world
    new, output = second_night
    assert "benchmarking 1 commits" in output
    assert remote.result_commits("m1") == {*remote.result_commits("m1", first_night[1]), new[:8]}


def test_earlier_result_files_are_byte_identical(world, first_night, second_machine):
    _, _, remote, _ = world
    before, after = first_night[1], remote.blobs()
    commits = remote.result_commits("m1", before)
    kept = {
        name: blob
        for name, blob in before.items()
        if name.startswith("m1/") and name.split("/")[1][:8] in commits
    }
    assert kept
    assert {name: after.get(name) for name in kept} == kept


def test_two_machines_both_land(world, second_machine):
    _, _, remote, repo = world
    commits = short(repo.git("rev-list", "main").split())
    assert remote.result_commits("m2") == commits
    assert remote.result_commits("m1") == commits


def test_a_killed_run_changes_nothing_and_a_rerun_completes(world, interrupted_night):
    _, _, remote, _ = world
    new, tip_before, tip_after_kill, rerun = interrupted_night
    assert tip_after_kill == tip_before
    assert rerun.returncode == 0, rerun.stdout[-3000:] + rerun.stderr[-3000:]
    assert new[:8] in remote.result_commits("m1")
    assert remote.tip() != tip_before


def test_a_lost_push_race_is_replayed_onto_the_new_tip(world, interrupted_night, shared_asv_env):
    """Two machines commit on the same tip; the second push is rejected, re-fetched and
    replayed, and both machines' files land."""
    root, env, remote, repo = world
    other = clone_project_repo(remote.path, root / "race", env, shared_asv_env)
    ours, theirs = ResultsBranch(repo.path), ResultsBranch(other.path)
    ours.check_out()
    theirs.check_out()
    (ours.worktree / "m1" / "race-ours.txt").write_text("ours\n")
    (theirs.worktree / "m2").mkdir(exist_ok=True)
    (theirs.worktree / "m2" / "race-theirs.txt").write_text("theirs\n")
    before = remote.blobs()
    assert theirs.commit("theirs") and ours.commit("ours")
    theirs.push()
    ours.push()
    after = remote.blobs()
    assert {"m1/race-ours.txt", "m2/race-theirs.txt"} <= set(after)
    assert {name: after[name] for name in before} == before


@pytest.fixture(scope="module")
def published_site(world, interrupted_night):
    root, _, _, repo = world
    site = root / "site"
    done = repo.tool("publish", "--site", str(site))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return site


def test_published_site_works_offline_in_a_browser(world, published_site, request):
    _, _, _, repo = world
    commits = len(repo.git("rev-list", "main").split())
    artifacts = Path(request.config.rootpath) / "test-artifacts"
    seen = browse_site(published_site, BENCH, "m1", artifacts / "nightly-site")
    assert seen.off_host_requests == []
    assert seen.failed_requests == []
    assert seen.console_errors == []
    assert BENCH in seen.overview_text
    # Every commit benchmarked on m1 is a point of each CPU series of the graph.
    cpu_series = {label: n for label, n in seen.points_per_series.items() if "cpu" in label}
    assert cpu_series and set(cpu_series.values()) == {commits}, seen.points_per_series
    assert seen.screenshots and all(path.stat().st_size > 10_000 for path in seen.screenshots)


def test_a_corrupt_result_file_is_named_and_nothing_is_pushed(world, published_site):
    root, env, remote, repo = world
    corrupt = ProjectRepo(root / "corrupt", env)
    subprocess.run(
        ["git", "clone", "-q", "-b", BRANCH, str(remote.path), str(corrupt.path)],
        env=env,
        check=True,
    )
    victim = next(
        p for p in sorted((corrupt.path / "m1").glob("*.json")) if p.name != "machine.json"
    )
    victim.write_text('{"commit_hash": ')
    corrupt.commit("corrupt one result file")
    corrupt.git("push", "-q", "origin", BRANCH)
    tip = remote.tip()
    for done in (nightly(repo, "m1"), repo.tool("publish", "--site", str(root / "site2"))):
        assert done.returncode == 2
        (line,) = done.stderr.strip().splitlines()
        assert "corrupt result file" in line and f"m1/{victim.name}" in line
    assert remote.tip() == tip
