#!/usr/bin/env python
"""What a long history costs: a synthetic results history of N nights (every CPU row of
every benchmark valued, one result file a night per machine and torch release), and the
time of what reads all of it: ``tools.publish``, the site's first view in Chromium, the
triage's step search, and a fresh fetch of the results branch.

    python -m tools.studies.history_scale [--nights 30 365 1000] [--machines 2] [--out FILE]

Each history is tools/studies/synthetic_history.py's. Run it on an otherwise idle machine;
docs/studies (the history-scale study) holds the figures.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

from tools._lib.asv.machines import last_level_cache, this_host
from tools._lib.asv.results import RESULTS_DIR
from tools._lib.base.cli import ArgumentParser, run_main
from tools._lib.base.git import git, repo_root
from tools.studies.synthetic_history import History


def timed(action) -> tuple[float, object]:
    start = time.perf_counter()
    value = action()
    return time.perf_counter() - start, value


def folder_bytes(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


def measure(source: Path, root: Path, nights: int, machines: int, browser: bool) -> dict:
    from tools._lib.store.site import publish
    from tools._lib.triage.steps import history_steps

    built, history = timed(lambda: History(root, source, nights, machines))
    history.push_night_by_night()
    results = history.project / RESULTS_DIR
    site = root / "site"
    published, _ = timed(lambda: publish(history.project, site))
    stepped, steps = timed(
        lambda: history_steps(history.project, history.machines[0], lambda row: 0.05)
    )
    fetched, _ = timed(
        lambda: git(
            "clone",
            "-q",
            "--single-branch",
            "--branch",
            "asv-results",
            "--no-checkout",
            f"file://{history.remote}",
            str(root / "fetched"),
            cwd=root,
        )
    )
    row = {
        "nights": nights,
        "machines": machines,
        "releases": len(history.releases),
        "result_files": sum(1 for _ in results.rglob("*.json")) - machines - 1,
        "results_bytes": folder_bytes(results),
        "build_seconds": round(built, 1),
        "publish_seconds": round(published, 1),
        "site_bytes": folder_bytes(site),
        "triage_steps_seconds": round(stepped, 1),
        "steps_found": len(steps),
        "fetch_seconds": round(fetched, 1),
        "results_branch_pack_bytes": folder_bytes(root / "fetched" / ".git"),
    }
    if browser:
        from tools._lib.store.site_view import first_view

        row["first_view"] = [first_view(site, compress) for compress in (False, True)]
    return row


def main() -> int:
    parser = ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nights", type=int, nargs="+", default=[30, 365, 1000])
    parser.add_argument("--machines", type=int, default=2)
    parser.add_argument("--no-browser", action="store_true", help="skip the first view")
    parser.add_argument("--out", type=Path, help="write the figures here as JSON")
    args = parser.parse_args()
    if min(args.nights) < 2 or args.machines < 1:
        parser.error("--nights needs at least 2 and --machines at least 1")
    source = repo_root()
    figures = {"host": this_host(), "l3": last_level_cache(), "histories": []}
    for nights in args.nights:
        with tempfile.TemporaryDirectory(prefix="history-scale-") as folder:
            row = measure(source, Path(folder), nights, args.machines, not args.no_browser)
        print(json.dumps(row), flush=True)
        figures["histories"].append(row)
    if args.out:
        args.out.write_text(json.dumps(figures, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    run_main("history_scale", main)
