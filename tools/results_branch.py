"""The results branch: an orphan branch holding asv's result files, checked out as a
git worktree at asv's results_dir (``.asv/results``), so asv reads and writes it in place.

Nothing reaches the branch until a run has finished and committed; a run killed half-way
leaves the branch as it was, and the next checkout throws the partial files away. Result
files are one per machine and commit, so concurrent machines never edit the same file:
a push that loses the race is replayed onto the new tip.
"""

from __future__ import annotations

import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from tools.common import RESULTS_DIR, ToolError, git

DEFAULT_BRANCH = "asv-results"
# Overridden by GIT_AUTHOR_* / GIT_COMMITTER_* in the environment when those are set.
IDENTITY = ("-c", "user.name=tensorops results", "-c", "user.email=results@tensorops.invalid")


@dataclass(frozen=True)
class ResultsBranch:
    repo: Path
    remote: str = "origin"
    branch: str = DEFAULT_BRANCH

    @property
    def worktree(self) -> Path:
        return self.repo / RESULTS_DIR

    @property
    def tracking_ref(self) -> str:
        return f"refs/remotes/{self.remote}/{self.branch}"

    def _git(self, *args: str, check: bool = True) -> str:
        return git(*args, cwd=self.worktree, check=check)

    def fetch(self) -> str | None:
        """The remote tip, fetched; None while the branch does not exist yet."""
        if not git("ls-remote", "--heads", self.remote, self.branch, cwd=self.repo):
            return None
        git(
            "fetch",
            "--quiet",
            self.remote,
            f"+refs/heads/{self.branch}:{self.tracking_ref}",
            cwd=self.repo,
        )
        return git("rev-parse", self.tracking_ref, cwd=self.repo)

    def _empty_root(self) -> str:
        empty_tree = git("hash-object", "-t", "tree", "-w", "/dev/null", cwd=self.repo)
        return git(*IDENTITY, "commit-tree", empty_tree, "-m", "asv results", cwd=self.repo)

    def _is_worktree_of_repo(self) -> bool:
        inside = git("rev-parse", "--show-toplevel", cwd=self.worktree, check=False)
        common = git("rev-parse", "--git-common-dir", cwd=self.worktree, check=False)
        ours = git("rev-parse", "--git-common-dir", cwd=self.repo)
        return (
            bool(inside)
            and Path(inside).resolve() == self.worktree.resolve()
            and (self.worktree / common).resolve() == (self.repo / ours).resolve()
        )

    def check_out(self) -> str:
        """Make the worktree a clean copy of the remote tip (an empty root when the branch
        is new), discarding whatever an interrupted run left. Returns the commit."""
        tip = self.fetch() or self._empty_root()
        git("worktree", "prune", cwd=self.repo)
        if self.worktree.exists():
            if not self._is_worktree_of_repo():
                raise ToolError(
                    f"{self.worktree} holds results that are not a worktree of the "
                    f"{self.branch} branch; move them away and run again"
                )
            self._git("checkout", "--quiet", "--force", "--detach", tip)
            self._git("clean", "-fdxq")
        else:
            self.worktree.parent.mkdir(parents=True, exist_ok=True)
            git("worktree", "add", "--quiet", "--detach", str(self.worktree), tip, cwd=self.repo)
        return tip

    def commit(self, message: str) -> bool:
        """Commit everything in the worktree; False when there was nothing new."""
        self._git("add", "--all")
        if (
            subprocess.run(["git", "diff", "--cached", "--quiet"], cwd=self.worktree).returncode
            == 0
        ):
            return False
        self._git(*IDENTITY, "commit", "--quiet", "-m", message)
        return True

    def push(self, attempts: int = 5) -> None:
        """Push HEAD; on a rejected push, fetch and replay this commit's files on the tip."""
        error = ""
        for attempt in range(attempts):
            pushed = subprocess.run(
                ["git", "push", "--quiet", self.remote, f"HEAD:refs/heads/{self.branch}"],
                cwd=self.worktree,
                capture_output=True,
                text=True,
            )
            if pushed.returncode == 0:
                return
            error = pushed.stderr.strip().splitlines()[-1:] or ["(no message)"]
            self._replay_on_remote_tip()
            time.sleep(min(2**attempt, 10))
        raise ToolError(f"push to {self.remote} {self.branch} failed {attempts} times: {error[0]}")

    def _replay_on_remote_tip(self) -> None:
        message = self._git("log", "-1", "--format=%B")
        names = self._git("diff-tree", "--no-commit-id", "--name-only", "-r", "HEAD").splitlines()
        saved = {name: (self.worktree / name).read_bytes() for name in names}
        tip = self.fetch()
        if tip is None:
            raise ToolError(f"{self.remote} rejected the push and has no {self.branch} branch")
        self._git("checkout", "--quiet", "--force", "--detach", tip)
        self._git("clean", "-fdxq")
        for name, content in saved.items():
            (self.worktree / name).parent.mkdir(parents=True, exist_ok=True)
            (self.worktree / name).write_bytes(content)
        self.commit(message)
