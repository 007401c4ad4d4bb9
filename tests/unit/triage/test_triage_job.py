"""The triage as a job of its own, after the push (nightly.yml's triage and push-triage
jobs): it checks the branch out, starts its own outbox from that tip, and the push lands
its records. Real git against a local bare remote; no benchmark runs (the history holds no
result of main's commits, so there is no step to confirm)."""

from __future__ import annotations

import json
import shutil
import subprocess

from tests.support import REPO_ROOT
from tests.support.results_world import BRANCH, World
from tools._lib.store.outbox import Outbox


def test_a_triage_job_of_its_own_starts_its_outbox_and_the_push_lands_its_records(tmp_path):
    world = World(tmp_path)
    shutil.copy(REPO_ROOT / "asv.conf.json", world.repo.path / "asv.conf.json")
    with (world.repo.path / ".git" / "info" / "exclude").open("a") as exclude:
        exclude.write("asv.conf.json\n")
    tip = world.tip()
    outbox = tmp_path / "outbox"
    report = tmp_path / "report.json"
    done = world.repo.tool(
        "triage",
        "--machine",
        "m1",
        "--no-fetch",
        "--outbox",
        str(outbox),
        "--report",
        str(report),
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "triage: 0 new steps on m1" in done.stdout
    box = Outbox(outbox)
    assert (box.machine, box.base) == ("m1", tip)
    assert list(box.files()) == ["triage/m1.json"]
    assert json.loads(report.read_text())

    pushed = world.repo.tool("push_results", str(outbox), timeout=120)
    assert pushed.returncode == 0, pushed.stdout + pushed.stderr
    landed = subprocess.run(
        ["git", "--git-dir", str(world.remote), "show", f"{BRANCH}:triage/m1.json"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert json.loads(landed) == json.loads(box.files()["triage/m1.json"])
