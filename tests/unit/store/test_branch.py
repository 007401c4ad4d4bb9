"""The results branch's guards, with real git against a local bare remote (no benchmark
runs): a rewound, deleted or replaced branch is refused, a machine name that stands for
other hardware is refused, git's locks left by a killed run are cleared, an outbox is
pushed only onto the history it started from and only into results-tree paths, and a
transient push failure is retried while a real one keeps git's message."""

from __future__ import annotations

import fcntl
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import REPO_ROOT
from tests.support.results_world import (
    BRANCH,
    World,
    make_outbox,
    new_result,
    nightly,
    refused,
    results_tree,
)
from tools._lib.asv.machines import describe_machine
from tools._lib.base.cli import ExternalFailure
from tools._lib.store import branch as results_branch
from tools._lib.store.branch import ResultsBranch


@pytest.fixture
def world(tmp_path) -> World:
    return World(tmp_path)


def test_a_rewound_branch_is_refused(world):
    ResultsBranch(world.repo.path).check_out()  # this checkout saw the tip
    first = world.seed.git("rev-parse", "HEAD")
    world.write(world.seed, {"m1/bbbbbbbb-env.json": json.dumps({"commit_hash": "b" * 40})})
    world.seed.commit("more results")
    world.seed.git("push", "-q", str(world.remote), BRANCH)
    ResultsBranch(world.repo.path).check_out()
    world.force_push(first)  # a force-push that drops the newer results
    refused(nightly(world.repo), "does not contain", "rewound")
    assert world.tip() == first


def test_a_deleted_branch_is_refused_where_it_was_seen(world):
    ResultsBranch(world.repo.path).check_out()
    world.seed.git("push", "-q", str(world.remote), f":refs/heads/{BRANCH}")
    refused(nightly(world.repo), "has no asv-results branch any more")


def test_a_branch_that_is_no_results_tree_is_refused(world):
    main = world.seed.git("rev-parse", "HEAD")
    stranger = world.clone("stranger")
    (stranger.path / "README.md").write_text("a project, not results\n")
    stranger.git("add", "-f", "README.md")
    stranger.git("commit", "-q", "-m", "not results")
    stranger.git("push", "-q", "--force", "origin", f"HEAD:refs/heads/{BRANCH}")
    refused(nightly(world.clone("fresh")), "is not a results tree", "README.md")
    assert world.tip() != main


def test_the_per_machine_folders_are_no_machines_of_their_own(world):
    """triage/ and releases/ hold a file per machine, and no machine.json: still a
    results tree, to which results land."""
    world.write(world.seed, {"triage/m1.json": "{}", "releases/m1.json": "{}"})
    world.seed.commit("the triage's and the releases run's files")
    world.seed.git("push", "-q", str(world.remote), BRANCH)
    box = make_outbox(world, world.tip(), new_result())
    done = world.repo.tool("push_results", str(box))
    assert done.returncode == 0, done.stderr


def test_a_machine_name_of_other_hardware_is_refused(world):
    world.write(world.seed, results_tree(arch="aarch64", num_cpu="64"))
    world.seed.commit("another box under the same name")
    world.seed.git("push", "-q", str(world.remote), BRANCH)
    tip = world.tip()
    refused(nightly(world.repo), "'m1' already stands for other hardware", "num_cpu '64'")
    assert world.tip() == tip


def test_an_outbox_is_pushed_once_onto_the_history_it_started_from(world):
    box = make_outbox(world, world.tip(), new_result())
    done = world.repo.tool("push_results", str(box))
    assert done.returncode == 0, done.stderr
    assert "m1: pushed" in done.stdout
    listed = world.seed.git("ls-remote", str(world.remote), BRANCH)
    assert world.tip() in listed
    again = world.repo.tool("push_results", str(box))
    assert again.returncode == 0 and "m1: nothing new" in again.stdout


def test_an_outbox_whose_base_was_rewound_away_is_refused(world):
    first = world.tip()
    world.write(world.seed, new_result("d" * 40))
    world.seed.commit("more")
    world.seed.git("push", "-q", str(world.remote), BRANCH)
    box = make_outbox(world, world.tip(), new_result())
    world.force_push(first)
    refused(world.repo.tool("push_results", str(box)), "does not contain")
    assert world.tip() == first


