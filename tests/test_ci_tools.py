"""The continuous-benchmarking scripts' logic, in-process and without asv runs: which
commits a nightly picks, how a benchmark name is resolved, what publish does to the site,
and the one-line errors on bad input. The real runs are in test_nightly.py and
test_pr_gate_bisect.py."""

from __future__ import annotations

import json
import platform
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tools import bisect_slowdown as bisect
from tools import nightly, publish
from tools.common import (
    ToolError,
    discovered_units,
    machine_result_files,
    register_machine,
)

from .conftest import REPO_ROOT
from .project_repo import ProjectRepo, isolated_env


@pytest.fixture
def small_repo(tmp_path) -> ProjectRepo:
    repo = ProjectRepo(tmp_path / "repo", isolated_env(tmp_path / "home"))
    repo.path.mkdir()
    repo.git("init", "-q", "-b", "main")
    for number in range(6):
        repo.commit(f"commit {number}")
    return repo


def write_result(results: Path, machine: str, commit: str, text: str | None = None) -> Path:
    path = results / machine / f"{commit[:8]}-env.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text if text is not None else json.dumps({"commit_hash": commit}))
    return path


def test_nightly_picks_the_newest_unbenchmarked_commits_up_to_the_limit(small_repo):
    newest_first = small_repo.git("rev-list", "HEAD").split()
    results = small_repo.path / ".asv" / "results"
    for commit in (newest_first[0], newest_first[2]):
        write_result(results, "m", commit)
    write_result(results, "other-machine", newest_first[1])  # another machine's: not ours
    picked = nightly.commits_to_run(small_repo.path, "m", "HEAD", 3)
    assert picked == [newest_first[1], newest_first[3], newest_first[4]]
    assert nightly.commits_to_run(small_repo.path, "other-machine", "HEAD", 1) == [newest_first[0]]


