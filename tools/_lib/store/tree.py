"""What a results branch may hold, and how two runs' files meet on it: asv's files per
machine, the manifest and floors, the triage's records, the releases comparison;
``benchmarks.json`` merged, and a result file that two shards of one machine's night both
wrote merged benchmark by benchmark."""

from __future__ import annotations

import json
import re

from tools._lib.base.cli import BadInput

# asv's files per machine (machine.json, one result file per commit and environment), the
# manifest, the floors; the triage's records, the latest releases comparison and the map of
# what each row reaches at the newest commit measured (one file per machine in each folder).
PER_MACHINE_FOLDERS = ("triage", "releases", "reach")
RESULTS_TREE = re.compile(
    r"^(benchmarks\.json"
    r"|[\w.-]+/(machine\.json|manifest\.txt|floors\.json|[0-9a-f]{8}-[\w.+-]+\.json)"
    r"|(triage|releases|reach)/[\w.-]+\.json)$"
)
# asv's result file of one machine, commit and environment: what shards of a night share.
RESULT_FILE = re.compile(r"^(?!(triage|releases|reach)/)[\w.-]+/[0-9a-f]{8}-[\w.+-]+\.json$")
# The fields of machine.json that say which machine a name stands for: what a runner class
# keeps from host to host. Its CPU model is not one of them: a hosted runner lands on
# another one some nights (docs/explanation/continuous.md, "Reliability: the choices").
HARDWARE_KEYS = ("arch", "num_cpu", "os", "ram")


def check_path(name: str) -> None:
    if not RESULTS_TREE.match(name) or ".." in name.split("/"):
        raise BadInput(f"{name!r} does not belong on a results branch")


def machine_of(name: str) -> str | None:
    """The machine a results-tree path belongs to (None: shared by every machine)."""
    if name == "benchmarks.json":
        return None
    folder, _, file = name.partition("/")
    return file.removesuffix(".json") if folder in PER_MACHINE_FOLDERS else folder


def merge_benchmarks(theirs: bytes, ours: bytes) -> bytes:
    """Two asv benchmarks.json files as one: every benchmark of either, ours winning."""
    merged = {**json.loads(theirs), **json.loads(ours)}
    return (json.dumps(merged, indent=4, sort_keys=True) + "\n").encode()


# What a result file holds per benchmark: asv's rows, and the durations beside them.
MERGED_KEYS = ("results", "durations")


def merge_results(theirs: bytes, ours: bytes) -> bytes:
    """Two asv result files of one machine, commit and environment as one: every benchmark
    of either, ours winning where both hold it. asv's own ``run`` adds to the file it finds
    but cannot merge two written apart (an open asv issue): the shards of one night each
    write the same file with their own benchmarks, and each lands whole beside the others
    (docs/explanation/continuous.md, "Shards")."""
    try:
        older, newer = json.loads(theirs), json.loads(ours)
    except ValueError as error:
        raise BadInput(f"a result file to merge is not JSON: {error}") from None
    for key in ("commit_hash", "env_name", "result_columns"):
        if key in older and key in newer and older[key] != newer[key]:
            raise BadInput(f"result files of different {key} cannot be merged")
    merged = {**older, **newer}
    for key in MERGED_KEYS:
        merged[key] = {**older.get(key, {}), **newer.get(key, {})}
    # Where one file holds it all, its bytes as they are: a file landed twice changes nothing.
    for data, content in ((newer, ours), (older, theirs)):
        if merged == {**data, **{key: data.get(key, {}) for key in MERGED_KEYS}}:
            return content
    return (json.dumps(merged, separators=(",", ":")) + "\n").encode()


def hardware_differences(stored: dict, described: dict) -> list[str]:
    return [
        f"{key} {stored.get(key)!r} there, {described.get(key)!r} here"
        for key in HARDWARE_KEYS
        if str(stored.get(key)) != str(described.get(key))
    ]
