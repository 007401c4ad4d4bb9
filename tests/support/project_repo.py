"""Temporary git repositories made from this working tree, for the tests that run asv
and the tooling for real: the end-to-end run, the nightly, the PR gate and bisect.

Every repository links ``.asv/env`` to one env shared by the test session, so asv builds
torch's virtualenv once (about 45 s), not once per repository. Each commit still gets its
own build and install of tensorops, as in production.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tests.support import REPO_ROOT

ASV = str(Path(sys.executable).with_name("asv"))


def project_files() -> list[str]:
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return [name for name in listed.stdout.splitlines() if (REPO_ROOT / name).is_file()]


def isolated_env(home: Path, **extra: str) -> dict:
    """The environment for asv and git: a private HOME (asv's machine file lives
    there), a fixed git identity, and no thread override from the caller."""
    home.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "HOME": str(home),
        "GIT_AUTHOR_NAME": "tests",
        "GIT_AUTHOR_EMAIL": "tests@example.invalid",
        "GIT_COMMITTER_NAME": "tests",
        "GIT_COMMITTER_EMAIL": "tests@example.invalid",
        **extra,
    }
    env.pop("TENSOROPS_THREADS", None)
    env.pop("GITHUB_STEP_SUMMARY", None)
    return env


@dataclass
class ProjectRepo:
    path: Path
    env: dict

    def run(self, *args: str, check: bool = True, timeout: float = 900):
        done = subprocess.run(
            args, cwd=self.path, env=self.env, capture_output=True, text=True, timeout=timeout
        )
        if check:
            assert done.returncode == 0, (
                f"{' '.join(args)} exited {done.returncode}:\n"
                f"{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
            )
        return done

    def git(self, *args: str) -> str:
        return self.run("git", *args).stdout.strip()

    def tool(self, name: str, *args: str, timeout: float = 900):
        """One of this repository's own tools/*.py, as the workflows run it."""
        return self.run(sys.executable, "-m", f"tools.{name}", *args, check=False, timeout=timeout)

    def commit(self, message: str, edit: Callable[[Path], None] | None = None) -> str:
        if edit is not None:
            edit(self.path)
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD")

    def commit_bytes(self, message: bytes, scratch: Path) -> str:
        """An empty commit whose message is ``message`` as given, bytes that are not UTF-8
        included: git stores and shows them as they are (an encoding it cannot convert
        from)."""
        scratch.write_bytes(message)
        self.run(
            "git",
            "-c",
            "i18n.commitEncoding=x-unknown",
            "commit",
            "-q",
            "--allow-empty",
            "-F",
            str(scratch),
        )
        return self.git("rev-parse", "HEAD")

    def share_asv_env(self, shared_env: Path) -> None:
        (self.path / ".asv").mkdir(exist_ok=True)
        (self.path / ".asv" / "env").symlink_to(shared_env, target_is_directory=True)


def make_project_repo(path: Path, env: dict, shared_env: Path) -> ProjectRepo:
    """A one-commit repository of this working tree (committed or not) on branch main."""
    for name in project_files():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO_ROOT / name, path / name)
    repo = ProjectRepo(path, env)
    repo.git("init", "-q", "-b", "main")
    repo.commit("first")
    repo.share_asv_env(shared_env)
    return repo


def clone_project_repo(source: Path, path: Path, env: dict, shared_env: Path) -> ProjectRepo:
    subprocess.run(["git", "clone", "-q", str(source), str(path)], env=env, check=True)
    repo = ProjectRepo(path, env)
    repo.share_asv_env(shared_env)
    return repo


def plant_in_activation(root: Path, old: str, new: str, what: str) -> None:
    """Replace ``old`` with ``new`` in the library's activations; ``what`` names the
    variant, for the line that says the plant no longer fits."""
    source = root / "src" / "tensorops" / "activation.py"
    text = source.read_text()
    planted = text.replace(old, new)
    assert planted != text, f"{what} changed; update the plant"
    source.write_text(planted)


def slow_down_silu(root: Path, factor: int = 2) -> None:
    """Plant a slowdown in one op: silu's functional variant computes its result
    ``factor`` times."""
    plant_in_activation(
        root,
        '    """F.silu: one fused kernel."""\n    return F.silu(x)\n',
        '    """F.silu: one fused kernel."""\n'
        f"    for _ in range({factor - 1}):\n        F.silu(x)\n    return F.silu(x)\n",
        "silu's functional variant",
    )


def break_gelu_in_its_warm_up(root: Path) -> None:
    """Make gelu's exact variant index past the end of its input: an IndexError in the
    op's own call, which its benchmark's warm-up meets first."""
    docstring = '    """F.gelu with the erf form."""\n'
    plant_in_activation(
        root,
        docstring,
        docstring + "    x[x.shape[0]]  # planted: past the end\n",
        "gelu's exact variant",
    )


def break_silu(root: Path) -> None:
    """Make silu's functional variant raise, so its benchmark fails."""
    docstring = '    """F.silu: one fused kernel."""\n'
    plant_in_activation(
        root,
        docstring,
        docstring + '    raise RuntimeError("planted failure")\n',
        "silu's functional variant",
    )
