"""The nightly and publish scripts, run for real against a local bare remote: results
accumulate on the results branch commit by commit and machine by machine, nothing is
lost or rewritten, a run cut half-way keeps every commit it finished, and the published
site works offline in a browser.

The runs measure one small benchmark (``--bench ... --quick``), so their results go under
the machine name ``NAME-partial``. About five minutes on 2 cores.
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

from tests.support.project_repo import (
    ProjectRepo,
    clone_project_repo,
    isolated_env,
    make_project_repo,
)
from tests.support.site_browser import browse_site
from tools._lib.asv.matrix import default_release
from tools._lib.store.branch import ResultsBranch
from tools.nightly import PARTIAL_SUFFIX, commits_to_run

pytestmark = pytest.mark.timeout(1800)

BRANCH = "asv-results"
BENCH = "bench_creation.Zeros.time_zeros"
M1, M2 = "m1" + PARTIAL_SUFFIX, "m2" + PARTIAL_SUFFIX  # where partial runs' results go
# A benchmark that marks its first process and, from its second on (the nightly's second
# commit), marks that too and sleeps: the test kills the nightly there.
SLEEPER = """
import os
import pathlib
import time


class Sleeper:
    timeout = 120

    def setup(self):
        marker = os.environ.get("NIGHTLY_PROBE_MARKER")
        if not marker:
            return
        first = pathlib.Path(marker + ".first")
        if not first.exists():
            first.touch()
            return
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


def nightly(repo: ProjectRepo, machine: str, *options: str, bench: str = BENCH, **env: str):
    runner = ProjectRepo(repo.path, {**repo.env, **env})
    return runner.tool("nightly", "--machine", machine, *options, "--", "--bench", bench, "--quick")


def ok(done) -> None:
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


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
    ok(nightly(repo, "m1"))
    return remote.tip(), remote.blobs()


@pytest.fixture(scope="module")
def second_night(world, first_night):
    *_, repo = world
    new = repo.commit("third", lambda r: (r / "src/tensorops/_history.py").write_text("# 3\n"))
    repo.git("push", "-q", "origin", "main")
    done = nightly(repo, "m1")
    ok(done)
    return new, done.stdout


@pytest.fixture(scope="module")
def second_machine(world, second_night, shared_asv_env):
    root, env, remote, _ = world
    other = clone_project_repo(remote.path, root / "b", env, shared_asv_env)
    ok(nightly(other, "m2"))
    return other


@pytest.fixture(scope="module")
def interrupted_night(world, second_machine):
    """Two new commits; a run killed while it benchmarks the second of them, then the
    same run again."""
    root, _, remote, repo = world
    older = repo.commit("4th", lambda r: (r / "src/tensorops/_history.py").write_text("# 4\n"))
    newer = repo.commit("5th", lambda r: (r / "src/tensorops/_history.py").write_text("# 5\n"))
    repo.git("push", "-q", "origin", "main")
    (repo.path / "benchmarks" / "bench_nightly_probe.py").write_text(SLEEPER)
    marker = root / "asv-is-benchmarking-the-second-commit"
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
    log = root / "interrupted-nightly.log"
    with open(log, "w") as output:
        process = subprocess.Popen(
            command,
            cwd=repo.path,
            env={**repo.env, "NIGHTLY_PROBE_MARKER": str(marker)},
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: asv and its workers die with it
        )
    deadline = time.monotonic() + 600
    while not marker.exists():
        ended = process.poll() is not None
        assert not ended, "nightly ended before its second commit:\n" + log.read_text()[-2000:]
        assert time.monotonic() < deadline, "nightly never reached its second commit"
        time.sleep(0.2)
    on_remote_at_kill = remote.result_commits(M1)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    rerun = nightly(repo, "m1", bench=f"{BENCH}|Sleeper")
    return older, newer, on_remote_at_kill, rerun


def test_first_run_benchmarks_every_commit_and_pushes(world, first_night):
    _, _, remote, repo = world
    assert remote.result_commits(M1) == short(repo.git("rev-list", "main").split())
    assert {"benchmarks.json", f"{M1}/machine.json", f"{M1}/manifest.txt"} <= set(first_night[1])


def test_a_partial_run_never_shadows_the_full_results(world, first_night):
    _, _, remote, repo = world
    assert not [name for name in remote.blobs() if name.startswith("m1/")]
    # The full machine still lacks every commit, whatever the partial run measured.
    everything = repo.git("rev-list", "main").split()
    env = default_release(repo.path).env_name
    assert commits_to_run(repo.path, "m1", "main", 10, [env], {BENCH}) == everything


def test_the_machine_file_describes_the_hardware(world, first_night):
    _, _, remote, _ = world
    described = json.loads(remote.git("show", f"{BRANCH}:{M1}/machine.json"))
    assert described["machine"] == M1
    assert described["cpu"] and described["num_cpu"] and described["arch"]


def test_manifest_records_the_environment(world, first_night):
    _, _, remote, _ = world
    manifest = remote.git("show", f"{BRANCH}:{M1}/manifest.txt")
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
    assert f"benchmarking {new[:8]} (1 of 1)" in output
    assert remote.result_commits(M1) == {*remote.result_commits(M1, first_night[1]), new[:8]}


