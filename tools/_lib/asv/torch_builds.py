"""The manifest beside a machine's results: what each asv environment's benchmarks ran
under (benchmarks/_harness/manifest.py prints it) and its ``pip freeze``, a section per torch
release, the sections of releases not probed this run kept as they were. A probe that fails
is recorded as such: it never costs a night's results."""

from __future__ import annotations

import datetime
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from tools._lib.asv.matrix import Release
from tools._lib.asv.results import RESULTS_DIR

MANIFEST = "manifest.txt"  # not *.json: asv would try to load it as a result file
SECTION = re.compile(r"^\[([^\]\n]+)\]$", re.M)


def probe(repo: Path, python: Path) -> tuple[str, bool]:
    """An interpreter's facts as benchmarks/_harness/manifest.py prints them, and whether
    it answered (the text says why not)."""
    try:
        done = subprocess.run(
            [str(python), "-m", "benchmarks._harness.manifest"],
            cwd=repo,
            capture_output=True,
            text=True,
            errors="replace",
        )
    except OSError as error:
        return f"probe failed: {error}", False
    if done.returncode != 0:
        return f"probe failed ({done.returncode}): {done.stderr.strip()[-300:]}", False
    return done.stdout.rstrip(), True


def facts_of(text: str) -> dict[str, str]:
    """``name: value`` lines as a dict (indented lines, the packages, left out)."""
    found: dict[str, str] = {}
    for line in text.splitlines():
        if ": " in line and not line.startswith(" "):
            name, _, value = line.partition(": ")
            found.setdefault(name, value)
    return found


def environment_section(repo: Path, release: Release) -> tuple[str, bool]:
    """One release's facts and packages, and whether both probes answered."""
    facts, answered = probe(repo, release.python)
    try:
        frozen = subprocess.run(
            [str(release.python), "-m", "pip", "freeze"],
            capture_output=True,
            text=True,
            errors="replace",
        )
        listed, froze = frozen.stdout.splitlines(), frozen.returncode == 0
        packages = (
            "\n".join(f"  {line}" for line in listed)
            if froze
            else (f"  pip freeze failed ({frozen.returncode})")
        )
    except OSError as error:
        packages, froze = f"  pip freeze failed: {error}", False
    return f"[{release.env_name}]\n{facts}\npip freeze:\n{packages}", answered and froze


def sections(text: str) -> dict[str, str]:
    """A manifest's sections by environment name, each as written."""
    starts = list(SECTION.finditer(text))
    return {
        match.group(1): text[
            match.start() : (starts[i + 1].start() if i + 1 < len(starts) else None)
        ].rstrip()
        for i, match in enumerate(starts)
    }


def write_manifest(repo: Path, machine: str, probed: Sequence[Release]) -> None:
    """Record the ``probed`` releases' environments in ``machine``'s manifest, beside the
    sections it holds of others."""
    path = repo / RESULTS_DIR / machine / MANIFEST
    kept = sections(path.read_text(errors="replace")) if path.exists() else {}
    for release in probed:
        section, complete = environment_section(repo, release)
        kept[release.env_name] = section
        if not complete:
            print(
                f"nightly: the manifest of {release.env_name} is incomplete (see {MANIFEST})",
                file=sys.stderr,
            )
    stamp = f"# written by tools/nightly.py at {datetime.datetime.now(datetime.UTC):%FT%TZ}"
    path.write_text("\n\n".join([stamp, *(kept[name] for name in sorted(kept))]) + "\n")
