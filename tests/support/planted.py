"""The one planted history the gate, bisect and triage tests share: a base, a no-op commit
(a comment in logsumexp's functional variant: the gate must select that row and pass it),
fillers, and a commit that makes logsumexp's functional variant reduce every row twice (2x
the time, compute-bound, and more instructions), at a random one of five positions; a
branch off the tip whose silu raises and whose gelu indexes past its input's end. Built
once per session; each test works in its own clone of it (the same commits, so asv's build
cache serves them all)."""

from __future__ import annotations

import random
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from tests.support.project_repo import (
    ProjectRepo,
    break_gelu_in_its_warm_up,
    break_silu,
    isolated_env,
    make_project_repo,
)

ROW = "bench_reduction.LogSumExp.time_logsumexp('cpu', 'float32', (32, 512, 768), 'functional')"
COUNT_ROW = (
    "bench_instructions.Logsumexp.track_instructions('cpu', "
    "'functional float32 contiguous (32, 32, 24)')"
)
ORIGINAL = '    """torch.logsumexp."""\n    return torch.logsumexp(x, dim=-1)\n'
# The functional variant reduces every row twice: 2x the work (measured 1.96x here). A CI
# run of an earlier, smaller plant (1.43x) read 1.16x on a busy runner.
PLANTED = ORIGINAL.replace("    return", "    torch.logsumexp(x, dim=-1)\n    return")


SIGNATURE = "def logsumexp(x: torch.Tensor) -> torch.Tensor:\n"
SAID_AGAIN = SIGNATURE + "    # The log of the sum of the exponentials, along the last dimension.\n"


def reduction(root: Path) -> tuple[Path, str]:
    source = root / "src" / "tensorops" / "reduction.py"
    return source, source.read_text()


def plant(root: Path) -> None:
    source, text = reduction(root)
    assert ORIGINAL in text, "logsumexp's functional variant changed; update the plant"
    source.write_text(text.replace(ORIGINAL, PLANTED))


def undo(root: Path) -> None:
    source, text = reduction(root)
    source.write_text(text.replace(PLANTED, ORIGINAL))


def say_again(root: Path) -> None:
    """A comment in the variant's body: a change the gate must measure, and pass."""
    source, text = reduction(root)
    assert SIGNATURE in text, "logsumexp's functional variant changed; update the no-op"
    source.write_text(text.replace(SIGNATURE, SAID_AGAIN))


def selection(*rows: str) -> str:
    return "|".join(f"^{re.escape(row)}$" for row in rows)


@dataclass(frozen=True)
class PlantedHistory:
    """The history: ``commits`` oldest first (``commits[0]`` the base, ``noop`` right
    after it, ``planted`` somewhere in the five after that); ``broken`` is off the tip."""

    remote: Path
    commits: tuple[str, ...]
    noop: str
    planted: str
    broken: str

    @property
    def before_plant(self) -> str:
        return self.commits[self.commits.index(self.planted) - 1]


def git(*args: str, cwd: Path) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def build(root: Path, shared_env: Path) -> PlantedHistory:
    remote = root / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    repo: ProjectRepo = make_project_repo(root / "seed", isolated_env(root / "home"), shared_env)
    noop = repo.commit("a comment in logsumexp, which changes no op", say_again)
    position = random.randrange(1, 6)
    print(f"the slowdown is planted in new commit {position} of 5")
    made = [
        repo.commit(
            f"commit {n}" + (": logsumexp does more" if n == position else ""),
            plant if n == position else None,
        )
        for n in range(1, 6)
    ]
    commits = (git("rev-parse", "HEAD~6", cwd=repo.path), noop, *made)
    repo.git("checkout", "-q", "-b", "broken")
    broken = repo.commit("silu raises", break_silu)
    broken = repo.commit("gelu indexes past its end", break_gelu_in_its_warm_up)
    repo.git("checkout", "-q", "main")
    repo.git("remote", "add", "origin", str(remote))
    repo.git("push", "-q", "origin", "main", "broken")
    return PlantedHistory(remote, commits, noop, made[position - 1], broken)
