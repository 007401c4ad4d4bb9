"""End to end: asv builds tensorops per commit in a virtualenv, benchmarks three commits
of a temporary clone, and publishes a site with a graph point per commit.

This is the slow test (about two minutes on 2 cores, mostly building the env).
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from tests.support import REPO_ROOT
from tests.support.project_repo import ASV, ProjectRepo, isolated_env, make_project_repo
from tools._lib.asv.matrix import default_release
from tools._lib.asv.run import allocator_environment

# The nightly's release: asv's matrix lists every release, and a plain `asv run` builds
# them all.
DEFAULT_ENV = ("-E", default_release(REPO_ROOT).env_name)

pytestmark = pytest.mark.timeout(1500)

MACHINE = "e2e-machine"
# Batched products, not MatMul: MatMul's float16 1024^3 rows take 4 s a call on a CPU
# without native float16, and ran for minutes of CI on such a host.
TIMED = "bench_matmul.BatchedMatMul.time_bmm"
TRACKED = "bench_matmul.BatchedMatMul.track_gflops"
SUBSET = r"bench_matmul\.BatchedMatMul\.time_bmm|bench_creation\.Zeros"

# SetupProbe counts setup calls and timed calls to a file, to check how often asv_runner
# runs setup; ThreadsProbe reports the thread count a benchmark process really runs with,
# AllocatorProbe the malloc it runs on.
SETUP_PROBE = """
import os

import torch

from ._harness import OpBenchmark, allocator


class AllocatorProbe:
    def track_jemalloc(self):
        return float(allocator.IN_USE == "jemalloc")


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


def asv_on_head(repo: ProjectRepo, bench: str, *options: str, env: dict | None = None) -> None:
    run = ProjectRepo(repo.path, env or repo.env).run
    run(ASV, "run", *DEFAULT_ENV, "--machine", MACHINE, "-b", bench, *options, "HEAD^!")


def result_row(data: dict, benchmark: str) -> dict:
    return dict(zip(data["result_columns"], data["results"][benchmark], strict=False))


@pytest.fixture(scope="module")
def clone(tmp_path_factory, shared_asv_env) -> tuple[ProjectRepo, list[str]]:
    """A three-commit repository made from this working tree, benchmarked by asv."""
    root = tmp_path_factory.mktemp("e2e")
    env = isolated_env(root / "home", SETUP_PROBE_LOG=str(root / "setup_probe.log"))
    repo = make_project_repo(root / "repo", env, shared_asv_env)
    (repo.path / "benchmarks" / "bench_setup_probe.py").write_text(SETUP_PROBE)
    repo.commit("add the setup probe")
    repo.commit(
        "a change asv must rebuild for",
        lambda root: (root / "src" / "tensorops" / "_history.py").write_text("# commit 3\n"),
    )
    hashes = repo.git("rev-list", "main").split()
    repo.run(ASV, "machine", "--machine", MACHINE, "--yes")
    repo.run(
        ASV,
        "run",
        *DEFAULT_ENV,
        "--quick",
        "--show-stderr",
        "--machine",
        MACHINE,
        "-b",
        SUBSET,
        "ALL",
        timeout=1200,
    )
    return repo, hashes


def result_files(repo: ProjectRepo) -> dict[str, dict]:
    found = {}
    for path in (repo.path / ".asv" / "results" / MACHINE).glob("*.json"):
        if path.name != "machine.json":
            data = json.loads(path.read_text())
            found[data["commit_hash"]] = data
    return found


def test_one_result_file_per_commit(clone):
    repo, hashes = clone
    assert len(hashes) == 3
    assert set(result_files(repo)) == set(hashes)


def test_cpu_rows_are_filled_and_cuda_rows_are_skipped(clone):
    repo, _ = clone
    for data in result_files(repo).values():
        row = result_row(data, TIMED)
        devices = row["params"][0]
        assert devices == ["'cpu'", "'cuda'"]
        per_device = len(row["result"]) // 2
        cpu, cuda = row["result"][:per_device], row["result"][per_device:]
        assert all(isinstance(value, float) and math.isfinite(value) and value > 0 for value in cpu)
        # asv stores a skip (NotImplementedError in setup) as NaN, shown as n/a.
        assert all(isinstance(value, float) and math.isnan(value) for value in cuda)


