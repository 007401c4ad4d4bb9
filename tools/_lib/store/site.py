"""The published site: every machine's results as a self-contained site.

``asv publish`` writes the graphs and the regressions (and a page whose scripts come from
CDNs); asv-tachyon replaces the page with a bundled UI over the same data, and asv's own
page and scripts are removed: nothing on the site loads from another host, and none of
asv's legacy JavaScript (which inserts machine and benchmark fields as raw HTML) is
published. ``asv publish`` empties its target first, so the target must be new, empty or
one published here before (it holds the marker ``.tensorops-site``), and never the
repository or its data.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tools._lib.asv.results import RESULTS_DIR
from tools._lib.asv.window import WINDOW_DAYS, Window, publish_data
from tools._lib.base.cli import BadInput, ExternalFailure
from tools._lib.base.git import git
from tools._lib.store.releases_page import PAGE, write_releases_page

SITE_MARKER = ".tensorops-site"
# The graphs' values, to this many significant digits: a hundredth of a per cent, far
# below the smallest step any floor calls. asv writes every float with 17 digits, and the
# overview fetches every benchmark's graph whole
# (docs/explanation/continuous.md, "A year of history").
GRAPH_DIGITS = 5
# asv's pages the site's UI reads: asv-tachyon fetches the graphs and regressions.json,
# never asv's summary grid or list (tools/_lib/asv/publish_pages.py).
SITE_PAGES = ("Regressions",)


def check_site(repo: Path, site: Path) -> Path:
    """``site``, resolved, when publishing may empty it; bad input otherwise."""
    site, repo = site.resolve(), repo.resolve()
    protected = [repo / ".git", repo / RESULTS_DIR, repo / ".asv" / "env"]
    if repo.is_relative_to(site) or any(site.is_relative_to(p) for p in protected):
        raise BadInput(f"--site {site} would empty the repository or its data; choose another")
    if site == repo / ".asv" or site == Path.home():
        raise BadInput(f"--site {site} would empty {site}; choose another")
    if site.exists():
        if not site.is_dir():
            raise BadInput(f"--site {site} is a file")
        if any(site.iterdir()) and not (site / SITE_MARKER).exists():
            raise BadInput(
                f"--site {site} holds files this tool did not publish; give an empty or new "
                "directory"
            )
    return site


def remove_legacy_page(site: Path) -> None:
    """asv's own page and scripts, which asv-tachyon's UI does not use."""
    import asv as asv_package

    for shipped in (Path(asv_package.__file__).parent / "www").iterdir():
        if shipped.name != "index.html":
            (site / shipped.name).unlink(missing_ok=True)
    (site / "index.legacy.html").unlink(missing_ok=True)


def complete_graph_index(site: Path) -> list[str]:
    """Make every benchmark in index.json have a graph (and samples) for every machine, so
    the UI fetches no file that is not there. A benchmark no machine has results for (a new one,
    or one outside a ``--bench`` subset) is left out; one that some machines lack gets an
    empty graph there. Returns the benchmarks left out."""
    index_path = site / "index.json"
    index = json.loads(index_path.read_text())
    graphs = list((site / "graphs").rglob("*.json"))
    dropped = sorted(set(index["benchmarks"]) - {path.stem for path in graphs})
    for name in dropped:
        del index["benchmarks"][name]
    index_path.write_text(json.dumps(index))
    for folder in {path.parent for path in graphs}:
        # asv-tachyon also asks for the raw samples beside each graph, under samples/;
        # asv publishes none, so each gets an empty set (absent, each is a 404).
        samples = site / "samples" / folder.relative_to(site / "graphs")
        samples.mkdir(parents=True, exist_ok=True)
        for name in index["benchmarks"]:
            if not (folder / f"{name}.json").exists():
                (folder / f"{name}.json").write_text("[]")
            (samples / f"{name}.json").write_text("{}")
    return dropped


def rounded(value):
    """``value`` (a graph's point, or part of one) with its floats to GRAPH_DIGITS."""
    if isinstance(value, float):
        return float(f"{value:.{GRAPH_DIGITS}g}") if value == value else value
    if isinstance(value, list):
        return [rounded(item) for item in value]
    return value


def compact_graphs(site: Path) -> None:
    """Every graph rewritten with its values rounded and no spaces."""
    for path in (site / "graphs").rglob("*.json"):
        points = json.loads(path.read_text())
        path.write_text(json.dumps(rounded(points), separators=(",", ":")))


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


def publish(repo: Path, site: Path, days: int = WINDOW_DAYS) -> None:
    """Publish the results now in the repo's results_dir to ``site``: the commits of the
    last ``days`` days (0: every commit)."""
    site = check_site(repo, site)
    results = repo / RESULTS_DIR
    machines = sorted(p.name for p in results.iterdir() if (p / "machine.json").is_file())
    if not machines:
        raise BadInput(f"no machine's results in {results}")
    window = publish_data(repo, site, Window(days), SITE_PAGES)
    tachyon = Path(sys.executable).with_name("asv-tachyon")
    installed = subprocess.run(
        [str(tachyon) if tachyon.exists() else "asv-tachyon", "install", "--no-backup", str(site)],
        capture_output=True,
        text=True,
    )
    if installed.returncode != 0:
        raise ExternalFailure(f"asv-tachyon install failed: {installed.stderr[-500:]}")
    remove_legacy_page(site)
    compact_graphs(site)
    dropped = complete_graph_index(site)
    write_ui_sidecars(repo, site)
    compared = write_releases_page(results, site)
    (site / ".nojekyll").touch()  # GitHub Pages: serve the files as they are
    (site / SITE_MARKER).write_text("published by tools/publish.py; --site may replace it\n")
    print(
        f"published {', '.join(machines)} to {site}: {window}"
        + (f"; {len(dropped)} benchmarks with no results left out" if dropped else "")
        + (f"; torch releases compared on {', '.join(compared)} ({PAGE})" if compared else "")
    )
