"""git, run the one way the tools run it: output decoded whatever the bytes (a commit
message need not be UTF-8), failures as one line, never a prompt."""

from __future__ import annotations

import contextlib
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

from tools._lib.base.cli import BadInput, ExternalFailure, one_line


def git(
    *args: str,
    cwd: Path,
    check: bool = True,
    env: dict | None = None,
    secret: str = "",
) -> str:
    """git's output, stripped; an ExternalFailure line when it fails and ``check``.
    ``secret`` (a token in an argument) is blanked out of that line."""
    done = subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, stdin=subprocess.DEVNULL, env=env
    )
    output = done.stdout.decode("utf-8", errors="replace").strip()
    if check and done.returncode != 0:
        said = one_line(done.stderr.decode("utf-8", errors="replace") or output)
        message = f"git {' '.join(args)} failed: {said or f'exit status {done.returncode}'}"
        raise ExternalFailure(message.replace(secret, "***") if secret else message)
    return output


def resolve_commit(name: str, repo: Path) -> str:
    """The full hash of commit ``name``; bad input when there is none."""
    resolved = git("rev-parse", "--verify", "--quiet", f"{name}^{{commit}}", cwd=repo, check=False)
    if not resolved:
        raise BadInput(f"{name!r} is not a commit of this repository")
    return resolved


def repo_root() -> Path:
    """The top of the git checkout the command runs in."""
    top = git("rev-parse", "--show-toplevel", cwd=Path.cwd(), check=False)
    if not top:
        raise BadInput(f"{Path.cwd()} is not inside a git checkout of the project")
    return Path(top)


def first_parent_commits(revision_range: Sequence[str] | str, cwd: Path) -> list[str]:
    """Commits newest first, along first parents (the history asv graphs)."""
    spec = [revision_range] if isinstance(revision_range, str) else list(revision_range)
    return git("rev-list", "--first-parent", *spec, cwd=cwd).split()


def is_ancestor(older: str, newer: str, repo: Path) -> bool:
    done = subprocess.run(
        ["git", "merge-base", "--is-ancestor", older, newer], cwd=repo, capture_output=True
    )
    return done.returncode == 0


def commit_count(older: str, newer: str, repo: Path) -> int:
    """Commits in ``older..newer``."""
    return int(git("rev-list", "--count", f"{older}..{newer}", cwd=repo))


def subject_and_author(commit: str, repo: Path) -> tuple[str, str]:
    """A commit's subject and ``name <email>``, whatever their encoding."""
    subject, _, author = git("log", "-1", "--format=%s%x00%an <%ae>", commit, cwd=repo).partition(
        "\0"
    )
    return subject, author


@contextlib.contextmanager
def commit_library(repo: Path, commit: str) -> Iterator[Path]:
    """A worktree of ``commit``, removed afterwards; its ``src`` is that commit's library
    (tensorops is pure Python, so its source is what asv would install)."""
    with tempfile.TemporaryDirectory(prefix="library-") as scratch:
        tree = Path(scratch) / commit[:12]
        git("worktree", "add", "--quiet", "--detach", str(tree), commit, cwd=repo)
        try:
            yield tree / "src"
        finally:
            git("worktree", "remove", "--force", str(tree), cwd=repo, check=False)
