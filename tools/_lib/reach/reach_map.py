"""Which of the library's functions each row reaches at one commit: traced by
benchmarks/_harness/reach.py in the default release's asv environment (the rows' own), that
commit's library first on the path, and kept by commit (``.asv/reach/<commit>.json``, or a
file the caller names, such as the nightly's map on the results branch). A map that lacks
some rows has them traced and added; a map of another commit is left aside, and said so."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tools._lib.asv.run import allocator_environment
from tools._lib.asv.suites import count_twins
from tools._lib.base.cli import BadInput, ExternalFailure, one_line
from tools._lib.base.git import commit_library

VERSION = 1
CACHE = Path(".asv") / "reach"
# Tracing a row is its setup and one call: the slowest rows take about a minute on a CPU
# without native bfloat16 (docs/explanation/measurement.md, "Rows of a minute a call"); a
# whole tier in one process gets this long before it is called hung.
TRACE_SECONDS = 3600.0

Function = tuple[str, str]  # (path under the library's parent folder, qualified name)


@dataclass(frozen=True)
class RowReach:
    """What one row's setup and one call ran: ``status`` "traced", "skip" (asv's skip: the
    row is not available at this commit) or "error", with the reason."""

    status: str
    functions: frozenset[Function]
    modules: frozenset[str]
    reason: str = ""


@dataclass(frozen=True)
class ReachMap:
    """One commit's map: the functions run at import, and each row's reach."""

    commit: str
    at_import: frozenset[Function]
    rows: dict[str, RowReach]

    def to_json(self) -> dict:
        return {
            "version": VERSION,
            "commit": self.commit,
            "at_import": [list(f) for f in sorted(self.at_import)],
            "rows": {
                label: {
                    "status": row.status,
                    "reason": row.reason,
                    "functions": [list(f) for f in sorted(row.functions)],
                    "modules": sorted(row.modules),
                }
                for label, row in sorted(self.rows.items())
            },
        }

    @classmethod
    def from_json(cls, data) -> ReachMap:
        """A map as ``to_json`` wrote it; ValueError, in one line, for anything else."""
        if not isinstance(data, dict) or data.get("version") != VERSION:
            raise ValueError(f"not a version {VERSION} reach map")
        try:
            return cls(
                commit=str(data["commit"]),
                at_import=functions(data["at_import"]),
                rows={str(label): row_reach(row) for label, row in data["rows"].items()},
            )
        except (KeyError, TypeError, AttributeError) as error:
            raise ValueError(
                f"a reach map with a field missing or of the wrong kind: {error}"
            ) from None

    def merged(self, other: ReachMap) -> ReachMap:
        return ReachMap(self.commit, self.at_import | other.at_import, self.rows | other.rows)


def functions(listed) -> frozenset[Function]:
    if not isinstance(listed, list) or not all(
        isinstance(f, list) and len(f) == 2 and all(isinstance(p, str) for p in f) for f in listed
    ):
        raise ValueError("a function list that is not [path, qualified name] pairs")
    return frozenset((path, name) for path, name in listed)


def row_reach(data: dict) -> RowReach:
    if data["status"] not in ("traced", "skip", "error"):
        raise ValueError(f"unknown status {str(data['status'])[:40]!r}")
    modules = data["modules"]
    if not isinstance(modules, list) or not all(isinstance(m, str) for m in modules):
        raise ValueError("a module list that is not paths")
    return RowReach(
        data["status"], functions(data["functions"]), frozenset(modules), str(data["reason"])
    )


def read_map(path: Path) -> ReachMap:
    """A reach map file; bad input, in one line, when it is not one."""
    try:
        return ReachMap.from_json(json.loads(path.read_text()))
    except OSError as error:
        raise BadInput(f"cannot read the reach map {path}: {error.strerror}") from None
    except ValueError as error:
        raise BadInput(f"{path} is not a reach map: {one_line(str(error))}") from None


def traced(repo: Path, commit: str, labels: Sequence[str], python: Path) -> ReachMap:
    """The rows' reach at ``commit``, traced by ``python`` (an asv environment's) with that
    commit's library and this checkout's suites, as asv runs a commit."""
    with commit_library(repo, commit) as library:
        env = allocator_environment(dict(os.environ))
        env["PYTHONPATH"] = str(library)
        try:
            done = subprocess.run(
                [str(python), "-m", "benchmarks._harness.reach"],
                cwd=repo,
                env=env,
                input=json.dumps(list(labels)),
                capture_output=True,
                text=True,
                timeout=TRACE_SECONDS,
            )
        except subprocess.TimeoutExpired:
            raise ExternalFailure(
                f"tracing what {len(labels)} rows reach at {commit[:12]} took over "
                f"{TRACE_SECONDS:.0f} s"
            ) from None
    if done.returncode != 0:
        said = one_line(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "")
        raise ExternalFailure(
            f"tracing what the rows reach at {commit[:12]} failed (exit status "
            f"{done.returncode}): {said}"
        )
    data = json.loads(done.stdout)
    return ReachMap.from_json({"version": VERSION, "commit": commit, **data})


@dataclass(frozen=True)
class Mapped:
    """A commit's map for the rows asked, and where it came from, in words."""

    reach: ReachMap
    source: str


