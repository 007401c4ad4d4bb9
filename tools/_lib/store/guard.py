"""What the results branch refuses, kept apart from how it lands results: a tip that does not
contain one seen before (this checkout's record, and the remote's own, so an ephemeral
runner that never saw the branch refuses a rewound one too), a tree that is not a results
tree, a machine name that stands for another machine, and a second run in one checkout
(git's own lock files a killed run left are cleared)."""

from __future__ import annotations

import contextlib
import fcntl
import json
from collections.abc import Iterator
from pathlib import Path

from tools._lib.base.cli import BadInput
from tools._lib.base.git import git, is_ancestor
from tools._lib.store.tree import PER_MACHINE_FOLDERS, RESULTS_TREE, hardware_differences


class Guard:
    """The checks of one results branch (tools/_lib/store/branch.ResultsBranch), its
    collaborator: the branch is what it reads (its repository, remote, refs, worktree and
    this checkout's records), and the branch asks it before it lands anything."""

    def __init__(self, results):
        self.results = results

    @property
    def seen_record(self) -> Path:
        return self.results.state_dir / f"seen-{self.results.remote}-{self.results.branch}"

    def record_seen(self, commit: str) -> None:
        self.seen_record.write_text(commit + "\n")

    def seen_tips(self, since: str | None) -> list[tuple[str, str]]:
        """The tips a new tip must contain, each with what to remove to accept one that
        does not: ``since``, or the one this checkout last saw, and the remote's record."""
        seen = []
        if since:
            seen.append((since, "nothing: the run's own start"))
        elif self.seen_record.exists():
            seen.append((self.seen_record.read_text().strip(), str(self.seen_record)))
        remote = git(
            "rev-parse",
            "--verify",
            "--quiet",
            self.results.tracking_seen_ref,
            cwd=self.results.repo,
            check=False,
        )
        if remote:
            seen.append((remote, f"{self.results.seen_ref} on {self.results.remote}"))
        return seen

    def check_tip(self, tip: str, since: str | None = None) -> None:
        """Refuse a tip that rewrote history this checkout, the remote's record (or
        ``since``) saw, or that is not a results tree."""
        for seen, record in self.seen_tips(since):
            if seen and seen != tip and not is_ancestor(seen, tip, self.results.repo):
                raise BadInput(
                    f"{self.results.remote} {self.results.branch} is at {tip[:12]}, which does "
                    f"not contain {seen[:12]}, a tip seen before: the branch was rewound or "
                    "replaced; "
                    f"restore it, or remove {record} to accept the new history"
                )
        names = git("ls-tree", "-r", "--name-only", tip, cwd=self.results.repo).splitlines()
        strangers = [name for name in names if not RESULTS_TREE.match(name)]
        machines = {name.split("/")[0] for name in names if "/" in name} - set(PER_MACHINE_FOLDERS)
        unnamed = [m for m in sorted(machines) if f"{m}/machine.json" not in names]
        if strangers or unnamed:
            what = strangers[:3] or [f"{unnamed[0]}/ without machine.json"]
            raise BadInput(
                f"{self.results.remote} {self.results.branch} at {tip[:12]} is not a results "
                f"tree (it holds {', '.join(what)}); refusing to add results to it"
            )

    def check_machine(self, machine: str, described: dict) -> None:
        """Refuse to file results under a machine name that stands for other hardware."""
        stored_path = self.results.worktree / machine / "machine.json"
        if not stored_path.exists():
            return
        differ = hardware_differences(json.loads(stored_path.read_text()), described)
        if differ:
            raise BadInput(
                f"machine name {machine!r} already stands for other hardware on "
                f"{self.results.branch} ({'; '.join(differ)}); give this machine its own --machine"
            )

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """One run per checkout; git's lock files a killed run left are cleared."""
        with open(self.results.state_dir / "lock", "w") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise BadInput(
                    f"another run holds {self.results.state_dir / 'lock'}; wait for it to finish"
                ) from None
            self._clear_stale_git_locks()
            yield

    def _clear_stale_git_locks(self) -> None:
        candidates = [self.results.state_dir.parent / f"{self.results.tracking_ref}.lock"]
        if self.results.worktree.exists():
            gitdir = self.results.in_worktree("rev-parse", "--git-dir", check=False)
            if gitdir:
                folder = (self.results.worktree / gitdir).resolve()
                candidates += [folder / "index.lock", folder / "HEAD.lock"]
        for stale in candidates:
            if stale.exists():
                stale.unlink()
                print(f"results: removed {stale}, left by a run that was killed")
