"""asv's result files: read and checked (asv itself skips a corrupt one with a warning, so a
caller that must not lose results asks here first), and the values of a commit's rows under
one environment (a torch release: asv keeps a file per commit and environment)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

from tools._lib.base.cli import BadInput

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


def machine_result_files(
    results_dir: Path, machine: str, env_name: str | None = None
) -> dict[Path, dict]:
    """Every result file of one machine (of one environment, when named), read and
    checked."""
    folder = results_dir / machine
    if not folder.is_dir():
        return {}
    files = {
        path: read_result_file(path)
        for path in sorted(folder.glob("*.json"))
        if is_result_file(path)
    }
    if env_name is None:
        return files
    return {path: data for path, data in files.items() if data.get("env_name") == env_name}


def benchmark_units(results_dir: Path) -> dict[str, str]:
    """Each benchmark's unit, from the benchmarks.json asv keeps beside the results."""
    benchmarks = json.loads((results_dir / "benchmarks.json").read_text())
    return {name: b.get("unit", "") for name, b in benchmarks.items() if name != "version"}


def commit_values(
    results_dir: Path, machine: str, commit: str, env_name: str
) -> dict[tuple[str, str], tuple]:
    """``(benchmark, params) -> (value, stats, samples)`` of every measured row of
    ``machine`` at ``commit`` under the environment ``env_name`` (skipped and failed rows
    left out)."""
    return {
        key: measured
        for key, measured in commit_rows(results_dir, machine, commit, env_name).items()
        if measured[0] is not None and measured[0] == measured[0]  # None: failed; NaN: skipped
    }


def commit_rows(
    results_dir: Path, machine: str, commit: str, env_name: str
) -> dict[tuple[str, str], tuple]:
    """As :func:`commit_values`, with the rows that failed (value None) or skipped (NaN)."""
    from asv.results import iter_results_for_machine_and_hash

    rows = {}
    for result in iter_results_for_machine_and_hash(str(results_dir), machine, commit):
        if result.env_name != env_name:
            continue
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
                rows[key, combo] = (value, stats, samples)
    return rows
