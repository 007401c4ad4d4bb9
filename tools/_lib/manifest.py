"""The manifest beside a machine's results: what each asv environment's benchmarks ran
under (benchmarks/_harness/manifest.py prints it) and its ``pip freeze``. A probe that fails
is recorded as such: it never costs a night's results."""

from __future__ import annotations

import datetime
import subprocess
import sys
from pathlib import Path

from tools._lib.asv_run import benchmark_pythons
from tools._lib.results import RESULTS_DIR

MANIFEST = "manifest.txt"  # not *.json: asv would try to load it as a result file


def environment_section(repo: Path, python: Path) -> tuple[str, bool]:
    """One environment's facts and packages, and whether both probes answered."""
    env = python.parent.parent.name
    try:
        probe = subprocess.run(
            [str(python), "-m", "benchmarks._harness.manifest"],
            cwd=repo,
            capture_output=True,
            text=True,
            errors="replace",
        )
        frozen = subprocess.run(
            [str(python), "-m", "pip", "freeze"], capture_output=True, text=True, errors="replace"
        )
    except OSError as error:
        return f"[{env}]\nprobe failed: {error}", False
    facts = (
        probe.stdout.rstrip()
        if probe.returncode == 0
        else f"probe failed ({probe.returncode}): {probe.stderr.strip()[-300:]}"
    )
    packages = "\n".join(f"  {line}" for line in frozen.stdout.splitlines())
    if frozen.returncode != 0:
        packages = f"  pip freeze failed ({frozen.returncode})"
    return f"[{env}]\n{facts}\npip freeze:\n{packages}", probe.returncode == frozen.returncode == 0


def write_manifest(repo: Path, machine: str) -> None:
    """Record every asv environment of the repository in ``machine``'s manifest."""
    sections = [f"# written by tools/nightly.py at {datetime.datetime.now(datetime.UTC):%FT%TZ}"]
    for python in benchmark_pythons(repo):
        section, complete = environment_section(repo, python)
        sections.append(section)
        if not complete:
            print(
                f"nightly: the manifest of {python.parent.parent.name} is incomplete "
                f"(see {MANIFEST})",
                file=sys.stderr,
            )
    (repo / RESULTS_DIR / machine / MANIFEST).write_text("\n\n".join(sections) + "\n")


def read_manifest(path: Path) -> dict[str, dict[str, str]]:
    """A manifest's facts per environment: ``{env: {name: value}}`` (packages left out)."""
    found: dict[str, dict[str, str]] = {}
    current = None
    for line in path.read_text(errors="replace").splitlines():
        if line.startswith("[") and line.endswith("]"):
            current = found.setdefault(line[1:-1], {})
        elif current is not None and ": " in line and not line.startswith(" "):
            name, _, value = line.partition(": ")
            current.setdefault(name, value)
    return found
