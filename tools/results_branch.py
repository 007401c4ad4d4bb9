"""The results branch: an orphan branch holding asv's result files, checked out as a
git worktree at asv's results_dir (``.asv/results``), so asv reads and writes it in place.

What it guards:

- it lands results commit by commit (:meth:`ResultsBranch.land`), so a run cut half-way
  keeps every commit it finished; a push that loses a race to another machine is
  replayed onto the new tip, ``benchmarks.json`` merged rather than overwritten;
- it refuses a tip that is not a descendant of the last tip this checkout saw (a
  force-push that dropped results) or whose tree is not a results tree (an unrelated
  branch pushed over it), and a machine name whose stored description is other hardware;
- one run per checkout at a time (a lock), and git's own lock files that a killed run
  left behind are cleared;
- a push that fails for a transient network error is retried; git's own message is kept.

It imports only the standard library (and tools.common): the job that pushes results in
Actions runs it with a bare interpreter and no project code installed.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import re
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from tools.common import RESULTS_DIR, BadInput, ExternalFailure, git, one_line

DEFAULT_BRANCH = "asv-results"
# Overridden by GIT_AUTHOR_* / GIT_COMMITTER_* in the environment when those are set.
IDENTITY = ("-c", "user.name=tensorops results", "-c", "user.email=results@tensorops.invalid")
# What a results tree may hold: asv's files per machine, the manifest, the triage state.
RESULTS_TREE = re.compile(
    r"^(benchmarks\.json"
    r"|[\w.-]+/(machine\.json|manifest\.txt|[0-9a-f]{8}-[\w.+-]+\.json)"
    r"|triage/[\w.-]+\.json)$"
)
# The fields of machine.json that say which hardware a machine name stands for.
HARDWARE_KEYS = ("arch", "cpu", "num_cpu", "os", "ram")
# A push that failed for one of these may succeed when tried again.
TRANSIENT = re.compile(
    r"could not resolve host|failed to connect|connection (reset|refused|timed out)|"
    r"operation timed out|remote end hung up unexpectedly|early eof|rpc failed|"
    r"empty reply from server|ssl_error_syscall|returned error: (5\d\d|429)",
    re.IGNORECASE,
)
REJECTED = re.compile(r"\[rejected\]|non-fast-forward|fetch first|failed to update ref", re.I)


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

    @property
    def worktree(self) -> Path:
        return self.repo / RESULTS_DIR

    @property
    def tracking_ref(self) -> str:
        return f"refs/remotes/{self.remote}/{self.branch}"

    @property
    def state_dir(self) -> Path:
        """This checkout's own records, inside its git directory (never pushed)."""
        common = Path(git("rev-parse", "--git-common-dir", cwd=self.repo))
        folder = (self.repo / common / "tensorops").resolve()
        folder.mkdir(exist_ok=True)
        return folder

    def _git(self, *args: str, check: bool = True) -> str:
        return git(*args, cwd=self.worktree, check=check)

    # ------------------------------------------------------------ the remote

    def _auth(self) -> tuple[str, ...]:
        """In Actions, the token for this one command only (never in .git/config)."""
        token = os.environ.get("GITHUB_TOKEN", "")
        url = git("remote", "get-url", self.remote, cwd=self.repo, check=False)
        if not token or not url.startswith("https://"):
            return ()
        basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
        return ("-c", f"http.extraheader=AUTHORIZATION: basic {basic}")

    def remote_tip(self) -> str | None:
        """The remote tip (fetched, unless ``fetch`` is off); None while the branch does
        not exist yet."""
        if self.fetch:
            heads = git(
                *self._auth(), "ls-remote", "--heads", self.remote, self.branch, cwd=self.repo
            )
            if not heads:
                return None
            refspec = f"+refs/heads/{self.branch}:{self.tracking_ref}"
            git(*self._auth(), "fetch", "--quiet", self.remote, refspec, cwd=self.repo)
        found = git(
            "rev-parse", "--verify", "--quiet", self.tracking_ref, cwd=self.repo, check=False
        )
        return found or None

    # ------------------------------------------------------------ integrity

    @property
    def _seen_record(self) -> Path:
        return self.state_dir / f"seen-{self.remote}-{self.branch}"

    def _record_seen(self, commit: str) -> None:
        self._seen_record.write_text(commit + "\n")

    def check_tip(self, tip: str, since: str | None = None) -> None:
        """Refuse a tip that rewrote history this checkout saw (or ``since``), or that is
        not a results tree."""
        seen = since or (
            self._seen_record.read_text().strip() if self._seen_record.exists() else ""
        )
        if seen and seen != tip:
            ancestor = subprocess.run(
                ["git", "merge-base", "--is-ancestor", seen, tip],
                cwd=self.repo,
                capture_output=True,
            )
            if ancestor.returncode != 0:
                raise BadInput(
                    f"{self.remote} {self.branch} is at {tip[:12]}, which does not contain "
                    f"{seen[:12]}, the tip this checkout last saw: the branch was rewound or "
                    "replaced; restore it, or remove "
                    f"{self._seen_record} to accept the new history"
                )
        names = git("ls-tree", "-r", "--name-only", tip, cwd=self.repo).splitlines()
        strangers = [name for name in names if not RESULTS_TREE.match(name)]
        machines = {name.split("/")[0] for name in names if "/" in name} - {"triage"}
        unnamed = [m for m in sorted(machines) if f"{m}/machine.json" not in names]
        if strangers or unnamed:
            what = strangers[:3] or [f"{unnamed[0]}/ without machine.json"]
            raise BadInput(
                f"{self.remote} {self.branch} at {tip[:12]} is not a results tree (it holds "
                f"{', '.join(what)}); refusing to add results to it"
            )

    def check_machine(self, machine: str, described: dict) -> None:
        """Refuse to file results under a machine name that stands for other hardware."""
        stored_path = self.worktree / machine / "machine.json"
        if not stored_path.exists():
            return
        stored = json.loads(stored_path.read_text())
        differ = [
            f"{key} {stored.get(key)!r} there, {described.get(key)!r} here"
            for key in HARDWARE_KEYS
            if str(stored.get(key)) != str(described.get(key))
        ]
        if differ:
            raise BadInput(
                f"machine name {machine!r} already stands for other hardware on "
                f"{self.branch} ({'; '.join(differ)}); give this machine its own --machine"
            )

    # ------------------------------------------------------------ the worktree

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """One run per checkout; git's lock files a killed run left are cleared."""
        with open(self.state_dir / "lock", "w") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise BadInput(
                    f"another run holds {self.state_dir / 'lock'}; wait for it to finish"
                ) from None
            self._clear_stale_git_locks()
            yield

    def _clear_stale_git_locks(self) -> None:
        common = self.state_dir.parent
        candidates = [common / f"{self.tracking_ref}.lock"]
        if self.worktree.exists():
            gitdir = git("rev-parse", "--git-dir", cwd=self.worktree, check=False)
            if gitdir:
                folder = (self.worktree / gitdir).resolve()
                candidates += [folder / "index.lock", folder / "HEAD.lock"]
        for stale in candidates:
            if stale.exists():
                stale.unlink()
                print(f"results: removed {stale}, left by a run that was killed")

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
        remote = self.remote_tip()
        if remote is not None:
            self.check_tip(remote)
        elif self._seen_record.exists():
            raise BadInput(
                f"{self.remote} has no {self.branch} branch any more, though this checkout "
                f"saw it at {self._seen_record.read_text().strip()[:12]}; restore it, or "
                f"remove {self._seen_record} to start a new one"
            )
        tip = remote or self._empty_root()
        git("worktree", "prune", cwd=self.repo)
        if self.worktree.exists():
            if not self._is_worktree_of_repo():
                raise BadInput(
                    f"{self.worktree} holds results that are not a worktree of the "
                    f"{self.branch} branch; move them away and run again"
                )
            self._git("checkout", "--quiet", "--force", "--detach", tip)
            self._git("clean", "-fdxq")
        else:
            self.worktree.parent.mkdir(parents=True, exist_ok=True)
            git("worktree", "add", "--quiet", "--detach", str(self.worktree), tip, cwd=self.repo)
        if remote is not None:
            self._record_seen(remote)
        self.tip, self.remote_base = tip, remote or ""
        return tip

    def commit(self, message: str) -> bool:
        """Commit everything in the worktree; False when there was nothing new."""
        self._git("add", "--all")
        if self._git("diff", "--cached", "--name-only") == "":
            return False
        self._git(*IDENTITY, "commit", "--quiet", "-m", message)
        return True

    def changed_files(self, since: str) -> dict[str, bytes]:
        """The files that differ between ``since`` and the worktree's HEAD, with their
        content at HEAD."""
        names = self._git("diff", "--name-only", since, "HEAD").splitlines()
        return {name: (self.worktree / name).read_bytes() for name in names}

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
                    *self._auth(),
                    "push",
                    "--quiet",
                    self.remote,
                    f"HEAD:refs/heads/{self.branch}",
                ],
                cwd=self.worktree,
                capture_output=True,
                text=True,
            )
            if pushed.returncode == 0:
                self.tip = self._git("rev-parse", "HEAD")
                self._record_seen(self.tip)
                return
            error = one_line(pushed.stderr) or f"exit status {pushed.returncode}"
            if REJECTED.search(error):
                self._replay_on_remote_tip()
            elif not TRANSIENT.search(error):
                break
            time.sleep(min(2**attempt, 30))
        raise ExternalFailure(f"push to {self.remote} {self.branch} failed: {error}")

    def _replay_on_remote_tip(self) -> None:
        message = self._git("log", "-1", "--format=%B")
        files = self.changed_files(self.tip) if self.tip else {}
        tip = self.remote_tip() if self.fetch else None
        if tip is None:
            raise ExternalFailure(f"{self.remote} rejected the push; no {self.branch} to fetch")
        self.check_tip(tip)
        self._git("checkout", "--quiet", "--force", "--detach", tip)
        self._git("clean", "-fdxq")
        self.tip = tip
        self.write_files(files)
        self.commit(message)

    def write_files(self, files: dict[str, bytes]) -> None:
        """Write ``files`` into the worktree; ``benchmarks.json`` is merged with the one
        there, so machines that ran different benchmarks all keep their descriptions."""
        for name, content in files.items():
            if not RESULTS_TREE.match(name):
                raise BadInput(f"{name!r} does not belong on a results branch")
            target = self.worktree / name
            target.parent.mkdir(parents=True, exist_ok=True)
            if name == "benchmarks.json" and target.exists():
                content = merge_benchmarks(target.read_bytes(), content)
            target.write_bytes(content)


