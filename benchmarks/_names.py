"""The names the harness and the tools both use: the environment variables one sets for the
other's processes, and the unit of the instruction counts. Standard library only, and
nothing but names: the tools import it with a bare interpreter (the results push), the
harness inside asv's benchmark processes (docs/reference/environment.md lists them all).
"""

# asv's --bench regexes of a run, as a JSON list: asv does not pass them to a
# ``setup_cache``, so the tools hand them to the count twins, which count only the cases
# of the selected rows (unset: every case).
SELECTION_ENV = "TENSOROPS_BENCH"
# The malloc a benchmark process runs on (benchmarks/_harness/allocator.py says why).
ALLOCATOR_ENV = "TENSOROPS_ALLOCATOR"
ALLOCATORS = ("jemalloc", "fixed", "glibc")
DEFAULT_ALLOCATOR = "jemalloc"
# Where the counting run keeps each case's function counts, per commit: the "why" of a
# count that grew.
CALLGRIND_DIR_ENV = "TENSOROPS_CALLGRIND_DIR"
CALLGRIND_DIR = ".asv/callgrind"  # from the repository root, where the tools put it
# Threads of the timed calls (benchmarks/_harness/controls.py; one unless set).
THREADS_ENV = "TENSOROPS_THREADS"
# The unit of every instruction-count row: deterministic, so judged at its own factor.
COUNT_UNIT = "instructions"
