"""The results branch: an orphan branch of asv's result files, checked out as a git worktree
at asv's results_dir (``.asv/results``), so asv reads and writes it in place.

What it guards:

- it lands results commit by commit (:meth:`ResultsBranch.land`), so a run cut half-way
  keeps every commit it finished; a push that loses a race to another machine, or to
  another shard of this one, is replayed onto the new tip, ``benchmarks.json`` and the
  result files merged rather than overwritten;
- it refuses a tip that is not a descendant of the last tip this checkout saw (a
  force-push that dropped results) or whose tree is not a results tree (an unrelated
  branch pushed over it), and a machine name whose stored description is other hardware;
- one run per checkout at a time (a lock), and git's own lock files that a killed run
  left behind are cleared;
- a push that fails for a transient network error is retried; git's own message is kept,
  and the token never reaches git's command line or a message.
"""

from __future__ import annotations

import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from tools._lib.asv.results import RESULTS_DIR
from tools._lib.base.cli import BadInput, ExternalFailure, one_line
from tools._lib.base.git import git
from tools._lib.store.guard import Guard
from tools._lib.store.outbox import Outbox, write_atomically
from tools._lib.store.remote import REJECTED, TRANSIENT, token_environment, token_for
from tools._lib.store.tree import RESULT_FILE, check_path, merge_benchmarks, merge_results

DEFAULT_BRANCH = "asv-results"
# Files two runs may both write, merged rather than replaced (tools/_lib/store/tree.py).
MERGED = {"benchmarks.json": merge_benchmarks}
# Overridden by GIT_AUTHOR_* / GIT_COMMITTER_* in the environment when those are set.
IDENTITY = ("-c", "user.name=tensorops results", "-c", "user.email=results@tensorops.invalid")


