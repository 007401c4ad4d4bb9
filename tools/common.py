"""What the tooling scripts share: running git and asv, reading result files, and
turning a failure into one line on stderr.

The scripts run from a checkout of the project (``python -m tools.NAME``), locally or in
GitHub Actions, with the dev venv's interpreter: asv is the one installed beside it.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
RESULTS_DIR = Path(".asv") / "results"  # asv.conf.json's results_dir, from the repo root


class ToolError(Exception):
    """A failure the user can act on; printed as one line, exit status 2."""


def run_main(prog: str, main: Callable[[], int]) -> None:
    try:
        status = main()
    except ToolError as error:
        print(f"{prog}: {error}", file=sys.stderr)
        status = 2
    sys.exit(status)


def asv_executable() -> str:
    # The dev venv puts asv beside its python; Actions installs it the same way.
    beside = Path(sys.executable).with_name("asv")
    return str(beside) if beside.exists() else "asv"


def asv(*args: str, cwd: Path, env: dict | None = None, capture: bool = False):
    """Run asv; its exit status is the caller's to read (continuous and find use it)."""
    return subprocess.run(
        [asv_executable(), *args],
        cwd=cwd,
        env=env,
        text=True,
        capture_output=capture,
    )


def git(*args: str, cwd: Path, check: bool = True) -> str:
    done = subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, stdin=subprocess.DEVNULL
    )
    if check and done.returncode != 0:
        raise ToolError(f"git {' '.join(args)} failed: {done.stderr.strip() or done.stdout}")
    return done.stdout.strip()


def register_machine(name: str) -> None:
    """Describe this machine to asv under a stable name, so results from every run line up.

    Written with asv's own API because ``asv machine --machine NAME --yes`` saves only the
    fields that differ from its defaults, leaving the CPU, core count and architecture
    out of the results. Two fields are made stable: asv keys each graph by them, and the
    kernel version in its default ``os`` and the exact byte count in ``ram`` change
    between CI runner images of the same kind, which would split one machine's history
    into many graphs. (The nightly's manifest records the kernel.)
    """
    from asv.machine import Machine, MachineCollection

    described = {**Machine.get_defaults(), "machine": name}
    described["os"] = platform.system()
    described["ram"] = f"{round(int(described['ram']) / 2**30)}GB"
    MachineCollection.save(name, described)


def read_result_file(path: Path) -> dict:
    """A result file's JSON; asv itself skips a corrupt one with a warning, so
    a caller that must not lose results asks here first."""
    try:
        data = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ToolError(f"corrupt result file {path}: {error}") from None
    if not isinstance(data, dict) or not isinstance(data.get("commit_hash"), str):
        raise ToolError(f"corrupt result file {path}: no commit_hash")
    return data


def machine_result_files(results_dir: Path, machine: str) -> dict[Path, dict]:
    """Every result file of one machine, read and checked."""
    folder = results_dir / machine
    if not folder.is_dir():
        return {}
    return {
        path: read_result_file(path)
        for path in sorted(folder.glob("*.json"))
        if path.name != "machine.json"
    }


def benchmarked_commits(results_dir: Path, machine: str) -> set[str]:
    return {data["commit_hash"] for data in machine_result_files(results_dir, machine).values()}


def append_step_summary(markdown: str) -> bool:
    """Append to the Actions step summary; False when not running in Actions."""
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        with open(summary, "a") as out:
            out.write(markdown + "\n")
    return bool(summary)


def write_summary(markdown: str) -> None:
    """To the Actions step summary when there is one, else to stdout."""
    if not append_step_summary(markdown):
        print(markdown)


def first_parent_commits(revision_range: Sequence[str] | str, cwd: Path) -> list[str]:
    """Commits newest first, along first parents (the history asv graphs)."""
    spec = [revision_range] if isinstance(revision_range, str) else list(revision_range)
    return git("rev-list", "--first-parent", *spec, cwd=cwd).split()
