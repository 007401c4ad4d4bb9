"""Publish every machine's results from the results branch as a self-contained site.

    python -m tools.publish --site _site [--no-fetch] [--remote origin] [--branch asv-results]

``asv publish`` writes the data and asv's own page, whose scripts come from CDNs and
fail on an air-gapped cluster. asv-tachyon replaces ``index.html`` with a bundled UI over
the same data; asv's page stays as ``index.legacy.html``, pointed at vendored copies of its
libraries (tools/site_assets/legacy). Nothing on the site loads from another host.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

from tools.common import REPO_ROOT, RESULTS_DIR, ToolError, asv, git, machine_result_files, run_main
from tools.results_branch import DEFAULT_BRANCH, ResultsBranch

LEGACY_ASSETS = REPO_ROOT / "tools" / "site_assets" / "legacy"
LEGACY_DIR = "legacy-assets"
# asv 0.6.6's index.html: each CDN tag, by the file name its URL ends in.
CDN_TAG = re.compile(r'(src|href)="https://[^"]+/([^/"]+)"([^>]*)>')
# Where npm names the file differently: flot ships unminified, stupidtable is 1.1.3
# (SOURCES.md); the rest keep their CDN file names.
CDN_FILE_TO_VENDORED = {
    "jquery-3.3.1.min.js": "jquery.min.js",
    "jquery.flot.min.js": "jquery.flot.js",
    "jquery.flot.time.min.js": "jquery.flot.time.js",
    "jquery.flot.selection.min.js": "jquery.flot.selection.js",
    "jquery.flot.categories.min.js": "jquery.flot.categories.js",
}


def localize_legacy_page(site: Path) -> None:
    """Point index.legacy.html's CDN tags at the vendored copies."""
    page = site / "index.legacy.html"
    missing = []

    def local(match: re.Match) -> str:
        attribute, name, rest = match.groups()
        vendored = CDN_FILE_TO_VENDORED.get(name, name)
        if not (LEGACY_ASSETS / vendored).is_file():
            missing.append(name)
            return match.group(0)
        # Integrity hashes pin the CDN's bytes; same-origin copies need none.
        rest = re.sub(r'\s(integrity|crossorigin|referrerpolicy)="[^"]*"', "", rest)
        return f'{attribute}="{LEGACY_DIR}/{vendored}"{rest}>'

    html = CDN_TAG.sub(local, page.read_text())
    if missing:
        raise ToolError(f"asv's legacy page needs assets not vendored: {', '.join(missing)}")
    page.write_text(html)
    shutil.copytree(LEGACY_ASSETS, site / LEGACY_DIR, dirs_exist_ok=True)


def complete_graph_index(site: Path) -> list[str]:
    """Make every benchmark in index.json have a graph for every machine, so neither UI
    fetches a graph that is not there. A benchmark no machine has results for (a new one,
    or one outside a ``--bench`` subset) is left out; one that some machines lack gets an
    empty graph there. Returns the benchmarks left out."""
    index_path = site / "index.json"
    index = json.loads(index_path.read_text())
    graphs = [path for path in (site / "graphs").rglob("*.json") if "summary" not in path.parts]
    dropped = sorted(set(index["benchmarks"]) - {path.stem for path in graphs})
    for name in dropped:
        del index["benchmarks"][name]
    index_path.write_text(json.dumps(index))
    for folder in {path.parent for path in graphs}:
        for name in index["benchmarks"]:
            if not (folder / f"{name}.json").exists():
                (folder / f"{name}.json").write_text("[]")
    return dropped


def write_ui_sidecars(repo: Path, site: Path) -> None:
    """The optional files asv-tachyon asks for: commit subjects shown beside each point,
    and empty profile and mute lists (absent, each fetch is a 404 in the console)."""
    index = json.loads((site / "index.json").read_text())
    hashes = index.get("revision_to_hash", {})
    log = git("log", "--no-walk=unsorted", "--format=%H %s", *hashes.values(), cwd=repo)
    subjects = dict(line.split(" ", 1) for line in log.splitlines() if " " in line)
    commits = {
        "by_hash": subjects,
        "by_revision": {rev: subjects[sha] for rev, sha in hashes.items() if sha in subjects},
    }
    (site / "commits.json").write_text(json.dumps(commits, indent=1))
    (site / "profiles.json").write_text(json.dumps({"paths": {}}))
    (site / "regressions-ignore.json").write_text("[]")


def publish(repo: Path, site: Path) -> None:
    """Publish the results now in the repo's results_dir to ``site``."""
    results = repo / RESULTS_DIR
    machines = sorted(p.name for p in results.iterdir() if (p / "machine.json").is_file())
    if not machines:
        raise ToolError(f"no machine's results in {results}")
    for machine in machines:
        machine_result_files(results, machine)  # a corrupt file stops here, named
    done = asv("publish", "--no-pull", "--html-dir", str(site.resolve()), cwd=repo, capture=True)
    if done.returncode != 0:
        raise ToolError(f"asv publish failed: {(done.stderr or done.stdout).strip()[-500:]}")
    tachyon = Path(sys.executable).with_name("asv-tachyon")
    installed = subprocess.run(
        [str(tachyon) if tachyon.exists() else "asv-tachyon", "install", str(site)],
        capture_output=True,
        text=True,
    )
    if installed.returncode != 0:
        raise ToolError(f"asv-tachyon install failed: {installed.stderr.strip()[-500:]}")
    dropped = complete_graph_index(site)
    localize_legacy_page(site)
    write_ui_sidecars(repo, site)
    (site / ".nojekyll").touch()  # GitHub Pages: serve the files as they are
    print(
        f"published {', '.join(machines)} to {site}"
        + (f"; {len(dropped)} benchmarks with no results left out" if dropped else "")
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, required=True, help="output folder")
    parser.add_argument("--remote", default="origin")
    parser.add_argument("--branch", default=DEFAULT_BRANCH)
    parser.add_argument(
        "--no-fetch",
        action="store_true",
        help="publish the results already in .asv/results (local runs)",
    )
    args = parser.parse_args()
    repo = Path(git("rev-parse", "--show-toplevel", cwd=Path.cwd()))
    if not args.no_fetch:
        ResultsBranch(repo, args.remote, args.branch).check_out()
    publish(repo, args.site)
    return 0


if __name__ == "__main__":
    run_main("publish", main)
