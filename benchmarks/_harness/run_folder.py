"""The folder one asv run's benchmark processes share (``TENSOROPS_RUN_DIR``): the tools
make it private for each run and remove it after (tools/_lib/asv/run.py), so nothing in it
outlives the run or comes from another user. What is kept there is by commit, as asv runs
one commit's processes after another's."""

from __future__ import annotations

import os
from pathlib import Path

from .._names import RUN_DIR_ENV


def commit_folder() -> Path | None:
    """This commit's part of the run's folder; None outside a run the tools started."""
    run_folder, commit = os.environ.get(RUN_DIR_ENV), os.environ.get("ASV_COMMIT")
    return Path(run_folder) / commit if run_folder and commit else None


def write_whole(path: Path, text: str) -> None:
    """``text`` at ``path``, whole or absent for a process reading it: written beside it,
    then renamed."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    written = path.with_suffix(f".{os.getpid()}.tmp")
    written.write_text(text)
    os.replace(written, path)
