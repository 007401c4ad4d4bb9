"""The site's page of torch release comparisons: each machine's latest comparison
(``releases/NAME.json`` on the results branch, tools/releases.py) as a static table beside
asv's graphs, where each release is its own series. Everything in it is escaped: the rows'
names and explanations are data."""

from __future__ import annotations

import html
import json
from pathlib import Path

from tools._lib.cli import BadInput

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


def write_releases_page(results: Path, site: Path) -> list[str]:
    """The page and the comparisons' JSON on the site; the machines it shows."""
    found = sorted((results / "releases").glob("*.json"))
    if not found:
        return []
    (site / "releases").mkdir(exist_ok=True)
    sections, machines = [], []
    for path in found:
        try:
            data = json.loads(path.read_text())
            sections.append(comparison_section(data))
        except (OSError, ValueError, KeyError, TypeError, AttributeError, IndexError) as error:
            raise BadInput(f"{path} is not a releases comparison: {error!r}") from None
        (site / "releases" / path.name).write_text(json.dumps(data))
        machines.append(data["machine"])
    (site / PAGE).write_text(
        "<!doctype html><html><head><meta charset='utf-8'><title>torch releases</title>"
        "<style>body{font-family:sans-serif}table{border-collapse:collapse;margin:1em 0}"
        "td,th{border:1px solid #ccc;padding:2px 6px;text-align:left}</style></head><body>"
        "<h1>torch releases compared</h1><p><a href='index.html'>every benchmark's history"
        "</a> (each release its own series)</p>" + "".join(sections) + "</body></html>\n"
    )
    return machines
