"""The instruction counts, for real under valgrind: every case of a commit in one
process, the same counts from two processes, and a skip saying why without valgrind. (The
PR gate failing on a planted count rise and naming the functions that grew:
test_pr_gate_bisect.py.)"""

from __future__ import annotations

import contextlib
import io
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch

from benchmarks import bench_instructions
from benchmarks._harness import callgrind, devices
from benchmarks._harness.twins import Counted, selected_cases
from benchmarks._names import kept_functions

pytestmark = [
    pytest.mark.timeout(1800),
    pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed"),
]

# Two ops, both of silu's variants, a dtype computed natively and one that may be
# emulated: two processes agreeing on these shows what every case would, and each case
# adds seconds under valgrind.
CASES = [
    case
    for case in selected_cases(Counted.rows, None)
    if case.key.startswith("silu/") or case.key == "matmul/mm/float32/contiguous/(32, 32, 32)"
]


HOST_FLAGS = set(devices.CPU_INFO.read_text().split())

BROKEN = callgrind.CountCase("silu", "functional", (-1, 4))  # torch refuses the shape


@dataclass(frozen=True)
class TwoCounts:
    first: dict
    second: dict
    kept: Path
    said: str  # what the counting printed on stderr


@pytest.fixture(scope="module")
def counted(tmp_path_factory) -> TwoCounts:
    """Two valgrind processes count the cases (a broken one among them), the second in
    the reverse order; the first keeps its function counts."""
    kept = tmp_path_factory.mktemp("callgrind")
    cases = [CASES[0], BROKEN, *CASES[1:]]
    said = io.StringIO()
    with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stderr(said):
        patch.setenv(callgrind.CALLGRIND_DIR_ENV, str(kept))
        patch.setenv("ASV_COMMIT", "first")
        first = callgrind.count_cases(cases)
        patch.setenv("ASV_COMMIT", "second")
        second = callgrind.count_cases(reversed(cases))
    return TwoCounts(first, second, kept, said.getvalue())


@pytest.mark.skipif("avx2" not in HOST_FLAGS, reason="this host has no AVX2")
def test_the_counts_run_valgrinds_cpu_not_the_hosts(counted):
    """valgrind presents its own CPU (AVX2, no AVX-512) to the program it runs, so torch
    picks the same kernels under it on an AVX-512 host as on an AVX2-only runner: the count
    floors studied on one hold on the other. On an AVX-512 host this fails if valgrind
    starts presenting the host's own instructions."""
    line = f"callgrind: torch ran its {callgrind.COUNTED_CPU} code under valgrind"
    assert counted.said.count(line) == 2, counted.said


def test_two_processes_count_every_case_the_same_in_any_order(counted):
    first = {case.key: counted.first[case.key] for case in CASES}
    second = {case.key: counted.second[case.key] for case in CASES}
    assert len(first) == len(CASES) >= 5
    assert all(isinstance(count, float) and count > 1000 for count in first.values()), first
    assert first == second  # to the instruction: nothing in the counting process varies
    release = f"torch-{torch.__version__.split('+')[0]}"
    kept = sorted(path.name for path in (counted.kept / "first" / release).glob("*.json"))
    assert len(kept) == len(CASES)
    assert kept_functions(counted.kept, "first", torch.__version__, CASES[0].key).exists()


def test_a_case_whose_counting_fails_fails_its_row_alone(counted):
    """The cases before and after it are counted (test above); it fails its own row."""
    failed = counted.first[BROKEN.key]
    assert isinstance(failed, callgrind.CountFailed) and "failed: RuntimeError" in failed.why
    with pytest.raises(RuntimeError, match="failed: RuntimeError"):
        Counted().count_of(counted.first, BROKEN, "cpu")  # asv records the row as failed


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
def test_valgrind_instruments_only_the_counted_cases_where_a_compiler_is_found(
    tmp_path, monkeypatch
):
    library = callgrind.instrumentation_switch(tmp_path)
    assert library is not None and library.exists()  # Debian's valgrind ships callgrind.h
    monkeypatch.setenv("CC", "no-such-compiler")
    assert callgrind.instrumentation_switch(tmp_path) is None  # instrumented from the start


def test_without_valgrind_every_count_row_skips_saying_why(monkeypatch):
    monkeypatch.setattr(callgrind.shutil, "which", lambda name: None)
    counts = bench_instructions.Silu().setup_cache()
    row = bench_instructions.Silu()
    case = next(iter(bench_instructions.Silu.cases))
    with pytest.raises(NotImplementedError, match="valgrind is not installed"):
        row.setup(counts, "cpu", case)