def reach_at(
    repo: Path, commit: str, labels: Sequence[str], python: Path, given: Path | None = None
) -> Mapped:
    """The map of ``labels`` at ``commit``: ``given`` (left aside, and said so, when it is
    another commit's) or the cache, with any row they lack traced now and the whole kept in
    the cache."""
    cache = repo / CACHE / f"{commit}.json"
    stale, found, origin = "", None, cache.relative_to(repo)
    if given is not None:
        found, origin = read_map(given), given
        if found.commit != commit:
            stale = f"{given} is of {found.commit[:12]}, not {commit[:12]}; "
            found, origin = None, cache.relative_to(repo)
    if found is None and cache.exists():
        found = read_map(cache)
    missing = [label for label in labels if found is None or label not in found.rows]
    if found is not None and not missing:
        return Mapped(found, f"{stale}read from {origin}")
    fresh = traced(repo, commit, missing, python)
    whole = found.merged(fresh) if found else fresh
    keep(whole, cache)
    if found is None:
        return Mapped(
            whole, f"{stale}traced now: no map of {commit[:12]} yet ({len(missing)} rows)"
        )
    return Mapped(whole, f"{stale}read, and {len(missing)} rows it lacked traced now")


def branch_map_path(results: Path, machine: str) -> Path:
    """Where a machine's nightly keeps its map on the results branch: the map of the newest
    commit it ran, which is the base of most pull requests opened the next day."""
    return results / "reach" / f"{machine}.json"


def refresh_branch_map(
    results: Path, machine: str, repo: Path, commit: str, labels: Sequence[str], python: Path
) -> bool:
    """The machine's map on the results branch made the map of ``commit`` (the rows
    ``labels``), traced unless it already is; True when it changed."""
    path = branch_map_path(results, machine)
    if path.exists():
        try:
            held = ReachMap.from_json(json.loads(path.read_text()))
            if held.commit == commit and set(labels) <= set(held.rows):
                return False
        except ValueError:
            pass  # not a map: traced again and replaced
    keep(traced(repo, commit, labels, python), path)
    return True


def keep(reach: ReachMap, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(reach.to_json()) + "\n")


def traced_rows(repo: Path, candidates: Sequence[str]) -> tuple[dict[str, str], list[str]]:
    """The rows to trace for ``candidates``: each instruction count's timed twin (whose
    call it counts) in its place; and the twins, count row to timed row."""
    twins = {count: timed for timed, count in count_twins(repo).items()}
    return twins, sorted({twins.get(row, row) for row in candidates})
