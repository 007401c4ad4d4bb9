"""Open a published site in headless Chromium, served over http on localhost with every
other host blocked, and report what a user would see: requests that tried to leave
localhost, console errors, the overview's text, and the commits on one benchmark's page.

Chromium is Debian's package (.ci/run installs it); Playwright drives it. Without it
the browser tests skip, unless TENSOROPS_REQUIRE_BROWSER is set (CI), when they fail.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tools._lib.store.site_view import CHROMIUM, CHROMIUM_ARGS, served

LOCAL_SCHEMES = ("data:", "blob:", "about:")


@dataclass
class Seen:
    off_host_requests: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    failed_requests: list[str] = field(default_factory=list)
    overview_text: str = ""
    points: list[str] = field(default_factory=list)  # commits in the "recent points" panel
    releases: list[str] = field(default_factory=list)  # torch releases with a series shown
    screenshots: list[Path] = field(default_factory=list)


def require_chromium() -> None:
    if not os.path.exists(CHROMIUM):
        if os.environ.get("TENSOROPS_REQUIRE_BROWSER"):
            pytest.fail(f"no Chromium at {CHROMIUM}; .ci/run installs Debian's chromium")
        pytest.skip("no Chromium (apt-get install chromium)")


def watched_page(browser, base: str, seen: Seen):
    """A page that may reach the local server alone, its failed requests and console
    errors recorded in ``seen``."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})

    def offline(route) -> None:
        if route.request.url.startswith((base, *LOCAL_SCHEMES)):
            route.continue_()
        else:
            seen.off_host_requests.append(route.request.url)
            route.abort()

    page.route("**/*", offline)
    page.on(
        "response",
        lambda r: r.status >= 400 and seen.failed_requests.append(f"{r.status} {r.url}"),
    )
    page.on("console", lambda m: m.type == "error" and seen.console_errors.append(m.text))
    page.on("pageerror", lambda error: seen.console_errors.append(str(error)))
    return page


def browse_site(site: Path, benchmark: str, artifacts: Path) -> Seen:
    """The published site as a user sees it, with no network beyond the local server:
    the overview, then ``benchmark``'s page (reached by clicking it), whose "recent
    points" panel lists the commits measured."""
    require_chromium()
    from playwright.sync_api import sync_playwright

    artifacts.mkdir(parents=True, exist_ok=True)
    seen = Seen()
    with served(site) as base, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = watched_page(browser, base, seen)
            page.goto(base + "index.html")
            page.wait_for_load_state("networkidle")
            page.get_by_text(benchmark).first.wait_for(timeout=20_000)
            seen.overview_text = page.inner_text("body")
            seen.screenshots.append(artifacts / "overview.png")
            page.screenshot(path=seen.screenshots[-1], full_page=True)

            page.get_by_text(benchmark).first.click()
            # asv-tachyon's side panel: a card headed "Recent points", a commit and a value
            # per line.
            panel = page.locator("div.card").filter(
                has=page.locator("h3", has_text="Recent points")
            )
            panel.wait_for(timeout=20_000)
            # The card is drawn first and filled once the graph's JSON has arrived.
            for _ in range(100):
                seen.points = re.findall(r"\b[0-9a-f]{8}\b", panel.inner_text())
                if seen.points:
                    break
                page.wait_for_timeout(200)
            seen.screenshots.append(artifacts / "benchmark.png")
            page.screenshot(path=seen.screenshots[-1], full_page=True)
        finally:
            browser.close()
    return seen


# The benchmark page's filter of the environments' torch param, and the figure it shows for
# the chosen series.
TORCH_FILTER = "TORCH"
LATEST = re.compile(r"LATEST\s+\d")  # a value, not the placeholder of an empty series


def browse_series(site: Path, benchmark: str, artifacts: Path) -> Seen:
    """``benchmark``'s page as a user sees it, reached from the overview: each torch
    release its torch filter offers, chosen in turn, and the latest value its series shows
    (``seen.releases`` lists the releases that showed one)."""
    require_chromium()
    from playwright.sync_api import sync_playwright

    artifacts.mkdir(parents=True, exist_ok=True)
    seen = Seen()
    with served(site) as base, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = watched_page(browser, base, seen)
            page.goto(base + "index.html")
            page.wait_for_load_state("networkidle")
            page.get_by_text(benchmark).first.wait_for(timeout=20_000)
            page.get_by_text(benchmark).first.click()
            page.wait_for_load_state("networkidle")
            selects = page.locator("select")
            selects.first.wait_for(timeout=20_000)
            (torch,) = [
                selects.nth(i)
                for i in range(selects.count())
                if selects.nth(i).evaluate("e => e.parentElement.innerText.split('\\n')[0]")
                == TORCH_FILTER
            ]
            for release in torch.evaluate("e => [...e.options].map(o => o.value)"):
                torch.select_option(release)
                page.wait_for_timeout(500)
                if LATEST.search(page.inner_text("body")):
                    seen.releases.append(release)
                seen.screenshots.append(artifacts / f"series-torch-{release}.png")
                page.screenshot(path=seen.screenshots[-1], full_page=True)
        finally:
            browser.close()
    return seen
