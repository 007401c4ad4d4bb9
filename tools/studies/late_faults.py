"""Which rows still take fresh pages after the warm-up? Page faults of each timed call.

    python -m tools.studies.late_faults [--calls 10] [--rows REGEX] [--quiet-calls N]

Every CPU time row of the default suite (or those ``--rows`` matches), one after another
in this one process, as asv runs a benchmark's rows: the harness prepares the row (inputs,
warm-up), then each of ``--calls`` calls is counted for minor page faults (``getrusage``).
A fault after the warm-up is the heap growing to a new high-water mark: first touches,
about 1.5 µs per 4 KiB page on the 2-core CI VM. ``--quiet-calls`` sets how many calls in
a row without a fault end the warm-up (the harness's ``QUIET_CALLS``), to compare rules.
Prints each row that faulted with its per-call counts, then how many rows faulted.
docs/explanation/measurement.md, "The warm-up".
"""

from __future__ import annotations

import re

from tools._lib.base.cli import ArgumentParser, BadInput, run_main


def late_faults(rows, calls: int) -> dict[str, list[int]]:
    """Each row's page faults per timed call after the harness's ``prepare``."""
    from benchmarks._harness.allocator import page_faults
    from benchmarks._harness.controls import controlled, controls_from_env
    from benchmarks._harness.prepare import prepare

    counted = {}
    for row in rows:
        with controlled(controls_from_env()):
            prepared = prepare(row.op, row.variant, backward=row.backward, **row.spec)
            faults = []
            for _ in range(calls):
                before = page_faults()
                prepared.call()
                faults.append(page_faults() - before)
        del prepared  # its tensors go back to the heap before the next row, as in asv
        counted[row.label] = faults
        if any(faults):
            print(f"{row.label}: {faults}", flush=True)
    return counted


def main() -> int:
    parser = ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=10)
    parser.add_argument("--rows", default="", help="regex of the rows to count (default: all)")
    parser.add_argument("--quiet-calls", type=int, help="calls without a fault that end warm-up")
    args = parser.parse_args()
    if args.calls < 1 or (args.quiet_calls is not None and args.quiet_calls < 1):
        raise BadInput("--calls and --quiet-calls must be at least 1")
    try:
        wanted = re.compile(args.rows)
    except re.error as error:
        raise BadInput(f"--rows {args.rows!r} is not a valid regex: {error}") from None
    from benchmarks._harness import warmup
    from tools.studies.plants import time_rows

    if args.quiet_calls is not None:
        warmup.QUIET_CALLS = args.quiet_calls
    rows = [row for row in time_rows() if wanted.search(row.label)]
    if not rows:
        raise BadInput(f"--rows {args.rows!r} matches no CPU time row of the default suite")
    counted = late_faults(rows, args.calls)
    faulted = sum(1 for faults in counted.values() if any(faults))
    print(f"late_faults: {faulted} of {len(counted)} rows faulted after the warm-up")
    return 0


if __name__ == "__main__":
    run_main("late_faults", main)