def test_the_machine_is_described_in_full_with_stable_graph_keys(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    register_machine("gha-cpu")
    described = json.loads((tmp_path / ".asv-machine.json").read_text())["gha-cpu"]
    assert set(described) == {"machine", "arch", "cpu", "num_cpu", "os", "ram"}
    assert described["machine"] == "gha-cpu" and described["cpu"]
    # No kernel version, no byte count: those change between runner images.
    assert described["os"] == platform.system()
    assert re.fullmatch(r"\d+GB", described["ram"])


def test_a_corrupt_result_file_is_named(tmp_path):
    good = write_result(tmp_path, "m", "a" * 40)
    bad = write_result(tmp_path, "m", "b" * 40, text='{"commit_hash": ')
    with pytest.raises(ToolError, match=re.escape(str(bad))):
        machine_result_files(tmp_path, "m")
    bad.write_text("[]")
    with pytest.raises(ToolError, match="no commit_hash"):
        machine_result_files(tmp_path, "m")
    bad.unlink()
    assert list(machine_result_files(tmp_path, "m")) == [good]


NAMES = [
    "bench_activation.Silu.time_silu",
    "bench_activation.Gelu.time_gelu",
    "bench_matmul.MatMul.time_matmul",
    "bench_matmul.MatMul.track_gflops",
]


def test_bisect_resolves_a_benchmark_or_lists_the_candidates():
    assert bisect.resolve_benchmark("Silu", NAMES) == NAMES[0]
    assert bisect.resolve_benchmark(NAMES[2], NAMES) == NAMES[2]
    with pytest.raises(ToolError, match=r"matches 2 benchmarks: .*time_matmul, .*track_gflops"):
        bisect.resolve_benchmark("MatMul", NAMES)
    with pytest.raises(ToolError, match=r"matches no benchmark; close: .*time_silu"):
        bisect.resolve_benchmark("bench_activation.Silu.time_slu", NAMES)
    with pytest.raises(ToolError, match="not a valid regex"):
        bisect.resolve_benchmark("time_(", NAMES)


def test_bisect_discovers_the_real_suites():
    units = discovered_units(REPO_ROOT)
    assert units["bench_activation.Silu.time_silu"] == "seconds"
    assert units["bench_matmul.MatMul.track_gflops"] == "GFLOP/s"
    assert all(name.startswith("bench_") for name in units)


def test_bisect_range_includes_the_good_commit(small_repo):
    newest_first = small_repo.git("rev-list", "HEAD").split()
    spec, commits = bisect.find_range(small_repo.path, newest_first[3], newest_first[0])
    assert spec == f"{newest_first[0]} ^{newest_first[3]}^"
    assert commits == newest_first[:4]
    # From the root commit, whose parent does not exist, the range is all history.
    _, commits = bisect.find_range(small_repo.path, newest_first[-1], newest_first[0])
    assert commits == newest_first
    with pytest.raises(ToolError, match="is not an ancestor of"):
        bisect.find_range(small_repo.path, newest_first[0], newest_first[3])


def asv_index_html() -> str:
    import asv

    return (Path(asv.__file__).parent / "www" / "index.html").read_text()


def test_the_legacy_page_loads_nothing_from_other_hosts(tmp_path):
    (tmp_path / "index.legacy.html").write_text(asv_index_html())
    publish.localize_legacy_page(tmp_path)
    html = (tmp_path / "index.legacy.html").read_text()
    loaded = re.findall(r'<(?:script|link)[^>]+(?:src|href)="([^"]+)"', html)
    assert [url for url in loaded if "://" in url] == []
    vendored = [url for url in loaded if url.startswith(publish.LEGACY_DIR)]
    assert len(vendored) == 10
    assert all((tmp_path / url).is_file() for url in vendored)
    assert "integrity=" not in html


def test_graph_index_is_completed_for_every_machine(tmp_path):
    index = {"benchmarks": {"a.A.time_x": {}, "a.A.time_y": {}, "a.A.time_never": {}}}
    (tmp_path / "index.json").write_text(json.dumps(index))
    m1, m2 = tmp_path / "graphs" / "machine-m1", tmp_path / "graphs" / "machine-m2"
    for folder, names in ((m1, ["a.A.time_x", "a.A.time_y"]), (m2, ["a.A.time_x"])):
        folder.mkdir(parents=True)
        for name in names:
            (folder / f"{name}.json").write_text("[[1, 2.0]]")
    assert publish.complete_graph_index(tmp_path) == ["a.A.time_never"]
    assert set(json.loads((tmp_path / "index.json").read_text())["benchmarks"]) == {
        "a.A.time_x",
        "a.A.time_y",
    }
    assert (m2 / "a.A.time_y.json").read_text() == "[]"
    assert (m1 / "a.A.time_y.json").read_text() == "[[1, 2.0]]"


@pytest.mark.parametrize(
    ("tool", "args", "message"),
    [
        ("nightly", ["--machine", "m", "--max-commits", "0"], "--max-commits must be at least 1"),
        ("pr_gate", ["HEAD", "HEAD", "--factor", "1.0"], "--factor must be above 1.0"),
        ("pr_gate", ["no-such-commit", "HEAD"], "git rev-parse --verify no-such-commit"),
        ("bisect_slowdown", ["HEAD", "HEAD", "NoSuchBench"], "'NoSuchBench' matches no benchmark"),
        ("publish", ["--no-fetch", "--site", "/nonexistent/site"], "no machine's results in"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tool, args, message, small_repo):
    (small_repo.path / "tools").symlink_to(REPO_ROOT / "tools")
    (small_repo.path / "benchmarks").symlink_to(REPO_ROOT / "benchmarks")
    (small_repo.path / ".asv" / "results").mkdir(parents=True)
    done = small_repo.tool(tool, *args, timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(f"{tool}: ") and message in line


CI_SCRIPTS = [
    "nightly",
    "publish",
    "pr_gate",
    "bisect_slowdown",
    "studies.noise_study",
    "studies.timer_crosscheck",
    "studies.detection_power",
    "studies.gpu_check",
]


@pytest.mark.parametrize("tool", CI_SCRIPTS)
def test_every_ci_script_has_help(tool):
    done = subprocess.run(
        [sys.executable, "-m", f"tools.{tool}", "--help"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and done.stdout.startswith("usage:")