@dataclass
class ResultsBranch:
    repo: Path
    remote: str = "origin"
    branch: str = DEFAULT_BRANCH
    # False: use the remote-tracking ref the clone already has (a job with no token).
    fetch: bool = True
    # The worktree's base commit, and the remote tip it came from ("" for a new branch).
    tip: str = field(default="", init=False)
    remote_base: str = field(default="", init=False)

    def __post_init__(self):
        self.guard = Guard(self)  # what it refuses, apart from how it lands

    @property
    def worktree(self) -> Path:
        return self.repo / RESULTS_DIR

    @property
    def tracking_ref(self) -> str:
        return f"refs/remotes/{self.remote}/{self.branch}"

    @property
    def seen_ref(self) -> str:
        """The tip the last landing saw, kept on the remote beside the branch: a checkout
        that never saw the branch (an ephemeral runner) still refuses a rewound one."""
        return f"refs/tensorops/seen/{self.branch}"

    @property
    def tracking_seen_ref(self) -> str:
        return f"refs/tensorops/remote-seen/{self.remote}/{self.branch}"

    @property
    def state_dir(self) -> Path:
        """This checkout's own records, inside its git directory (never pushed)."""
        common = Path(git("rev-parse", "--git-common-dir", cwd=self.repo))
        folder = (self.repo / common / "tensorops").resolve()
        folder.mkdir(exist_ok=True)
        return folder

    def in_worktree(self, *args: str, check: bool = True) -> str:
        return git(*args, cwd=self.worktree, check=check)

    # ------------------------------------------------------------ the remote

    def _token(self) -> str:
        url = git("remote", "get-url", self.remote, cwd=self.repo, check=False)
        return token_for(url)

    def remote_env(self) -> dict | None:
        return token_environment(self._token())

    def on_remote(self, *args: str, cwd: Path | None = None, check: bool = True) -> str:
        return git(
            *args, cwd=cwd or self.repo, check=check, env=self.remote_env(), secret=self._token()
        )

    def remote_tip(self) -> str | None:
        """The remote tip (fetched, unless ``fetch`` is off); None while the branch does
        not exist yet."""
        if self.fetch:
            heads = self.on_remote(
                "ls-remote", self.remote, f"refs/heads/{self.branch}", self.seen_ref
            )
            if f"refs/heads/{self.branch}" not in heads:
                if self.seen_ref in heads:
                    raise BadInput(
                        f"{self.remote} has no {self.branch} branch any more, though a landing "
                        f"saw it ({self.seen_ref} is there); restore it, or remove "
                        f"{self.seen_ref} on {self.remote} to start a new one"
                    )
                return None
            refspecs = [f"+refs/heads/{self.branch}:{self.tracking_ref}"]
            if self.seen_ref in heads:
                refspecs.append(f"+{self.seen_ref}:{self.tracking_seen_ref}")
            self.on_remote("fetch", "--quiet", self.remote, *refspecs)
        found = git(
            "rev-parse", "--verify", "--quiet", self.tracking_ref, cwd=self.repo, check=False
        )
        return found or None

    # ------------------------------------------------------------ the worktree

    def _empty_root(self) -> str:
        empty_tree = git("hash-object", "-t", "tree", "-w", "/dev/null", cwd=self.repo)
        return git(*IDENTITY, "commit-tree", empty_tree, "-m", "asv results", cwd=self.repo)

    def _is_worktree_of_repo(self) -> bool:
        inside = self.in_worktree("rev-parse", "--show-toplevel", check=False)
        common = self.in_worktree("rev-parse", "--git-common-dir", check=False)
        ours = git("rev-parse", "--git-common-dir", cwd=self.repo)
        return (
            bool(inside)
            and Path(inside).resolve() == self.worktree.resolve()
            and (self.worktree / common).resolve() == (self.repo / ours).resolve()
        )

    def check_out(self) -> str:
        """Make the worktree a clean copy of the remote tip (an empty root when the branch
        is new), discarding whatever an interrupted run left. Returns the commit."""
        remote = self.remote_tip()
        if remote is not None:
            self.guard.check_tip(remote)
        elif self.guard.seen_record.exists():
            raise BadInput(
                f"{self.remote} has no {self.branch} branch any more, though this checkout "
                f"saw it at {self.guard.seen_record.read_text().strip()[:12]}; restore it, or "
                f"remove {self.guard.seen_record} to start a new one"
            )
        tip = remote or self._empty_root()
        git("worktree", "prune", cwd=self.repo)
        if self.worktree.exists():
            if not self._is_worktree_of_repo():
                raise BadInput(
                    f"{self.worktree} holds results that are not a worktree of the "
                    f"{self.branch} branch; move them away and run again"
                )
            self.in_worktree("checkout", "--quiet", "--force", "--detach", tip)
            self.in_worktree("clean", "-fdxq")
        else:
            self.worktree.parent.mkdir(parents=True, exist_ok=True)
            git("worktree", "add", "--quiet", "--detach", str(self.worktree), tip, cwd=self.repo)
        if remote is not None:
            self.guard.record_seen(remote)
        self.tip, self.remote_base = tip, remote or ""
        return tip

    def commit(self, message: str) -> bool:
        """Commit everything in the worktree; False when there was nothing new."""
        self.in_worktree("add", "--all")
        if self.in_worktree("diff", "--cached", "--name-only") == "":
            return False
        self.in_worktree(*IDENTITY, "commit", "--quiet", "-m", message)
        return True

    def changed_files(self, since: str) -> dict[str, bytes]:
        """The files that differ between ``since`` and the worktree's HEAD, with their
        content at HEAD."""
        names = self.in_worktree("diff", "--name-only", since, "HEAD").splitlines()
        return {name: (self.worktree / name).read_bytes() for name in names}

    def save(self, message: str, outbox: Outbox | None) -> bool:
        """Commit the worktree and land it: pushed, or, with an outbox, copied there for
        the job that holds the token. False when there was nothing new."""
        if outbox is None:
            return self.land(message)
        before = self.in_worktree("rev-parse", "HEAD")
        if not self.commit(message):
            return False
        outbox.add(self.changed_files(before))
        return True

    # ------------------------------------------------------------ landing

    def land(self, message: str, attempts: int = 5) -> bool:
        """Commit the worktree and push it; on a lost race, replay the commit's files onto
        the new tip. False when there was nothing new."""
        if not self.commit(message):
            return False
        self.push(attempts)
        return True

    def push(self, attempts: int = 5) -> None:
        error = ""
        for attempt in range(attempts):
            pushed = subprocess.run(
                [
                    "git",
                    "push",
                    "--quiet",
                    "--atomic",
                    self.remote,
                    f"HEAD:refs/heads/{self.branch}",
                    f"HEAD:{self.seen_ref}",
                ],
                cwd=self.worktree,
                capture_output=True,
                text=True,
                errors="replace",
                env=self.remote_env(),
            )
            if pushed.returncode == 0:
                self.tip = self.in_worktree("rev-parse", "HEAD")
                self.guard.record_seen(self.tip)
                return
            error = one_line(pushed.stderr) or f"exit status {pushed.returncode}"
            if REJECTED.search(error):
                self._replay_on_remote_tip()
            elif not TRANSIENT.search(error):
                break
            time.sleep(min(2**attempt, 30))
        if self._token():
            error = error.replace(self._token(), "***")
        raise ExternalFailure(f"push to {self.remote} {self.branch} failed: {error}")

    def _replay_on_remote_tip(self) -> None:
        message = self.in_worktree("log", "-1", "--format=%B")
        files = self.changed_files(self.tip) if self.tip else {}
        tip = self.remote_tip() if self.fetch else None
        if tip is None:
            raise ExternalFailure(f"{self.remote} rejected the push; no {self.branch} to fetch")
        self.guard.check_tip(tip)
        self.in_worktree("checkout", "--quiet", "--force", "--detach", tip)
        self.in_worktree("clean", "-fdxq")
        self.tip = tip
        self.write_files(files)
        self.commit(message)

    def at(self, commit: str, name: str) -> bytes | None:
        """A file's content at ``commit`` of the branch; None where it is not there."""
        done = subprocess.run(
            ["git", "show", f"{commit}:{name}"], cwd=self.repo, capture_output=True
        )
        return done.stdout if done.returncode == 0 else None

    def write_files(self, files: dict[str, bytes], since: str = "") -> list[str]:
        """Write ``files`` into the worktree. ``benchmarks.json`` is merged with the one
        there, so machines that ran different benchmarks all keep their descriptions, and
        so is a result file, benchmark by benchmark, so shards of one machine's night that
        wrote the same file all keep their rows. With ``since`` (the commit a run started
        from), a file the branch changed after it is newer than the run's: it is kept (a
        merged one: merged, the branch's winning where both hold a benchmark), and its
        name returned."""
        kept = []
        for name, content in files.items():
            check_path(name)
            target = self.worktree / name
            newer = bool(since) and target.exists() and self.at(since, name) != target.read_bytes()
            merge = MERGED.get(name) or (merge_results if RESULT_FILE.match(name) else None)
            if newer and merge is None:
                kept.append(name)
                continue
            if merge is not None and target.exists():
                theirs = target.read_bytes()
                content = merge(content, theirs) if newer else merge(theirs, content)
            write_atomically(target, content)
        return kept
