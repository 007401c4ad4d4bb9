"""The instruction counts, for real under valgrind: every case of a commit in one
process, the same counts from two processes, a skip saying why without valgrind, and a PR
gate that fails on a planted count rise and names the functions that grew.

About four minutes on 2 cores (valgrind runs torch's import once per counting process).
"""

from __future__ import annotations

import re
import shutil

import pytest

from benchmarks import bench_instructions
from benchmarks._harness import callgrind
from benchmarks._harness.twins import Counted, selected_cases
from tests.support.project_repo import isolated_env, make_project_repo
from tools.common import row_selection

pytestmark = [
    pytest.mark.timeout(1800),
    pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed"),
]

CASES = [
    case
    for case in selected_cases(Counted.rows, None)
    if case.key.startswith(("silu/", "matmul/mm/"))
]


def test_two_processes_count_every_case_the_same_in_any_order(monkeypatch, tmp_path):
    monkeypatch.setenv(callgrind.FUNCTIONS_DIR_ENV, str(tmp_path))
    monkeypatch.setenv("ASV_COMMIT", "first")
    first = callgrind.count_cases(CASES)
    monkeypatch.setenv("ASV_COMMIT", "second")
    second = callgrind.count_cases(reversed(CASES))
    assert len(first) == len(CASES) >= 5
    assert all(isinstance(count, float) and count > 1000 for count in first.values()), first
    assert first == second  # to the instruction: nothing in the counting process varies
    kept = sorted(path.name for path in (tmp_path / "first").glob("*.json"))
    assert len(kept) == len(CASES)


def test_a_case_whose_counting_fails_fails_its_row_alone():
    broken = callgrind.CountCase("silu", "functional", (-1, 4))  # torch refuses the shape
    counts = callgrind.count_cases([broken, CASES[0]])
    assert isinstance(counts[CASES[0].key], float) and counts[CASES[0].key] > 1000
    failed = counts[broken.key]
    assert isinstance(failed, callgrind.CountFailed) and "failed: RuntimeError" in failed.why
    with pytest.raises(RuntimeError, match="failed: RuntimeError"):
        Counted().count_of(counts, broken, "cpu")  # asv records the row as failed


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


SILU = '    """F.silu: one fused kernel."""\n    return F.silu(x)\n'


def plant_cumsum(root) -> None:
    """silu's functional variant also takes a cumulative sum it throws away."""
    source = root / "src" / "tensorops" / "activation.py"
    text = source.read_text()
    assert SILU in text, "silu's functional variant changed; update the plant"
    source.write_text(
        text.replace(SILU, SILU.replace("    return", "    torch.cumsum(x, -1)\n    return"))
    )


def test_the_gate_names_the_functions_that_grew_on_a_planted_count_rise(tmp_path, shared_asv_env):
    twin = next(c for c in bench_instructions.Silu.cases if c.startswith("functional float32"))
    row = f"bench_instructions.Silu.track_instructions('cpu', {twin!r})"
    repo = make_project_repo(
        tmp_path / "repo",
        isolated_env(tmp_path / "home"),
        shared_asv_env,
    )
    base = repo.git("rev-parse", "HEAD")
    head = repo.commit("silu also takes a cumulative sum", plant_cumsum)
    summary = tmp_path / "summary.md"
    done = repo.tool(
        "pr_gate", base, head, "--summary-file", str(summary), "--", "--bench", row_selection(row)
    )
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-2000:]
    text = summary.read_text()
    assert "| slower |" in text and row in text
    why = text.split("### Why the instruction counts grew")[1]
    grown = re.findall(r"^\| \+[\d,.]+ \| `(.+)` \|$", why, re.M)
    assert grown and any("cumsum" in function for function in grown[:15]), grown
