"""A bare remote whose results branch holds a small results tree, and checkouts of the
project cloned from it: the world the results branch's and the hardening's tests run in."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support import REPO_ROOT
from tests.support.project_repo import ProjectRepo, isolated_env
from tools._lib.asv.machines import describe_machine
from tools._lib.store.outbox import Outbox

BRANCH = "asv-results"


def results_tree(machine: str = "m1", **overrides: str) -> dict[str, str]:
    described = {**describe_machine(machine), "version": 1, **overrides}
    return {
        "benchmarks.json": json.dumps({"version": 2}),
        f"{machine}/machine.json": json.dumps(described),
        f"{machine}/aaaaaaaa-env.json": json.dumps({"commit_hash": "a" * 40}),
    }


class World:
    """A bare remote whose results branch holds ``results_tree()``, and a checkout of the
    project (its tools) cloned from it."""

    def __init__(self, root: Path):
        self.root = root
        self.env = isolated_env(root / "home")
        self.remote = root / "remote.git"
        subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(self.remote)], check=True)
        seed = ProjectRepo(root / "seed", self.env)
        seed.path.mkdir()
        seed.git("init", "-q", "-b", BRANCH)
        self.write(seed, results_tree())
        seed.commit("results")
        seed.git("push", "-q", str(self.remote), BRANCH)
        self.seed = seed
        self.repo = self.clone("repo")

    def clone(self, name: str) -> ProjectRepo:
        repo = ProjectRepo(self.root / name, self.env)
        subprocess.run(["git", "clone", "-q", str(self.remote), str(repo.path)], check=True)
        for tool in ("tools", "benchmarks", "src"):
            (repo.path / tool).symlink_to(REPO_ROOT / tool)
        (repo.path / ".git" / "info" / "exclude").write_text("tools\nbenchmarks\nsrc\n.asv\n")
        repo.git("commit", "-q", "--allow-empty", "-m", "main")
        repo.git("push", "-q", "origin", "HEAD:refs/heads/main")
        return repo

    @staticmethod
    def write(repo: ProjectRepo, files: dict[str, str]) -> None:
        for name, text in files.items():
            (repo.path / name).parent.mkdir(parents=True, exist_ok=True)
            (repo.path / name).write_text(text)

    def tip(self) -> str:
        return subprocess.run(
            ["git", "--git-dir", str(self.remote), "rev-parse", BRANCH],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()

    def force_push(self, commit: str) -> None:
        self.seed.git("push", "-q", "--force", str(self.remote), f"{commit}:refs/heads/{BRANCH}")


def refused(done, *words: str) -> None:
    assert done.returncode == 4, done.stdout + done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert all(word in line for word in words), line


def nightly(repo: ProjectRepo):
    return repo.tool("nightly", "--machine", "m1", timeout=300)


def make_outbox(world: World, base: str, files: dict[str, str]) -> Path:
    outbox = Outbox(world.root / "outbox")
    outbox.start("m1", base)
    outbox.add({name: text.encode() for name, text in files.items()})
    return outbox.path


def new_result(commit: str = "c" * 40) -> dict[str, str]:
    return {f"m1/{commit[:8]}-env.json": json.dumps({"commit_hash": commit})}


def push_at_once(pushes: list[tuple[ProjectRepo, Path]]) -> None:
    """``tools.push_results`` of each (checkout, outbox) started together, racing to one
    remote; each must land."""
    racing = [
        subprocess.Popen(
            [sys.executable, "-m", "tools.push_results", str(box)],
            cwd=clone.path,
            env=clone.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for clone, box in pushes
    ]
    for process in racing:
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0, out + err
