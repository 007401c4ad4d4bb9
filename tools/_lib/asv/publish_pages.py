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


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="publish_pages", description=__doc__.split("\n\n")[0])
    parser.add_argument("--page", action="append", default=[], help="an asv page to write")
    parser.add_argument("asv_arguments", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    arguments = args.asv_arguments[1:] if args.asv_arguments[:1] == ["--"] else args.asv_arguments
    keep_only(args.page)
    from asv.main import main as asv_main

    sys.argv = ["asv", *arguments]
    asv_main()


if __name__ == "__main__":
    main()
