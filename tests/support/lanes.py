"""The test command's two lanes, each timed against its budget: the fast lane (tests/unit:
no asv environment, valgrind or browser) and the slow lane (tests/integration: asv, the
tools for real, the browser, and every benchmark row once). A lane that passes its budget
by more than half fails with a line that says so, before creep blocks a landing; the 25
slowest tests of both are listed at the end.

    python -m tests.support.lanes      (tools/dev.sh test with no options; .ci/run)

The slow lane runs in two parts, each on both cores. First, every row once (each row is
one thread) and the modules that build their own histories: the nightly, a bad night, the
triage, the instruction counts, asv end to end, the bench command and the GPU check's asv
part; each module stays on one core (its fixtures build histories once), the longest
first. Then the gate with bisect on one core and the releases on the other: the releases'
torch install and two environments, beside every row's large inputs, had taken more than
twice as long (docs/reference/tests.md). The verdicts the gate and the triage ask of a
no-op are taken by alternation on one core (tools/_lib/measure/alternation.py), whose two
sides meet a neighbour on the other core alike. Each worker's asv environments are built
once for all the runs (ASV_ENVS_ENV), not once per part.
The JUnit reports stay in test-artifacts/lanes/ for whoever wants every test's time.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from pathlib import Path

# Seconds of pytest per lane on the CI machine kind (2 cores), whose hosts include
# AVX2-only ones that emulate bfloat16: docs/reference/tests.md, "Budgets".
BUDGETS = {"fast": 180, "slow": 1150}
OVER_BUDGET = 1.5
SLOWEST = 25
INTEGRATION = "tests/integration"
# The slow modules run beside one another (see the docstring), the longest first: xdist
# hands out whole modules in this order (not reordered by their number of tests, its
# default), and the rows' many short tests fill in around them.
PARALLEL = tuple(
    f"{INTEGRATION}/{name}.py"
    for name in (
        "test_nightly",
        "test_bad_night",
        "test_triage",
        "test_instruction_counts",
        "test_asv_e2e",
        "test_dev_bench",
        "test_gpu_check_asv",
        "test_every_row",
    )
)
# A module (or the modules of one shared fixture) keeps to one worker: conftest's groups.
BOTH_CORES = ("-n", "2", "--dist", "loadgroup", "--no-loadscope-reorder")
REPORTS = Path("test-artifacts") / "lanes"
# Where tests/conftest.py's shared_asv_env keeps each worker's asv environments for every
# run of the lanes (a virtualenv with torch takes about a minute to build on 2 cores).
ASV_ENVS_ENV = "TENSOROPS_TEST_ASV_ENVS"


@dataclass(frozen=True)
class Run:
    lane: str
    arguments: tuple[str, ...]


RUNS = (
    Run("fast", ("-m", "not slow", "-n", "2")),
    Run("slow", (*PARALLEL, *BOTH_CORES)),
    Run("slow", ("-m", "slow", *(f"--ignore={path}" for path in PARALLEL), *BOTH_CORES)),
)


def slowest(reports: list[Path], count: int = SLOWEST) -> list[tuple[float, str]]:
    """The ``count`` slowest tests of the JUnit reports, seconds first."""
    found = []
    for report in reports:
        if report.exists():
            for case in ElementTree.parse(report).iter("testcase"):
                found.append(
                    (float(case.get("time", 0)), f"{case.get('classname')}::{case.get('name')}")
                )
    return sorted(found, reverse=True)[:count]


def main() -> int:
    spent = dict.fromkeys(BUDGETS, 0.0)
    failed = []
    shutil.rmtree(REPORTS, ignore_errors=True)
    REPORTS.mkdir(parents=True)
    reports = []
    with tempfile.TemporaryDirectory(prefix="tensorops-asv-envs-") as envs:
        for number, run in enumerate(RUNS):
            reports.append(REPORTS / f"{number}-{run.lane}.xml")
            command = [sys.executable, "-m", "pytest", *run.arguments]
            print(f"lanes: {run.lane} lane: {' '.join(command[3:])}", flush=True)
            begun = time.monotonic()
            done = subprocess.run(
                [*command, f"--junitxml={reports[-1]}"], env={**os.environ, ASV_ENVS_ENV: envs}
            )
            if done.returncode != 0:
                failed.append(run.lane)
            spent[run.lane] += time.monotonic() - begun
    print(f"\nlanes: the {SLOWEST} slowest tests (every test's time: {REPORTS}/)")
    for seconds, name in slowest(reports):
        print(f"{seconds:8.1f} s  {name}")
    print()
    for lane, seconds in spent.items():
        print(f"lanes: {lane} lane: {seconds:.0f} s of pytest (budget {BUDGETS[lane]} s)")
    over = [lane for lane, seconds in spent.items() if seconds > OVER_BUDGET * BUDGETS[lane]]
    for lane in over:
        print(
            f"lanes: the {lane} lane took {spent[lane]:.0f} s, more than {OVER_BUDGET}x its "
            f"budget of {BUDGETS[lane]} s: find what grew (the slowest tests above)"
        )
    if failed:
        print(f"lanes: tests failed in the {' and '.join(sorted(set(failed)))} lane")
    return 1 if failed or over else 0


if __name__ == "__main__":
    sys.exit(main())
