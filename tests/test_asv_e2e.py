"""End to end: asv builds tensorops per commit in a virtualenv, benchmarks three commits
of a temporary clone, and publishes a site with a graph point per commit.

This is the slow test (about two minutes on 2 cores, mostly building the env).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import REPO_ROOT

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1500)]

MACHINE = "e2e-machine"
SUBSET = r"bench_matmul\.MatMul\.time_matmul|bench_creation\.Zeros"

# SetupProbe counts setup calls and timed calls to a file, to check how often asv_runner
# runs setup; ThreadsProbe reports the thread count a benchmark process really runs with.
SETUP_PROBE = """
import os

import torch

from .harness import OpBenchmark


class ThreadsProbe(OpBenchmark):
    op = "matmul"
    variant = "mm"
    params = [["cpu"], [(8, 8, 8)]]
    param_names = ["device", "shape"]

    def track_threads(self, device, shape):
        return float(torch.get_num_threads())


class SetupProbe:
    number = 5
    repeat = 4
    rounds = 1
    warmup_time = 0.0

    def _count(self, kind):
        with open(os.environ["SETUP_PROBE_LOG"], "a") as log:
            log.write(kind + "\\n")

    def setup(self):
        self._count("setup")

    def time_probe(self):
        self._count("call")
"""


def run(*args: str, cwd: Path, env: dict, timeout: float = 900) -> subprocess.CompletedProcess:
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, (
        f"{' '.join(args)} failed:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    )
    return done


ASV = str(Path(sys.executable).with_name("asv"))


def asv_on_head(repo: Path, env: dict, bench: str, *options: str) -> None:
    run(ASV, "run", "--machine", MACHINE, "-b", bench, *options, "HEAD^!", cwd=repo, env=env)


def result_row(data: dict, benchmark: str) -> dict:
    return dict(zip(data["result_columns"], data["results"][benchmark], strict=False))


def project_files() -> list[str]:
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return [name for name in listed.stdout.splitlines() if (REPO_ROOT / name).is_file()]


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> tuple[Path, dict, list[str]]:
    """A three-commit repository made from this working tree, and an env for asv."""
    root = tmp_path_factory.mktemp("e2e")
    repo, home = root / "repo", root / "home"
    home.mkdir()
    for name in project_files():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO_ROOT / name, repo / name)
    (repo / "benchmarks" / "bench_setup_probe.py").write_text(SETUP_PROBE)
    env = {
        **os.environ,
        "HOME": str(home),  # asv's machine file goes here, not in the user's home
        "GIT_AUTHOR_NAME": "e2e",
        "GIT_AUTHOR_EMAIL": "e2e@example.invalid",
        "GIT_COMMITTER_NAME": "e2e",
        "GIT_COMMITTER_EMAIL": "e2e@example.invalid",
        "SETUP_PROBE_LOG": str(root / "setup_probe.log"),
    }
    env.pop("TENSOROPS_THREADS", None)
    run("git", "init", "-q", "-b", "main", cwd=repo, env=env)
    run("git", "add", "-A", cwd=repo, env=env)
    run("git", "commit", "-q", "-m", "first", cwd=repo, env=env)
    for number in (2, 3):
        notes = repo / "src" / "tensorops" / "_history.py"
        notes.write_text(f"# commit {number}: a change asv must rebuild for\n")
        run("git", "add", "-A", cwd=repo, env=env)
        run("git", "commit", "-q", "-m", f"commit {number}", cwd=repo, env=env)
    hashes = run("git", "rev-list", "main", cwd=repo, env=env).stdout.split()
    run(ASV, "machine", "--machine", MACHINE, "--yes", cwd=repo, env=env)
    run(ASV, "run", "--quick", "--show-stderr", "--machine", MACHINE, "-b", SUBSET, "ALL",
        cwd=repo, env=env, timeout=1200)  # fmt: skip
    return repo, env, hashes


def result_files(repo: Path) -> dict[str, dict]:
    found = {}
    for path in (repo / ".asv" / "results" / MACHINE).glob("*.json"):
        if path.name != "machine.json":
            data = json.loads(path.read_text())
            found[data["commit_hash"]] = data
    return found


def test_one_result_file_per_commit(clone):
    repo, _, hashes = clone
    assert len(hashes) == 3
    assert set(result_files(repo)) == set(hashes)


def test_cpu_rows_are_filled_and_cuda_rows_are_skipped(clone):
    repo, _, _ = clone
    for data in result_files(repo).values():
        row = result_row(data, "bench_matmul.MatMul.time_matmul")
        devices = row["params"][0]
        assert devices == ["'cpu'", "'cuda'"]
        per_device = len(row["result"]) // 2
        cpu, cuda = row["result"][:per_device], row["result"][per_device:]
        assert all(isinstance(value, float) and math.isfinite(value) and value > 0 for value in cpu)
        # asv stores a skip (NotImplementedError in setup) as NaN, shown as n/a.
        assert all(isinstance(value, float) and math.isnan(value) for value in cuda)


def test_the_env_keeps_the_matrix_pins(clone):
    repo, env, _ = clone
    (env_dir,) = [p for p in (repo / ".asv" / "env").iterdir() if p.is_dir()]
    frozen = run(str(env_dir / "bin" / "python"), "-m", "pip", "freeze", cwd=repo, env=env).stdout
    assert "numpy==2.4.6" in frozen
    assert "asv_runner==0.2.5" in frozen
    assert "torch==2.13.0" in frozen
    assert "tensorops" in frozen


def test_publish_writes_html_and_a_graph_point_per_commit(clone):
    repo, env, hashes = clone
    run(ASV, "publish", cwd=repo, env=env)
    html = repo / ".asv" / "html"
    assert (html / "index.html").is_file()
    index = json.loads((html / "index.json").read_text())
    assert "bench_matmul.MatMul.time_matmul" in index["benchmarks"]
    graphs = list((html / "graphs").rglob("bench_matmul.MatMul.time_matmul.json"))
    assert graphs, "no graph JSON for time_matmul"
    points = json.loads(graphs[0].read_text())
    assert len(points) == len(hashes)
    revisions = {index["revision_to_hash"][str(revision)] for revision, _ in points}
    assert revisions == set(hashes)


def test_asv_runner_pin_runs_setup_once_per_sample(clone):
    """asv_runner 0.3.x would run setup before each of the 20 timed calls (asv #1613)."""
    repo, env, _ = clone
    log = Path(env["SETUP_PROBE_LOG"])
    log.unlink(missing_ok=True)
    asv_on_head(repo, env, "SetupProbe")
    kinds = log.read_text().split()
    calls, setups = kinds.count("call"), kinds.count("setup")
    # number=5 calls per sample, 4 samples, plus asv's own calibration block.
    assert calls >= 20
    assert setups <= 4 + 1, f"{setups} setups for {calls} calls"


@pytest.mark.parametrize("launch_method", ["forkserver", "spawn"])
def test_thread_override_reaches_the_benchmark_process(clone, launch_method):
    repo, env, hashes = clone
    asv_on_head(
        repo, {**env, "TENSOROPS_THREADS": "3"}, "ThreadsProbe", "--launch-method", launch_method
    )
    row = result_row(result_files(repo)[hashes[0]], "bench_setup_probe.ThreadsProbe.track_threads")
    assert row["result"] == [3.0]
