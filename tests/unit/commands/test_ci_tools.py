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

from tests.support import REPO_ROOT
from tests.support.project_repo import ProjectRepo, isolated_env
from tools import nightly
from tools._lib.asv.machines import register_machine
from tools._lib.asv.matrix import Release
from tools._lib.asv.results import machine_result_files
from tools._lib.asv.suites import discovered_units
from tools._lib.asv.torch_builds import write_manifest
from tools._lib.base.cli import LOG_DIR_ENV, ToolError, run_main
from tools._lib.store import site
from tools._lib.triage import bisection as bisect


@pytest.fixture
def small_repo(tmp_path) -> ProjectRepo:
    repo = ProjectRepo(tmp_path / "repo", isolated_env(tmp_path / "home"))
    repo.path.mkdir()
    repo.git("init", "-q", "-b", "main")
    for number in range(6):
        repo.commit(f"commit {number}")
    return repo


def write_result(
    results: Path, machine: str, commit: str, text: str | None = None, env: str = "env"
) -> Path:
    path = results / machine / f"{commit[:8]}-{env}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {"commit_hash": commit, "env_name": env}
    path.write_text(text if text is not None else json.dumps(data))
    return path


def test_nightly_picks_the_newest_unbenchmarked_commits_up_to_the_limit(small_repo):
    newest_first = small_repo.git("rev-list", "HEAD").split()
    results = small_repo.path / ".asv" / "results"
    for commit in (newest_first[0], newest_first[2]):
        write_result(results, "m", commit)
    write_result(results, "other-machine", newest_first[1])  # another machine's: not ours
    picked = nightly.commits_to_run(small_repo.path, "m", "HEAD", 3, ["env"])
    assert picked == [newest_first[1], newest_first[3], newest_first[4]]
    others = nightly.commits_to_run(small_repo.path, "other-machine", "HEAD", 1, ["env"])
    assert others == [newest_first[0]]


def test_a_commit_measured_under_one_release_is_run_for_another(small_repo):
    newest_first = small_repo.git("rev-list", "HEAD").split()
    results = small_repo.path / ".asv" / "results"
    for commit in newest_first:
        write_result(results, "m", commit, env="torch-a")
    write_result(results, "m", newest_first[1], env="torch-b")
    assert nightly.commits_to_run(small_repo.path, "m", "HEAD", 5, ["torch-a"]) == []
    picked = nightly.commits_to_run(small_repo.path, "m", "HEAD", 2, ["torch-a", "torch-b"])
    assert picked == [newest_first[0], newest_first[2]]


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


def test_graph_index_is_completed_for_every_machine(tmp_path):
    index = {"benchmarks": {"a.A.time_x": {}, "a.A.time_y": {}, "a.A.time_never": {}}}
    (tmp_path / "index.json").write_text(json.dumps(index))
    m1, m2 = tmp_path / "graphs" / "machine-m1", tmp_path / "graphs" / "machine-m2"
    for folder, names in ((m1, ["a.A.time_x", "a.A.time_y"]), (m2, ["a.A.time_x"])):
        folder.mkdir(parents=True)
        for name in names:
            (folder / f"{name}.json").write_text("[[1, 2.0]]")
    assert site.complete_graph_index(tmp_path) == ["a.A.time_never"]
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
        ("nightly", ["--machine", "../m"], "not a machine name"),
        ("nightly", ["--machine", "m", "--budget-minutes", "nan"], "must be a positive number"),
        ("pr_gate", ["HEAD~1", "HEAD", "--factor", "1.0"], "must be a finite number above 1.0"),
        ("pr_gate", ["HEAD~1", "HEAD", "--factor", "nan"], "must be a finite number above 1.0"),
        ("pr_gate", ["HEAD~1", "HEAD", "--factor", "inf"], "must be a finite number above 1.0"),
        ("pr_gate", ["HEAD", "HEAD"], "are the same commit"),
        ("pr_gate", ["no-such-commit", "HEAD"], "'no-such-commit' is not a commit"),
        ("pr_gate", ["HEAD"], "the following arguments are required: head"),
        ("bisect_slowdown", ["HEAD~1", "HEAD", "NoSuchBench"], "'NoSuchBench' matches no bench"),
        ("bisect_slowdown", ["HEAD", "HEAD~1", "Silu.time_silu"], "is not an ancestor of"),
        ("publish", ["--no-fetch", "--site", "/nonexistent/site"], "no machine's results in"),
        ("publish", ["--no-fetch", "--site", "."], "would empty the repository"),
        ("publish", ["--no-fetch", "--site", ".asv/results"], "would empty the repository"),
        ("publish", ["--site", "site", "--days", "-1"], "--days -1: give 0 (every commit)"),
        ("push_results", ["no-such-outbox"], "is not an outbox of tools.nightly"),
    ],
)
def test_bad_input_is_one_line_and_exit_4(tool, args, message, small_repo):
    (small_repo.path / "tools").symlink_to(REPO_ROOT / "tools")
    (small_repo.path / "benchmarks").symlink_to(REPO_ROOT / "benchmarks")
    (small_repo.path / ".asv" / "results").mkdir(parents=True)
    done = small_repo.tool(tool, *args, timeout=120)
    assert done.returncode == 4, done.stdout + done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(f"{tool}: ") and message in line


