"""The names the harness and the tools both use: the environment variables one sets for the
other's processes, the unit of the instruction counts, and where the counts' functions are
kept. Standard library only, and nothing but names: the tools import it with a bare
interpreter (the results push), the harness inside asv's benchmark processes
(docs/reference/environment.md lists them all).
"""

import re
from pathlib import Path

# asv's --bench regexes of a run, as a JSON list: asv does not pass them to a
# ``setup_cache``, so the tools hand them to the count twins, which count only the cases
# of the selected rows (unset: every case).
SELECTION_ENV = "TENSOROPS_BENCH"
# The malloc a benchmark process runs on (benchmarks/_harness/allocator.py says why).
ALLOCATOR_ENV = "TENSOROPS_ALLOCATOR"
ALLOCATORS = ("jemalloc", "fixed", "glibc")
DEFAULT_ALLOCATOR = "jemalloc"
# Where the counting run keeps each case's function counts, per commit and torch release:
# the "why" of a count that grew.
CALLGRIND_DIR_ENV = "TENSOROPS_CALLGRIND_DIR"
CALLGRIND_DIR = ".asv/callgrind"  # from the repository root, where the tools put it
# A folder of the run's own where its benchmark processes share what one measured for the
# others: the "% of peak" divisor (benchmarks/_harness/calibration.py) and each time_
# row's samples, which its throughput tracks read (benchmarks/_harness/derived.py). The
# tools make a private one for each asv run and remove it after; unset, each process
# measures for itself.
RUN_DIR_ENV = "TENSOROPS_RUN_DIR"
# Threads of the timed calls (benchmarks/_harness/controls.py; one unless set).
THREADS_ENV = "TENSOROPS_THREADS"
# The unit of every instruction-count row: deterministic, so judged at its own factor.
COUNT_UNIT = "instructions"


def kept_functions(folder: Path, commit: str, torch_version: str, case_key: str) -> Path:
    """The file of one counted case's function counts: by commit, then torch release (a
    local build's suffix, ``+cpu``, left out: asv's matrix pins the release)."""
    release = torch_version.split("+", 1)[0]
    name = re.sub(r"[^\w.-]+", "_", case_key) + ".json"
    return Path(folder) / commit / f"torch-{release}" / name
