"""``asv publish`` writing only the pages someone here reads, in a process of its own.

    python -m tools._lib.asv.publish_pages [--page NAME ...] -- ASV-ARGUMENTS

asv publish writes its graphs and then every page it knows: each an ``OutputPublisher``
subclass it finds by subclassing (its summary grid, summary list and regressions), with
no option to leave one out. asv-tachyon's UI reads the graphs and the regressions, never
the summaries (a summary graph per benchmark, about an eighth of a year's publish); the
triage reads the graphs alone and runs its own step detection. So the pages not named by
``--page`` are emptied before asv's own command line runs, and when no page that reads
the steps is left, so is asv's step detection, about half of a year's publish
(docs/explanation/continuous.md, "A year of history").

The regressions page asks git, once per step it found, whether the step spans a single
commit; each of those ``git rev-list`` processes is a full fork of this process, which
holds every graph (asv starts them with a ``preexec_fn``, which rules out ``vfork``). One
``rev-list`` of every commit's parents answers the step from a commit to its child, the
nightly's usual one, exactly; any other range still goes to git (:func:`ranges_from_parents`).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

# The folder the tools are imported from, in the process asv publishes in.
TOOLS_ROOT = Path(__file__).resolve().parents[3]  # tools/_lib/asv/publish_pages.py
# The pages that read the steps asv's step detection finds over every graph.
STEP_READERS = frozenset({"Regressions", "SummaryList"})


def page_classes() -> dict[str, type]:
    """asv's pages by class name (importing asv loads its plugins)."""
    from asv import util
    from asv.publishing import OutputPublisher

    return {page.__name__: page for page in util.iter_subclasses(OutputPublisher)}


def write_nothing(cls, *args, **kwargs) -> None:
    """A page's ``publish`` that writes nothing."""


def detect_no_steps(self, pool=None, dots=None) -> None:
    """``GraphSet.detect_steps`` when no page reads a step."""


def keep_only(kept: Sequence[str]) -> None:
    """Leave every asv page but ``kept`` out of this process's publish, and the step
    detection too when no kept page reads it; a name asv does not know is bad input."""
    from asv.graph import GraphSet

    pages = page_classes()
    unknown = sorted(set(kept) - set(pages))
    if unknown:
        raise SystemExit(
            f"publish_pages: no asv page {', '.join(unknown)} (asv has {sorted(pages)})"
        )
    for name, page in pages.items():
        if name not in kept:
            page.publish = classmethod(write_nothing)
    if not STEP_READERS & set(kept):
        GraphSet.detect_steps = detect_no_steps


def publish(config: Path, html_dir: Path, pages: Sequence[str]) -> subprocess.CompletedProcess:
    """``asv publish`` of ``config`` into ``html_dir`` with asv's ``pages`` alone, in a
    process of its own (its output captured; its status the caller's to read)."""
    chosen = [argument for page in pages for argument in ("--page", page)]
    asv_arguments = [
        "--config",
        str(config),
        "publish",
        "--no-pull",
        "--html-dir",
        str(html_dir.resolve()),
    ]
    search = os.pathsep.join(filter(None, [str(TOOLS_ROOT), os.environ.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, "-m", __name__, *chosen, "--", *asv_arguments],
        cwd=config.parent,
        env={**os.environ, "PYTHONPATH": search},
        capture_output=True,
        text=True,
    )


def ranges_from_parents() -> None:
    """Answer asv's ``rev-list --first-parent A..B`` from one listing of every commit's
    first parent, where B's first parent is A: exactly [B] (A is uninteresting and B is not
    reachable from its own parent). Other ranges, and hashes the listing lacks, go to git as
    asv sends them."""
    from asv.plugins.git import Git

    asked_git = Git.get_hashes_from_range
    parents: dict[int, dict[str, str]] = {}

    def first_parents(repo: Git) -> dict[str, str]:
        if id(repo) not in parents:
            listing = repo._run_git(["rev-list", "--parents", "--all"])
            parents[id(repo)] = {
                line.split()[0]: line.split()[1] for line in listing.splitlines() if " " in line
            }
        return parents[id(repo)]

    def get_hashes_from_range(self: Git, range_spec: str) -> list[str]:
        older, dots, newer = range_spec.partition("..")
        if dots and older and newer and first_parents(self).get(newer) == older:
            return [newer]
        return asked_git(self, range_spec)

    Git.get_hashes_from_range = get_hashes_from_range


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="publish_pages", description=__doc__.split("\n\n")[0])
    parser.add_argument("--page", action="append", default=[], help="an asv page to write")
    parser.add_argument("asv_arguments", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    arguments = args.asv_arguments[1:] if args.asv_arguments[:1] == ["--"] else args.asv_arguments
    keep_only(args.page)
    ranges_from_parents()
    from asv.main import main as asv_main

    sys.argv = ["asv", *arguments]
    asv_main()


if __name__ == "__main__":
    main()
