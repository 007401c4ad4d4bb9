"""Publish every machine's results from the results branch as a self-contained site.

    python -m tools.publish --site DIR [--days 365] [--no-fetch] [--remote origin]
                            [--branch asv-results]

The site holds the commits of main's last ``--days`` days (a year by default; 0: every
commit): asv publish redraws every graph it is given each time, so a window keeps a night's
publish from growing with every night before it. The whole history stays on the results
branch (docs/explanation/continuous.md, "A year of history").

``asv publish`` writes the graphs and the regressions (and a page whose scripts come from
CDNs); asv-tachyon replaces the page with a bundled UI over the same data, and asv's own
page and scripts are removed: nothing on the site loads from another host, and none of
asv's legacy JavaScript (which inserts machine and benchmark fields as raw HTML) is
published.

``asv publish`` empties its target first, so ``--site`` must be an empty (or new)
directory or one this tool published before (it holds the marker ``.tensorops-site``),
and never the repository, ``.git`` or asv's results or environments.
"""

from __future__ import annotations

from pathlib import Path

from tools._lib.asv.window import WINDOW_DAYS
from tools._lib.base.cli import ArgumentParser, run_main
from tools._lib.base.git import repo_root
from tools._lib.store.branch import DEFAULT_BRANCH, ResultsBranch
from tools._lib.store.site import check_site, publish


def main() -> int:
    parser = ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, required=True, help="output folder")
    parser.add_argument(
        "--days",
        type=int,
        default=WINDOW_DAYS,
        help=f"publish the commits of main's last DAYS days (default {WINDOW_DAYS}; 0: all)",
    )
    parser.add_argument("--remote", default="origin")
    parser.add_argument("--branch", default=DEFAULT_BRANCH)
    parser.add_argument(
        "--no-fetch",
        action="store_true",
        help="publish the results already in .asv/results (local runs)",
    )
    args = parser.parse_args()
    if args.days < 0:
        parser.error(f"--days {args.days}: give 0 (every commit) or more")
    repo = repo_root()
    check_site(repo, args.site)  # before anything else is touched
    if args.no_fetch:
        publish(repo, args.site, args.days)
        return 0
    branch = ResultsBranch(repo, args.remote, args.branch)
    with branch.guard.locked():
        branch.check_out()
        publish(repo, args.site, args.days)
    return 0


if __name__ == "__main__":
    run_main("publish", main)
