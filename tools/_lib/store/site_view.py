"""A published site served on 127.0.0.1 as a static host serves it, and the Chromium that
opens it: Debian's package (.ci/run installs it), started without the background
networking it would otherwise try at start.

GitHub Pages sends text files (HTML, scripts, JSON) gzip-compressed to a browser that
accepts it; ``served(site, compress=True)`` does the same, so what a first view transfers
can be measured as a user's browser would receive it (``first_view``).
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import http.server
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path

CHROMIUM = shutil.which("chromium") or shutil.which("google-chrome") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
COMPRESSED_SUFFIXES = (".html", ".js", ".css", ".json", ".svg", ".xml")


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    compress = False

    def log_message(self, *args) -> None:
        pass

    def send_head(self):
        path = Path(self.translate_path(self.path))
        if path.is_dir():
            path = path / "index.html"
        wanted = "gzip" in self.headers.get("Accept-Encoding", "")
        if not (self.compress and wanted and path.suffix in COMPRESSED_SUFFIXES):
            return super().send_head()
        if not path.is_file():
            self.send_error(404, "File not found")
            return None
        body = gzip.compress(path.read_bytes(), compresslevel=6)
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(str(path)))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        return _Body(body)


class _Body:
    """A compressed body in the shape SimpleHTTPRequestHandler copies out and closes."""

    def __init__(self, data: bytes):
        self.data = data

    def read(self, size: int = -1) -> bytes:
        data, self.data = (self.data, b"") if size < 0 else (self.data[:size], self.data[size:])
        return data

    def close(self) -> None:
        self.data = b""


@contextlib.contextmanager
def served(site: Path, compress: bool = False) -> Iterator[str]:
    """The base address of ``site`` served over http on 127.0.0.1 (text gzip-compressed
    when ``compress``, as GitHub Pages sends it)."""
    handler_class = type("Handler", (QuietHandler,), {"compress": compress})
    handler = functools.partial(handler_class, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/"
    finally:
        server.shutdown()
        server.server_close()


def first_view(site: Path, compress: bool) -> dict:
    """The site's overview opened in Chromium, served as GitHub Pages serves it (text
    gzip-compressed) or uncompressed: the bytes and files it fetched, and the seconds until
    the network was idle with the overview drawn."""
    from playwright.sync_api import sync_playwright

    fetched: list[tuple[str, int]] = []
    with served(site, compress) as base, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.on(
            "requestfinished",
            lambda request: fetched.append((request.url, request.sizes()["responseBodySize"])),
        )
        start = time.perf_counter()
        page.goto(base, wait_until="networkidle", timeout=120_000)
        page.get_by_text("benchmarks").first.wait_for(timeout=120_000)
        seconds = time.perf_counter() - start
        browser.close()
    return {
        "compressed": compress,
        "seconds": round(seconds, 2),
        "bytes": sum(size for _, size in fetched),
        "files": len(fetched),
        "graph_files": sum("/graphs/" in url for url, _ in fetched),
    }
