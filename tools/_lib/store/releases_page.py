"""The site's page of torch release comparisons: each machine's latest comparison
(``releases/NAME.json`` on the results branch, tools/releases.py) as a static table beside
asv's graphs, where each release is its own series. Everything in it is escaped: the rows'
names and explanations are data."""

from __future__ import annotations

import html
import json
import sys
from pathlib import Path

PAGE = "releases.html"


def cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, list):
        return " – ".join(cell(part) for part in value)
    return html.escape(str(value))


def comparison_section(data: dict) -> str:
    names = [f"torch {release['torch']}" for release in data["releases"]]
    facts = sorted({key for release in data["releases"] for key in release["facts"]})
    build_rows = "".join(
        f"<tr><th>{html.escape(key)}</th>"
        + "".join(f"<td>{cell(release['facts'].get(key))}</td>" for release in data["releases"])
        + "</tr>"
        for key in facts
    )
    heads = ["change", *names, "slowdown", "interval", "judged at", "count twin", "% of peak"]
    rows = "".join(
        "<tr>"
        + "".join(
            f"<td>{cell(row[key])}</td>"
            for key in ("change", "old", "new", "slowdown", "interval", "threshold")
        )
        + f"<td>{cell(row['twin_slowdown'])}</td><td>{cell(row['peak'])}</td>"
        + f"<td><code>{cell(row['label'])}</code></td></tr>"
        for row in data["rows"]
    )
    return (
        f"<section><h2>{html.escape(names[1])} against {html.escape(names[0])} on "
        f"{html.escape(data['machine'])}</h2>"
        f"<p>Commit <code>{html.escape(data['commit'][:12])}</code>, host "
        f"{html.escape(data['host']['cpu'])} (L3 {html.escape(data['host']['l3'])}), measured "
        f"{html.escape(data['measured'])}.</p>"
        f"<table><tr><th></th>{''.join(f'<th>{html.escape(n)}</th>' for n in names)}</tr>"
        f"{build_rows}</table>"
        f"<table><tr>{''.join(f'<th>{html.escape(h)}</th>' for h in heads)}<th>row</th></tr>"
        f"{rows}</table></section>"
    )


def check_comparison(data) -> str:
    """The comparison's section of the page: ValueError, in one line, when it cannot be
    shown (the push refuses what the page could not show, so publishing never meets it)."""
    try:
        if not isinstance(data.get("machine"), str) or not isinstance(data.get("rows"), list):
            raise TypeError("no machine or rows")
        return comparison_section(data)
    except (KeyError, TypeError, AttributeError, IndexError, ValueError) as error:
        raise ValueError(f"{type(error).__name__}: {error}") from None


def write_releases_page(results: Path, site: Path) -> list[str]:
    """The page and the comparisons' JSON on the site; the machines it shows. A file that
    is not a comparison is left out with a line saying so: one bad file must not stop
    every machine's site."""
    found = sorted((results / "releases").glob("*.json"))
    if not found:
        return []
    (site / "releases").mkdir(exist_ok=True)
    sections, machines = [], []
    for path in found:
        try:
            data = json.loads(path.read_text())
            sections.append(check_comparison(data))
        except (OSError, ValueError) as error:
            print(
                f"publish: left out {path.name}: {path} is not a releases comparison: {error}",
                file=sys.stderr,
            )
            continue
        (site / "releases" / path.name).write_text(json.dumps(data))
        machines.append(data["machine"])
    if not sections:
        return []
    (site / PAGE).write_text(
        "<!doctype html><html><head><meta charset='utf-8'><title>torch releases</title>"
        "<style>body{font-family:sans-serif}table{border-collapse:collapse;margin:1em 0}"
        "td,th{border:1px solid #ccc;padding:2px 6px;text-align:left}</style></head><body>"
        "<h1>torch releases compared</h1><p><a href='index.html'>every benchmark's history"
        "</a> (each release its own series)</p>" + "".join(sections) + "</body></html>\n"
    )
    return machines
