"""asv's result files: read and checked (asv itself skips a corrupt one with a warning, so a
caller that must not lose results asks here first), and the values of a commit's rows."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

from tools._lib.cli import BadInput

RESULTS_DIR = Path(".asv") / "results"  # asv.conf.json's results_dir, from the repo root


def read_result_file(path: Path) -> dict:
    """A result file's JSON; bad input when it is not one."""
    try:
        data = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise BadInput(f"corrupt result file {path}: {error}") from None
    if not isinstance(data, dict) or not isinstance(data.get("commit_hash"), str):
        raise BadInput(f"corrupt result file {path}: no commit_hash")
    return data


def is_result_file(path: Path) -> bool:
    return path.suffix == ".json" and path.name not in ("machine.json", "floors.json")


def machine_result_files(results_dir: Path, machine: str) -> dict[Path, dict]:
    """Every result file of one machine, read and checked."""
    folder = results_dir / machine
    if not folder.is_dir():
        return {}
    return {
        path: read_result_file(path)
        for path in sorted(folder.glob("*.json"))
        if is_result_file(path)
    }


def benchmarked_commits(results_dir: Path, machine: str) -> set[str]:
    return {data["commit_hash"] for data in machine_result_files(results_dir, machine).values()}


def benchmark_units(results_dir: Path) -> dict[str, str]:
    """Each benchmark's unit, from the benchmarks.json asv keeps beside the results."""
    benchmarks = json.loads((results_dir / "benchmarks.json").read_text())
    return {name: b.get("unit", "") for name, b in benchmarks.items() if name != "version"}


def commit_values(results_dir: Path, machine: str, commit: str) -> dict[tuple[str, str], tuple]:
    """``(benchmark, params) -> (value, stats, samples)`` of every measured row of
    ``machine`` at ``commit`` (skipped and failed rows left out), from every environment's
    result file of that commit."""
    from asv.results import iter_results_for_machine_and_hash

    rows = {}
    for result in iter_results_for_machine_and_hash(str(results_dir), machine, commit):
        for key in result.get_all_result_keys():
            params = result.get_result_params(key)
            combos = [f"({', '.join(c)})" for c in itertools.product(*params)] if params else [""]
            measured = zip(
                combos,
                result.get_result_value(key, params),
                result.get_result_stats(key, params),
                result.get_result_samples(key, params),
                strict=True,
            )
            for combo, value, stats, samples in measured:
                if value is not None and value == value:  # None: failed; NaN: skipped
                    rows[key, combo] = (value, stats, samples)
    return rows
