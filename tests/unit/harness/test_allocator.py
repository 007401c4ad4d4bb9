"""The host allocator as a controlled variable: the tools start benchmark processes on
jemalloc, a process finds out what it runs on, and jemalloc gives a repeated output the
same block on every call (glibc's best fit can alternate two:
docs/explanation/measurement.md, "The allocator")."""

from __future__ import annotations

import ctypes.util
import json
import subprocess
import sys

import pytest

from benchmarks._harness import allocator
from benchmarks._names import ALLOCATOR_ENV, ALLOCATORS
from tests.support import REPO_ROOT
from tools._lib.asv.run import JEMALLOC_CONF, JEMALLOC_LIBRARY, allocator_environment
from tools._lib.base.cli import BadInput

# Run in a fresh process: which malloc serves it is fixed when it starts.
REPORT = """
import json, sys, torch
from benchmarks._harness import allocator
blocks = set()
for _ in range(12):
    out = torch.zeros(32, 512, 768)
    blocks.add(out.untyped_storage().data_ptr() >> 12)
    del out
print(json.dumps({"in_use": allocator.IN_USE, "blocks": len(blocks)}))
"""


def report(env: dict) -> tuple[dict, str]:
    done = subprocess.run(
        [sys.executable, "-c", REPORT],
        cwd=REPO_ROOT,
        env={**env, "PYTHONPATH": str(REPO_ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), done.stderr


def test_tools_and_harness_agree_on_the_names():
    assert (ALLOCATOR_ENV, ALLOCATORS) == (allocator.ALLOCATOR_ENV, allocator.ALLOCATORS)


def test_the_default_preloads_jemalloc_and_keeps_other_preloads():
    env = allocator_environment({"LD_PRELOAD": "libother.so libjemalloc.so.1", "X": "1"})
    assert env["LD_PRELOAD"] == f"{JEMALLOC_LIBRARY} libother.so"
    assert env["MALLOC_CONF"] == JEMALLOC_CONF and env["X"] == "1"
    assert allocator.without_preload(env) == {
        "LD_PRELOAD": "libother.so",
        "X": "1",
        ALLOCATOR_ENV: "fixed",
    }


@pytest.mark.parametrize("choice", ["fixed", "glibc"])
def test_glibc_choices_preload_nothing(choice):
    env = {ALLOCATOR_ENV: choice, "PATH": "/bin"}
    assert allocator_environment(env) == env


def test_a_bad_name_or_a_missing_jemalloc_is_bad_input(monkeypatch):
    with pytest.raises(BadInput, match="choose one of jemalloc, fixed, glibc"):
        allocator_environment({ALLOCATOR_ENV: "mimalloc"})
    monkeypatch.setattr(ctypes.util, "find_library", lambda name: None)
    with pytest.raises(BadInput, match=r"tools/dev.sh setup installs it.*apt install libjemalloc2"):
        allocator_environment({})


def test_a_process_started_by_the_tools_runs_on_jemalloc_with_one_block_per_output():
    measured, _ = report(allocator_environment({"PATH": "/usr/bin:/bin"}))
    assert measured == {"in_use": "jemalloc", "blocks": 1}


def test_without_jemalloc_a_benchmark_process_says_so_and_fixes_glibc():
    # ASV_COMMIT: asv started it (a plain `asv run`, not through the tools).
    measured, stderr = report({"PATH": "/usr/bin:/bin", "ASV_COMMIT": "0" * 40})
    assert measured["in_use"] == "fixed"
    assert "jemalloc is not preloaded" in stderr
    measured, stderr = report({"PATH": "/usr/bin:/bin", ALLOCATOR_ENV: "glibc"})
    assert measured["in_use"] == "glibc" and stderr == ""


def test_the_documented_plain_asv_environment_is_the_tools_one():
    """docs/how-to/run-asv-by-hand.md tells a user running asv by hand what to export."""
    text = (REPO_ROOT / "docs" / "how-to" / "run-asv-by-hand.md").read_text()
    assert f"export LD_PRELOAD={JEMALLOC_LIBRARY} MALLOC_CONF={JEMALLOC_CONF}\n" in text
