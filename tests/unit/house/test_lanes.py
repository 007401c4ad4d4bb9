"""The lanes runner's promise that a slow module keeps to one worker, so its fixtures
build their histories once (tests/support/lanes.py): with the modules named on the
command line, as the slow lane's first part names them, every test is named by its
module's group, which is what xdist's loadgroup keeps together."""

from __future__ import annotations

import re
import subprocess
import sys

from tests.support import REPO_ROOT

MODULE = "tests/integration/test_instruction_counts.py"
CHEAP = "valgrind_instruments or without_valgrind"  # seconds: no valgrind run


def test_a_module_named_on_the_command_line_keeps_to_its_group():
    command = [
        "-n",
        "2",
        "--dist",
        "loadgroup",
        MODULE,
        "-k",
        CHEAP,
        "-v",
        "-p",
        "no:cacheprovider",
    ]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", *command],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    ran = re.findall(r"^\[(gw\d)\] .*?(PASSED|SKIPPED) (\S+)", done.stdout, re.M)
    assert len(ran) == 2, done.stdout[-2000:] + done.stderr[-2000:]
    assert all(name.endswith("@test_instruction_counts") for _, _, name in ran), ran
    assert len({worker for worker, _, _ in ran}) == 1, ran
