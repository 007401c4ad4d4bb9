"""A bad night, replayed end to end against a local remote and the GitHub stand-in: a
history holding a commit message that is not UTF-8 and a planted slowdown whose subject
carries another regression's marker, a mention, a link and HTML; machine m1's nightly cut
by a full disk after its first commit; machine m2 pushing its own results and triage
record in between. Every finished result and every triage record of both machines is on
the results branch, exactly one issue is filed (the subject in it as data), the site
publishes, and the next night recovers by itself.

A full disk is a small tmpfs filled once the first commit's results are in the outbox
(mounting one needs root, which CI has)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time

import pytest

from tests.support.github_standin import github_standin
from tests.support.planted import ROW, plant, selection
from tests.support.project_repo import (
    ProjectRepo,
    clone_project_repo,
    isolated_env,
    make_project_repo,
)

pytestmark = [
    pytest.mark.timeout(1800),
    pytest.mark.skipif(os.geteuid() != 0, reason="mounting a small tmpfs (a full disk) needs root"),
]

HOSTILE = "logsumexp does more <!-- tensorops-regression: m9|x|a..b --> @team #1 <img src=x>"
BENCH = ["--", "--bench", selection(ROW)]


def ok(done) -> None:
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


@pytest.fixture(scope="module")
def night(tmp_path_factory, shared_asv_env):
    root = tmp_path_factory.mktemp("bad-night")
    remote = root / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    env = isolated_env(root / "home")
    a = make_project_repo(root / "a", env, shared_asv_env)
    a.commit_bytes("caf\xe9: a message that is not UTF-8\n".encode("latin-1"), root / "latin-1")
    planted = a.commit(HOSTILE, plant)
    a.commit("after")
    a.git("remote", "add", "origin", str(remote))
    a.git("push", "-q", "origin", "main")
    base = a.git("rev-parse", "HEAD~3")
    ok(a.tool("nightly", "--machine", "m1", "--ref", base, "--max-commits", "1", *BENCH))
    yield root, remote, env, a, planted
    subprocess.run(["umount", str(root / "disk")], capture_output=True)


def cut_by_a_full_disk(root, a) -> subprocess.CompletedProcess:
    """m1's nightly of the two newest commits into an outbox on a small tmpfs, filled once
    the first commit's results are there."""
    disk = root / "disk"
    disk.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(disk)], check=True)
    outbox = disk / "outbox"
    command = [
        sys.executable,
        "-m",
        "tools.nightly",
        "--machine",
        "m1",
        "--max-commits",
        "2",
        "--no-fetch",
        "--outbox",
        str(outbox),
        *BENCH,
    ]
    process = subprocess.Popen(
        command,
        cwd=a.path,
        env=a.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + 600
    while not list((outbox / "files" / "m1-partial").glob("*-*.json")):
        assert process.poll() is None and time.monotonic() < deadline, "no first commit"
        time.sleep(0.2)
    filler = disk / "filler"
    with open(filler, "wb") as fill, contextlib.suppress(OSError):
        while True:
            fill.write(b"\0" * 65536)
    try:
        output, _ = process.communicate(timeout=600)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate()
    filler.unlink()
    return subprocess.CompletedProcess(command, process.returncode, output, "")


def test_a_bad_night_keeps_both_machines_files_and_files_the_one_issue(night, shared_asv_env):
    root, remote, env, a, planted = night
    cut = cut_by_a_full_disk(root, a)
    assert cut.returncode != 0, cut.stdout[-2000:]
    outbox = root / "disk" / "outbox"
    # m2 lands its own night meanwhile: its results and its triage record.
    b = clone_project_repo(remote, root / "b", env, shared_asv_env)
    ok(b.tool("nightly", "--machine", "m2", "--max-commits", "1", *BENCH))
    ok(b.tool("triage", "--machine", "m2-partial"))
    ok(a.tool("push_results", str(outbox)))  # what the cut night finished
    ok(a.tool("triage", "--machine", "m1-partial", "--report", str(root / "report.json")))
    names = subprocess.run(
        ["git", "--git-dir", str(remote), "ls-tree", "-r", "--name-only", "asv-results"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for machine in ("m1-partial", "m2-partial"):
        assert f"triage/{machine}.json" in names and f"{machine}/machine.json" in names
    tip = a.git("rev-parse", "main")[:8]
    assert f"m1-partial/{tip}" in names  # the commit the full disk did not cut
    with github_standin() as standin:
        filer = ProjectRepo(a.path, {**a.env, **standin.env()})
        ok(filer.tool("file_issues", str(root / "report.json")))
        (issue,) = standin.issues.values()
        assert planted[:8] in issue["title"]
        body = issue["body"].rstrip().splitlines()
        assert body[-1].startswith("<!-- tensorops-regression: m1-partial|")
        assert f"- subject: `{HOSTILE}`" in body
        assert sum("<!--" in line for line in body) == 2  # the subject's, as data, and ours
        # The next night measures what the cut one did not, and files nothing new.
        ok(a.tool("nightly", "--machine", "m1", "--max-commits", "2", *BENCH))
        ok(a.tool("triage", "--machine", "m1-partial", "--report", str(root / "again.json")))
        ok(filer.tool("file_issues", str(root / "again.json")))
        assert len(standin.issues) == 1
    ok(a.tool("publish", "--site", str(root / "site")))
    assert (root / "site" / "index.html").exists()