def test_the_env_keeps_the_matrix_pins_and_runs_the_checked_out_source(clone):
    repo, _ = clone
    python = default_release(repo.path).python
    frozen = repo.run(str(python), "-m", "pip", "freeze").stdout
    assert "numpy==2.4.6" in frozen
    assert "asv_runner==0.2.5" in frozen
    assert "torch==2.13.0" in frozen
    # No wheel of tensorops: the source of the commit asv checked out in the environment
    # (tools/_lib/asv/source_install.py).
    assert "tensorops" not in frozen
    where = repo.run(str(python), "-c", "import tensorops; print(tensorops.__file__)").stdout
    checkout = (default_release(repo.path).env_dir / "project" / "src").resolve()
    assert Path(where.strip()).resolve().is_relative_to(checkout), where


def test_publish_writes_html_and_a_graph_point_per_commit(clone):
    repo, hashes = clone
    repo.run(ASV, "publish")
    html = repo.path / ".asv" / "html"
    assert (html / "index.html").is_file()
    index = json.loads((html / "index.json").read_text())
    assert TIMED in index["benchmarks"]
    graphs = list((html / "graphs").rglob(f"{TIMED}.json"))
    assert graphs, "no graph JSON for time_bmm"
    points = json.loads(graphs[0].read_text())
    assert len(points) == len(hashes)
    revisions = {index["revision_to_hash"][str(revision)] for revision, _ in points}
    assert revisions == set(hashes)


def test_asv_runner_pin_runs_setup_once_per_sample(clone):
    """asv_runner 0.3.x would run setup before each of the 20 timed calls."""
    repo, _ = clone
    log = Path(repo.env["SETUP_PROBE_LOG"])
    log.unlink(missing_ok=True)
    asv_on_head(repo, "SetupProbe")
    kinds = log.read_text().split()
    calls, setups = kinds.count("call"), kinds.count("setup")
    # number=5 calls per sample, 4 samples, plus asv's own calibration block.
    assert calls >= 20
    assert setups <= 4 + 1, f"{setups} setups for {calls} calls"


@pytest.mark.parametrize("launch_method", ["forkserver", "spawn"])
def test_thread_override_reaches_the_benchmark_process(clone, launch_method):
    repo, hashes = clone
    asv_on_head(
        repo,
        "ThreadsProbe",
        "--launch-method",
        launch_method,
        env={**repo.env, "TENSOROPS_THREADS": "3"},
    )
    row = result_row(result_files(repo)[hashes[0]], "bench_setup_probe.ThreadsProbe.track_threads")
    assert row["result"] == [3.0]


@pytest.mark.parametrize("launch_method", ["forkserver", "spawn"])
def test_benchmark_processes_run_on_jemalloc_when_the_tools_start_asv(clone, launch_method):
    """asv starts its benchmark processes with its own environment: the tools' preload
    reaches them, and a plain `asv run` falls back to glibc's malloc, fixed."""
    repo, hashes = clone
    row_name = "bench_setup_probe.AllocatorProbe.track_jemalloc"
    for env, expected in ((allocator_environment(repo.env), 1.0), (repo.env, 0.0)):
        asv_on_head(repo, "AllocatorProbe", "--launch-method", launch_method, env=env)
        assert result_row(result_files(repo)[hashes[0]], row_name)["result"] == [expected]


def test_a_throughput_track_reads_its_time_rows_samples_and_keeps_their_interval(clone, tmp_path):
    """Through the tools' run folder, a track's samples are its time_ row's, both rounds of
    them, each turned into GFLOP/s (no call timed twice); asv stores their median and its
    99% interval, which asv compare tests a change against."""
    repo, hashes = clone
    env = {**repo.env, "TENSOROPS_RUN_DIR": str(tmp_path)}  # what tools/_lib/asv/run.py sets
    float32 = r"\('cpu', 'float32'"
    bench = f"{re.escape(TIMED)}{float32}|{re.escape(TRACKED)}{float32}"
    asv_on_head(repo, bench, "--record-samples", env=env)
    data = result_files(repo)[hashes[0]]
    timed, tracked = result_row(data, TIMED), result_row(data, TRACKED)
    pairs = [
        (seconds, gflops, track)
        for seconds, gflops, track in zip(
            timed["samples"],
            tracked["samples"],
            zip(*(tracked[k] for k in STATS), strict=True),
            strict=True,
        )
        if gflops
    ]
    assert len(pairs) == 3, "one measured row per float32 variant"
    for seconds, gflops, (value, low, high) in pairs:
        assert len(gflops) == len(seconds) >= 2  # both rounds of the time_ row
        work = [g * s for g, s in zip(sorted(gflops), sorted(seconds, reverse=True), strict=True)]
        assert max(work) == pytest.approx(min(work), rel=1e-9)  # one FLOP count over each
        assert math.isfinite(low) and math.isfinite(high) and low <= value <= high


STATS = ("result", "stats_ci_99_a", "stats_ci_99_b")