def merge_benchmarks(theirs: bytes, ours: bytes) -> bytes:
    """Two asv benchmarks.json files as one: every benchmark of either, ours winning."""
    merged = {**json.loads(theirs), **json.loads(ours)}
    return (json.dumps(merged, indent=4, sort_keys=True) + "\n").encode()


@dataclass(frozen=True)
class Outbox:
    """Results waiting to be pushed by a job that holds the write token: the files to
    land, the machine they are of, and the remote tip the run started from (the push
    refuses a branch that no longer contains it)."""

    path: Path

    def start(self, machine: str, base: str) -> None:
        (self.path / "files").mkdir(parents=True, exist_ok=True)
        (self.path / "machine").write_text(machine + "\n")
        (self.path / "base").write_text(base + "\n")

    def add(self, files: dict[str, bytes]) -> None:
        for name, content in files.items():
            if not RESULTS_TREE.match(name):
                raise BadInput(f"{name!r} does not belong on a results branch")
            target = self.path / "files" / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content)

    @property
    def machine(self) -> str:
        return self._field("machine")

    @property
    def base(self) -> str:
        return self._field("base")

    def files(self) -> dict[str, bytes]:
        folder = self.path / "files"
        return {
            path.relative_to(folder).as_posix(): path.read_bytes()
            for path in sorted(folder.rglob("*"))
            if path.is_file()
        }

    def _field(self, name: str) -> str:
        try:
            value = (self.path / name).read_text().strip()
        except OSError:
            raise BadInput(f"{self.path} is not an outbox of tools.nightly (no {name})") from None
        if name == "base" and value and not re.fullmatch(r"[0-9a-f]{40}", value):
            raise BadInput(f"{self.path / name} holds no commit hash: {value[:40]!r}")
        if name == "machine" and not re.fullmatch(r"[\w.-]+", value):
            raise BadInput(f"{self.path / name} holds no machine name: {value[:40]!r}")
        return value
