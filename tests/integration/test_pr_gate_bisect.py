"""The PR gate and bisect, run for real on clones of the shared planted history: a no-op
passes the gate, the planted 2x slowdown fails it with the regression message, its count
twin's rise names the functions that grew, a raising benchmark fails it with the failure
message, and bisect names the planted commit. (The triage bisects the same history over
its whole range: test_triage.py; the checks' logic on scripted measurements:
tests/unit/triage/test_bisection.py.)"""

from __future__ import annotations

import re

import pytest

from tests.support.planted import COUNT_ROW, ROW, selection
from tests.support.project_repo import clone_project_repo, isolated_env
from tools._lib.verdict.markdown import VERDICTS

pytestmark = pytest.mark.timeout(1800)


@pytest.fixture(scope="module")
def clone(tmp_path_factory, planted_history, shared_asv_env):
    root = tmp_path_factory.mktemp("gate")
    repo = clone_project_repo(
        planted_history.remote, root / "repo", isolated_env(root / "home"), shared_asv_env
    )
    repo.git("fetch", "-q", "origin", "broken:broken")
    return repo, root


def gate(repo, base: str, head: str, *rows: str, summary=None, deep=False):
    """The gate on ``rows``; in the alternation's own rounds unless ``deep`` (16 rounds a
    timed row, as a selection short of every row asked for gets by default: one test pays
    for it)."""
    extra = ["--summary-file", str(summary)] if summary else []
    extra += [] if deep else ["--budget-minutes", "0.01"]
    return repo.tool("pr_gate", base, head, *extra, "--", "--bench", selection(*rows))


def test_a_no_op_commit_passes(clone, planted_history):
    """A comment in logsumexp's variant: selected by the map traced in the asv environment
    (its row, of the two asked for: the other runs another variant), measured, and passed.
    (The count twin's selection by the same map: the planted slowdown's test, which
    counts it; a count under valgrind costs most of a minute a commit.)"""
    repo, root = clone
    summary = root / "noop-summary.md"
    manual = ROW.replace("'functional'", "'manual'")
    done = gate(
        repo,
        planted_history.commits[0],
        planted_history.noop,
        ROW,
        manual,
        summary=summary,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert f"pr_gate: {VERDICTS[0]}" in done.stdout
    assert "pr_gate: measuring 1 of 2 rows" in done.stdout
    text = summary.read_text()
    why = "`a changed line in its body: the rows that ran it`"
    assert f"| `src/tensorops/reduction.py: logsumexp` | {why} | 1: " in text
    assert re.search(r"\| Change +\| Before", done.stdout)  # no step summary: stdout
    assert re.search(r"remeasure: .*time_logsumexp.*: [01]\.\d+x \(", done.stdout)


def test_the_planted_slowdown_fails_and_its_count_names_the_functions_that_grew(
    clone, planted_history
):
    repo, root = clone
    summary = root / "summary.md"
    # The manual variant's row, which the plant does not reach, keeps the selection short
    # of every row asked for: a small selection is measured deeply (a whole one, as the
    # whole-tier gate measures it).
    manual = ROW.replace("'functional'", "'manual'")
    done = gate(
        repo,
        planted_history.before_plant,
        planted_history.planted,
        ROW,
        COUNT_ROW,
        manual,
        summary=summary,
        deep=True,
    )
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-2000:]
    assert f"pr_gate: {VERDICTS[1]}" in done.stdout
    text = summary.read_text()
    assert text.startswith(f"## Benchmarks: {VERDICTS[1]}")
    slower = [line for line in text.splitlines() if line.startswith("| slower")]
    timed = [line for line in slower if "time_logsumexp" in line]
    assert timed and re.search(r"\| [12]\.\d{3} \(", timed[0]), slower
    assert re.search(r"\| \d+ \(16\) \|", timed[0]), timed[0]  # its depth: 16 rounds
    assert "each in 16 rounds (process pairs)" in text
    assert [line for line in slower if "track_instructions" in line], slower
    why = text.split("### Why the instruction counts grew")[1]
    grown = re.findall(r"^\| \+[\d,.]+ \| `(.+)` \|$", why, re.M)
    # logsumexp is an exp, a sum and a log per row: its kernels are the ones that grew.
    assert grown and any(re.search(r"exp|sum", f, re.I) for f in grown[:15]), grown


def test_a_raising_benchmark_fails_with_the_failure_message(clone, planted_history):
    repo, _ = clone
    silu = "bench_activation.Silu.time_silu('cpu', 'float32', (32, 512, 768), 'functional')"
    done = gate(repo, planted_history.commits[-1], "broken", silu)
    assert done.returncode == 2, done.stdout[-3000:] + done.stderr[-2000:]
    assert f"pr_gate: {VERDICTS[2]}" in done.stdout


def test_an_op_that_raises_in_its_warm_up_fails_the_gate_named(clone, planted_history):
    """An IndexError in the op's own call is a failure at the head, not asv's skip: the
    row, measured at the base, is named, and the gate does not pass."""
    repo, root = clone
    gelu = "bench_activation.Gelu.time_gelu('cpu', 'float32', (32, 512, 768), 'exact')"
    tanh = gelu.replace("'exact'", "'tanh'")
    summary = root / "gelu-summary.md"
    done = gate(repo, planted_history.commits[-1], "broken", gelu, tanh, summary=summary)
    assert done.returncode == 2, done.stdout[-3000:] + done.stderr[-2000:]
    text = summary.read_text()
    section = text.split("### Measured at the base, not at the head\n\n")[1].split("\n\n")[0]
    (line,) = [line for line in section.splitlines() if "time_gelu" in line]
    assert "'exact'" in line and "failed at the head" in line, line


def test_bisect_names_the_planted_commit(clone, planted_history):
    repo, _ = clone
    good, bad = planted_history.before_plant, planted_history.planted
    done = repo.tool(
        "bisect_slowdown",
        good,
        bad,
        "LogSumExp.time_logsumexp",
        "--params",
        "'float32'.*'functional'",
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    guilty = planted_history.planted
    assert re.search(rf"guilty commit: {guilty[:12]} 'commit \d: logsumexp does more'", done.stdout)
    (ratio,) = re.findall(rf"at {good[:12]} -> .* at {guilty[:12]} \(([\d.]+)x\)", done.stdout)
    assert float(ratio) > 1.5