def test_earlier_result_files_are_byte_identical(world, first_night, second_machine):
    _, _, remote, _ = world
    before, after = first_night[1], remote.blobs()
    commits = remote.result_commits(M1, before)
    kept = {
        name: blob
        for name, blob in before.items()
        if name.startswith(f"{M1}/") and name.split("/")[1][:8] in commits
    }
    assert kept
    assert {name: after.get(name) for name in kept} == kept


def test_two_machines_both_land(world, second_machine):
    _, _, remote, repo = world
    commits = short(repo.git("rev-list", "main").split())
    assert remote.result_commits(M2) == commits
    assert remote.result_commits(M1) == commits


def test_a_run_cut_after_its_first_commit_keeps_it_and_the_next_run_does_the_rest(
    world, interrupted_night
):
    _, _, remote, _ = world
    older, newer, on_remote_at_kill, rerun = interrupted_night
    # Newest first: the first commit was on the remote before the second one finished.
    assert newer[:8] in on_remote_at_kill and older[:8] not in on_remote_at_kill
    ok(rerun)
    assert f"benchmarking {older[:8]} (1 of 1)" in rerun.stdout
    assert newer[:8] not in rerun.stdout.replace(f"results for {older[:8]}", "")
    assert {older[:8], newer[:8]} <= remote.result_commits(M1)


def test_a_lost_push_race_is_replayed_and_benchmarks_json_merged(
    world, interrupted_night, shared_asv_env
):
    """Two machines commit on the same tip; the second push is rejected, re-fetched and
    replayed, both machines' files land, and both benchmark descriptions are kept."""
    root, env, remote, repo = world
    other = clone_project_repo(remote.path, root / "race", env, shared_asv_env)
    ours, theirs = ResultsBranch(repo.path), ResultsBranch(other.path)
    ours.check_out()
    theirs.check_out()
    (ours.worktree / M1 / "manifest.txt").write_text("ours\n")
    (theirs.worktree / M2 / "manifest.txt").write_text("theirs\n")
    for branch, name in ((ours, "bench_ours.A.time_a"), (theirs, "bench_theirs.B.time_b")):
        described = json.loads((branch.worktree / "benchmarks.json").read_text())
        renamed = {**described[BENCH], "name": name}  # a description asv can read
        (branch.worktree / "benchmarks.json").write_text(json.dumps({**described, name: renamed}))
    before = remote.blobs()
    assert theirs.commit("theirs") and ours.commit("ours")
    theirs.push()
    ours.push()
    after = remote.blobs()
    assert remote.git("show", f"{BRANCH}:{M1}/manifest.txt") == "ours"
    assert remote.git("show", f"{BRANCH}:{M2}/manifest.txt") == "theirs"
    untouched = set(before) - {"benchmarks.json", f"{M1}/manifest.txt", f"{M2}/manifest.txt"}
    assert {name: after[name] for name in untouched} == {name: before[name] for name in untouched}
    merged = json.loads(remote.git("show", f"{BRANCH}:benchmarks.json"))
    assert {"bench_ours.A.time_a", "bench_theirs.B.time_b", BENCH} <= set(merged)


@pytest.fixture(scope="module")
def published_site(world, interrupted_night):
    root, _, _, repo = world
    site = root / "site"
    ok(repo.tool("publish", "--site", str(site)))
    return site


def test_published_site_works_offline_in_a_browser(world, published_site, request):
    _, _, remote, _ = world
    artifacts = Path(request.config.rootpath) / "test-artifacts"
    seen = browse_site(published_site, BENCH, artifacts / "nightly-site")
    assert seen.off_host_requests == []
    assert seen.failed_requests == []
    assert seen.console_errors == []
    assert BENCH in seen.overview_text
    # The benchmark's page lists the commits measured (both machines measured them all).
    assert set(seen.points) == remote.result_commits(M1), seen.points
    assert seen.screenshots and all(path.stat().st_size > 10_000 for path in seen.screenshots)
    # asv's legacy page and scripts are not published.
    assert not (published_site / "index.legacy.html").exists()
    assert not list(published_site.glob("*.js"))


def test_a_corrupt_result_file_is_named_and_nothing_is_pushed(world, published_site):
    root, env, remote, repo = world
    corrupt = ProjectRepo(root / "corrupt", env)
    subprocess.run(
        ["git", "clone", "-q", "-b", BRANCH, str(remote.path), str(corrupt.path)],
        env=env,
        check=True,
    )
    victim = next(p for p in sorted((corrupt.path / M1).glob("*.json")) if p.name != "machine.json")
    victim.write_text('{"commit_hash": ')
    corrupt.commit("corrupt one result file")
    corrupt.git("push", "-q", "origin", BRANCH)
    tip = remote.tip()
    for done in (nightly(repo, "m1"), repo.tool("publish", "--site", str(root / "site2"))):
        assert done.returncode == 4
        (line,) = done.stderr.strip().splitlines()
        assert "corrupt result file" in line and f"{M1}/{victim.name}" in line
    assert remote.tip() == tip
