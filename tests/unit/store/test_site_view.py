"""The site served as a static host serves it: text gzip-compressed to a browser that asks
for it (what GitHub Pages sends), everything else as it is."""

from __future__ import annotations

import gzip
import urllib.error
import urllib.request

import pytest

from tools._lib.store.site_view import served


def fetch(url: str, accept_gzip: bool) -> tuple[str | None, bytes]:
    headers = {"Accept-Encoding": "gzip"} if accept_gzip else {}
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers)) as response:
        return response.headers.get("Content-Encoding"), response.read()


def test_text_is_compressed_when_asked_and_the_rest_is_sent_as_it_is(tmp_path):
    graph = b"[[0,0.00084379],[1,0.00084422]]" * 100
    (tmp_path / "graphs").mkdir()
    (tmp_path / "graphs" / "g.json").write_bytes(graph)
    (tmp_path / "index.html").write_bytes(b"<!doctype html><p>site</p>")
    (tmp_path / "font.woff2").write_bytes(bytes(range(256)))
    with served(tmp_path, compress=True) as base:
        encoding, body = fetch(base + "graphs/g.json", accept_gzip=True)
        assert encoding == "gzip" and gzip.decompress(body) == graph and len(body) < len(graph)
        assert fetch(base, accept_gzip=True)[0] == "gzip"  # a folder serves its index.html
        assert fetch(base + "graphs/g.json", accept_gzip=False) == (None, graph)
        assert fetch(base + "font.woff2", accept_gzip=True) == (None, bytes(range(256)))
        with pytest.raises(urllib.error.HTTPError, match="404"):
            fetch(base + "graphs/missing.json", accept_gzip=True)
    with served(tmp_path) as base:
        assert fetch(base + "graphs/g.json", accept_gzip=True) == (None, graph)
