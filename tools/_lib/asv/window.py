"""``asv publish`` over a window of the history: the result files of the commits of the
config's branch in the last ``days`` days before its tip (of some machines, of one
environment, when asked), as a view of links beside a copy of the config that points at it.

asv publish reads every result file of every machine and redraws every graph each time,
so without a window the night's publish grows with all the nights before it; asv's own
range argument still parses every file before it filters them. The view keeps the cost to
the window's files (docs/explanation/continuous.md, "A year of history"). The whole
history stays in the results branch: ``days=0`` publishes all of it.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from tools._lib.asv import publish_pages
from tools._lib.asv.results import RESULTS_DIR, is_result_file, read_result_file
from tools._lib.base.cli import BadInput, ExternalFailure
from tools._lib.base.git import git

# The site's default window: a year of nights, what a performance history is read over
# (the scale study: docs/explanation/continuous.md, "A year of history").
WINDOW_DAYS = 365
HASH_PREFIX = 8
PATH_KEYS = (
    "repo",
    "benchmark_dir",
    "env_dir",
    "html_dir",
)  # asv names a result file <commit[:8]>-<environment>.json


class EmptyWindow(BadInput):
    """The window holds no result file: nothing to publish (a step search finds none)."""


@dataclass(frozen=True)
class Window:
    """What one publish reads: the commits of the last ``days`` days (0: every commit),
    of ``machines`` (empty: all) and of the environment ``env_name`` (None: all)."""

    days: int = WINDOW_DAYS
    machines: tuple[str, ...] = ()
    env_name: str | None = None

    @property
    def span(self) -> str:
        return "every commit" if not self.days else f"the last {self.days} days"

    def describe(self, commits: int) -> str:
        return f"{self.span} ({commits} commits measured)"


def config(repo: Path) -> dict:
    from asv import util

    return util.load_json(str(repo / "asv.conf.json"), js_comments=True)


def window_commits(repo: Path, branch: str, days: int) -> set[str] | None:
    """The first-parent commits of ``branch`` committed in the ``days`` days before its tip;
    None when ``days`` is 0 (every commit)."""
    if days < 0:
        raise BadInput(f"a window of {days} days: give 0 (everything) or more")
    if not days:
        return None
    tip = int(git("log", "-1", "--format=%ct", branch, "--", cwd=repo))
    since = tip - days * 86_400
    listed = git("rev-list", "--first-parent", f"--since={since}", branch, "--", cwd=repo)
    return set(listed.split())


def chosen_files(results: Path, window: Window, commits: set[str] | None) -> list[Path]:
    """The result files the window holds, read and checked (a corrupt file stops here,
    named, where asv would skip it with a warning)."""
    prefixes = None if commits is None else {commit[:HASH_PREFIX] for commit in commits}
    machines = window.machines or tuple(
        sorted(p.name for p in results.iterdir() if (p / "machine.json").is_file())
    )
    chosen = []
    for machine in machines:
        for path in sorted((results / machine).glob("*.json")):
            if not is_result_file(path):
                continue
            if prefixes is not None and path.name[:HASH_PREFIX] not in prefixes:
                continue
            if window.env_name and not path.name.endswith(f"-{window.env_name}.json"):
                continue
            read_result_file(path)
            chosen.append(path)
    return chosen


def link_view(results: Path, view: Path, files: Iterable[Path]) -> None:
    """``view``: a results folder of links to ``files``, their machines' descriptions and
    asv's benchmarks.json."""
    view.mkdir()
    (view / "benchmarks.json").symlink_to(results / "benchmarks.json")
    for path in files:
        machine = view / path.parent.name
        if not machine.exists():
            machine.mkdir()
            (machine / "machine.json").symlink_to(path.parent / "machine.json")
        (machine / path.name).symlink_to(path)


def publish_data(repo: Path, html_dir: Path, window: Window, pages: Sequence[str] = ()) -> str:
    """asv's published graphs for ``window`` in ``html_dir`` (emptied first, as asv does)
    and of asv's pages those named in ``pages`` (tools/_lib/asv/publish_pages.py); the
    window in words. EmptyWindow when it holds no result file."""
    from asv import util

    results = (repo / RESULTS_DIR).resolve()
    if not (results / "benchmarks.json").is_file():
        raise BadInput(f"no asv benchmarks.json in {results}: nothing has been run here")
    settings = config(repo)
    branch = settings["branches"][0]
    files = chosen_files(results, window, window_commits(repo, branch, window.days))
    if not files:
        raise EmptyWindow(
            f"no results in {results} of {branch}'s commits ({window.span}): asv publishes "
            f"{branch}'s history alone"
        )
    with tempfile.TemporaryDirectory(prefix="tensorops-publish-") as folder:
        view = Path(folder) / "results"
        link_view(results, view, files)
        conf = Path(folder) / "asv.conf.json"
        # asv reads a config's paths from the config's folder: every one made absolute.
        paths = {key: str((repo / settings[key]).resolve()) for key in PATH_KEYS}
        util.write_json(str(conf), {**settings, **paths, "results_dir": str(view)}, api_version=1)
        done = publish_pages.publish(conf, html_dir, pages)
    if done.returncode != 0:
        raise ExternalFailure(f"asv publish failed: {(done.stderr or done.stdout)[-500:]}")
    return window.describe(len({path.name[:HASH_PREFIX] for path in files}))