def test_an_outbox_cannot_write_outside_the_results_tree(world):
    box = make_outbox(world, world.tip(), new_result())
    (box / "files" / ".github" / "workflows").mkdir(parents=True)
    (box / "files" / ".github" / "workflows" / "evil.yml").write_text("on: push\n")
    tip = world.tip()
    refused(world.repo.tool("push_results", str(box)), "does not belong on a results branch")
    assert world.tip() == tip


def test_an_outbox_of_other_hardware_under_a_known_name_is_refused(world):
    described = {**describe_machine("m1"), "num_cpu": "64", "version": 1}
    box = make_outbox(
        world, world.tip(), {**new_result(), "m1/machine.json": json.dumps(described)}
    )
    refused(world.repo.tool("push_results", str(box)), "other hardware")


def test_locks_a_killed_run_left_are_cleared(world):
    branch = ResultsBranch(world.repo.path)
    branch.check_out()
    gitdir = Path(
        subprocess.run(
            ["git", "rev-parse", "--absolute-git-dir"],
            cwd=branch.worktree,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    (gitdir / "index.lock").write_text("")  # what a kill during `git commit` leaves
    box = make_outbox(world, world.tip(), new_result())
    done = world.repo.tool("push_results", str(box))
    assert done.returncode == 0, done.stderr
    assert "left by a run that was killed" in done.stdout
    assert not (gitdir / "index.lock").exists()


def test_a_second_run_in_the_same_checkout_is_refused(world):
    branch = ResultsBranch(world.repo.path)
    with open(branch.state_dir / "lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        refused(nightly(world.repo), "another run holds")


class FlakyPush:
    """git push fails with ``errors`` in turn, then runs for real."""

    def __init__(self, errors: list[str]):
        self.errors, self.calls = errors, 0
        self.real = subprocess.run

    def __call__(self, command, **kwargs):
        if "push" in command:
            self.calls += 1
            if self.errors:
                return subprocess.CompletedProcess(command, 128, "", self.errors.pop(0))
        return self.real(command, **kwargs)


def test_a_transient_push_failure_is_retried(world, monkeypatch):
    flaky = FlakyPush(
        ["fatal: unable to access 'https://github.com/x/y/': Could not resolve host: github.com\n"]
    )
    monkeypatch.setattr(results_branch.subprocess, "run", flaky)
    monkeypatch.setattr(results_branch.time, "sleep", lambda seconds: None)
    branch = ResultsBranch(world.repo.path)
    branch.check_out()
    branch.write_files({name: text.encode() for name, text in new_result().items()})
    assert branch.land("retry me")
    assert flaky.calls == 2 and world.tip() == branch.tip


def test_a_refused_push_fails_at_once_with_gits_message(world, monkeypatch):
    denied = (
        "remote: Permission to x/y.git denied to bot.\nfatal: unable to access "
        "'https://github.com/x/y/': The requested URL returned error: 403\n"
    )
    flaky = FlakyPush([denied] * 5)
    monkeypatch.setattr(results_branch.subprocess, "run", flaky)
    branch = ResultsBranch(world.repo.path)
    branch.check_out()
    branch.write_files({name: text.encode() for name, text in new_result().items()})
    with pytest.raises(ExternalFailure, match=r"Permission to x/y\.git denied") as raised:
        branch.land("denied")
    assert flaky.calls == 1 and "\n" not in str(raised.value)


def test_the_token_reaches_git_per_command_and_never_its_config(world, monkeypatch):
    monkeypatch.setenv("GITHUB_TOKEN", "secret-token")
    branch = ResultsBranch(world.repo.path)
    assert branch.remote_env() is None  # a local remote: no header at all
    world.repo.git("remote", "set-url", "origin", "https://github.com/o/r.git")
    env = branch.remote_env()
    assert env["GIT_CONFIG_KEY_0"] == "http.extraheader"
    assert env["GIT_CONFIG_VALUE_0"].startswith("AUTHORIZATION: basic ")
    assert "secret-token" not in (world.repo.path / ".git" / "config").read_text()


@pytest.mark.parametrize("tool", ["push_results", "pr_comment", "file_issues"])
def test_the_jobs_that_hold_a_write_token_run_on_a_bare_interpreter(tool):
    """The push, the comment and the filing install nothing: their modules import the
    standard library alone."""
    probe = (
        f"import sys, tools.{tool}; "
        "third = [m for m in sys.modules if m.split('.')[0] in "
        "('torch', 'asv', 'asv_runner', 'numpy', 'tensorops', 'benchmarks')]; "
        "print(third); sys.exit(bool(third))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO_ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