def test_publish_never_empties_a_folder_it_did_not_write(small_repo):
    (small_repo.path / "tools").symlink_to(REPO_ROOT / "tools")
    (small_repo.path / "benchmarks").symlink_to(REPO_ROOT / "benchmarks")
    site = small_repo.path.parent / "site"
    site.mkdir()
    (site / "notes.txt").write_text("someone's file\n")
    done = small_repo.tool("publish", "--no-fetch", "--site", str(site), timeout=120)
    assert done.returncode == 4 and "holds files this tool did not publish" in done.stderr
    assert (site / "notes.txt").read_text() == "someone's file\n"


def test_a_corrupt_asv_machine_file_is_bad_input_not_a_regression(small_repo):
    (small_repo.path / "tools").symlink_to(REPO_ROOT / "tools")
    (small_repo.path / "benchmarks").symlink_to(REPO_ROOT / "benchmarks")
    machine_file = Path(small_repo.env["HOME"]) / ".asv-machine.json"
    machine_file.write_text('{"pr-gate": ')
    done = small_repo.tool("pr_gate", "HEAD~1", "HEAD", timeout=120)
    assert done.returncode == 4, done.stdout + done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert "asv's machine file" in line and "Traceback" not in done.stderr


def test_an_unexpected_error_is_one_line_status_3_and_a_traceback_in_a_log(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv(LOG_DIR_ENV, str(tmp_path))

    def broken() -> int:
        raise KeyError("surprise")

    with pytest.raises(SystemExit) as exited:
        run_main("probe", broken)
    assert exited.value.code == 3
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("probe: unexpected error: KeyError: 'surprise' (traceback in ")
    (log,) = tmp_path.glob("probe-*.log")
    assert "Traceback" in log.read_text() and "def broken" not in line


CI_SCRIPTS = [
    "nightly",
    "push_results",
    "publish",
    "pr_gate",
    "bisect_slowdown",
    "floors",
    "triage",
    "file_issues",
    "pr_comment",
    "studies.noise_study",
    "studies.estimates",
    "studies.antagonist_alone",
    "studies.timer_crosscheck",
    "studies.detection_power",
    "studies.gpu_check",
    "studies.late_faults",
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


def test_a_failing_manifest_probe_is_recorded_and_costs_nothing(tmp_path, capsys):
    """The night's results must not depend on the manifest: a probe that fails is noted."""
    broken = Release("2.13.0", "broken-env", tmp_path / ".asv" / "env" / "0123")
    broken.python.parent.mkdir(parents=True)
    broken.python.write_text("#!/bin/sh\necho 'no torch here' >&2\nexit 1\n")
    broken.python.chmod(0o755)
    manifest = tmp_path / ".asv" / "results" / "m" / "manifest.txt"
    manifest.parent.mkdir(parents=True)
    manifest.write_text("# written before\n\n[other-env]\ntorch: 2.14.1\n")
    write_manifest(tmp_path, "m", [broken])
    written = manifest.read_text()
    assert "[broken-env]" in written and "probe failed (1): no torch here" in written
    assert "pip freeze failed (1)" in written
    assert "manifest of broken-env is incomplete" in capsys.readouterr().err
    # Another release's section, not probed this run, is kept as it was.
    assert "[other-env]\ntorch: 2.14.1" in written and "written before" not in written


def test_commits_lacking_a_benchmark_of_the_suite_are_measured_again(small_repo):
    newest_first = small_repo.git("rev-list", "HEAD").split()
    results = small_repo.path / ".asv" / "results"
    for commit, benchmarks in ((newest_first[0], ["a", "b"]), (newest_first[1], ["a"])):
        write_result(
            results,
            "m",
            commit,
            json.dumps(
                {"commit_hash": commit, "env_name": "env", "results": {n: [] for n in benchmarks}}
            ),
        )
    picked = nightly.commits_to_run(small_repo.path, "m", "HEAD", 3, ["env"], {"a", "b"})
    assert picked == newest_first[1:4]  # the one measured only for "a" comes first
    assert nightly.commits_to_run(small_repo.path, "m", "HEAD", 1, ["env"]) == [newest_first[2]]
