"""The continuous-benchmarking scripts' logic, in-process and without asv runs: which
commits a nightly picks, how a benchmark name is resolved, what publish does to the site,
and the one-line errors on bad input. The real runs are in test_nightly.py and
test_pr_gate_bisect.py."""

from __future__ import annotations

import json
import platform
import re
import shutil
import subprocess
import sys
from functools import partial
from pathlib import Path

import pytest

from tools import bisect_slowdown as bisect
from tools import nightly, pr_gate, publish
from tools.common import ToolError, machine_result_files, register_machine

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
    names = bisect.benchmark_names(REPO_ROOT)
    assert "bench_activation.Silu.time_silu" in names
    assert all(name.startswith("bench_") for name in names)


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


COMPARE_TABLE = """\
| Change   | Before [8721f0f4] <main~1>   | After [49e9027a] <main>   |   Ratio | Benchmark (Parameter)                                    |
|----------|------------------------------|---------------------------|---------|----------------------------------------------------------|
| +        | 12.0±0.1ms                   | 24.1±0.2ms                |    2.01 | bench_activation.Silu.time_silu('cpu', 'float32', 'functional') |
| +        | 3.00±0.1ms                   | 6.00±0.2ms                |    2.00 | bench_activation.Silu.time_silu('cpu', 'bfloat16', 'functional') |
| -        | 5.00±0.1ms                   | 2.00±0.1ms                |    0.40 | bench_matmul.MatMul.time_matmul('cpu', (64, 64, 64), 'mm') |
| x        | 1.00±0ms                     | failed                    |     n/a | bench_norm.LayerNorm.time_layer_norm('cpu', 'manual')    |
| +        | 100M                         | 150M                      |    1.50 | bench_norm.RMSNorm.peakmem_rms_norm                      |
| -        | 150                          | 100                       |    0.67 | bench_matmul.MatMul.track_gflops('cpu', (64, 64, 64))    |
| +        | 10.0                         | 20.0                      |    2.00 | bench_movement.HostToDevice.track_gbps('cuda', 'to')     |
| -        | 80.0                         | 40.0                      |    0.50 | bench_norm.LayerNorm.track_percent_of_peak('cpu', 'manual') |
"""  # noqa: E501


def test_pr_gate_reads_slowdowns_from_asv_compare_with_rates_reversed():
    units = {
        "bench_activation.Silu.time_silu": "seconds",
        "bench_matmul.MatMul.time_matmul": "seconds",
        "bench_matmul.MatMul.track_gflops": "GFLOP/s",
        "bench_movement.HostToDevice.track_gbps": "GB/s",
        "bench_norm.RMSNorm.peakmem_rms_norm": "bytes",
        "bench_norm.LayerNorm.track_percent_of_peak": "% of peak",
    }
    # asv marks a rise "+", a fall "-": a faster matmul is "-", a rate that fell is "-"
    # and a slowdown, a rate that rose is "+" and not one.
    assert pr_gate.slower_rows(COMPARE_TABLE, units) == [
        "bench_activation.Silu.time_silu('cpu', 'bfloat16', 'functional')",
        "bench_activation.Silu.time_silu('cpu', 'float32', 'functional')",
        "bench_matmul.MatMul.track_gflops('cpu', (64, 64, 64))",
        "bench_norm.LayerNorm.track_percent_of_peak('cpu', 'manual')",
        "bench_norm.RMSNorm.peakmem_rms_norm",
    ]
    assert pr_gate.slower_rows("No benchmark changed.", units) == []


def test_pr_gate_measures_sampled_rows_unless_told_otherwise():
    assert pr_gate.with_default_selection(["--show-stderr"]) == [
        "--show-stderr",
        "--bench",
        pr_gate.DEFAULT_SELECTION,
    ]
    assert pr_gate.with_default_selection(["-b", "Silu"]) == ["-b", "Silu"]
    pattern = re.compile(pr_gate.DEFAULT_SELECTION)
    assert pattern.search("bench_activation.Silu.time_silu")
    assert pattern.search("bench_norm.RMSNorm.peakmem_rms_norm")
    assert pattern.search("bench_instructions.Instructions.track_instructions")
    assert not pattern.search("bench_matmul.MatMul.track_gflops")
    assert not pattern.search("bench_matmul.MatMul.track_percent_of_peak")


def test_pr_gate_confirms_without_the_callers_selection():
    args = ["--bench", "Silu", "-b", "Gelu", "--bench=MatMul", "--show-stderr", "-a", "rounds=4"]
    assert pr_gate.without_bench_selection(args) == ["--show-stderr", "-a", "rounds=4"]


COUNT_ROW = "bench_instructions.Instructions.track_instructions('cpu', ('matmul', 'mm'))"
TIME_ROW = "bench_activation.Silu.time_silu('cpu', 'float32', 'functional')"
HEADER = "| Change | Before | After | Ratio | Benchmark (Parameter) |\n|---|---|---|---|---|"


class ScriptedGate(pr_gate.Gate):
    """A Gate whose asv runs are scripted: each ``continuous`` pass moves to the next
    list of (ratio, row), and ``compare`` shows those beyond its factor as slower."""

    def __init__(self, passes: list[list[tuple[float, str]]], factor: float = 1.2):
        self.factor, self.passes, self.selections = factor, passes, []

    def continuous(self, *asv_args: str) -> int:
        self.selections.append(asv_args[asv_args.index("--bench") + 1])
        self.passes = self.passes[1:] if len(self.selections) > 1 else self.passes
        return 0

    def units(self) -> dict[str, str]:
        return {pr_gate.row_name(COUNT_ROW): "instructions", pr_gate.row_name(TIME_ROW): "seconds"}

    def compare(self, *extra: str, factor: float | None = None) -> str:
        beyond = [(r, row) for r, row in self.passes[0] if r > (factor or self.factor)]
        lines = [f"| + | 1 | {r} | {r} | {row} |" for r, row in beyond]
        return "\n".join([HEADER, *lines])


def test_pr_gate_fails_a_2_percent_count_rise_without_measuring_it_again():
    gate = ScriptedGate([[(1.02, COUNT_ROW), (1.05, TIME_ROW)]])
    assert gate.slower() == [COUNT_ROW]  # the time row's 1.05 is within its factor
    assert gate.decide(gate.continuous("--bench", "x"), ["--bench", "x"], True) == (1, "")
    assert gate.selections == ["x"]  # no confirming pass for a deterministic count
    assert COUNT_ROW in gate.changes() and TIME_ROW not in gate.changes()
    assert ScriptedGate([[(1.005, COUNT_ROW)]]).slower() == []


def test_pr_gate_confirms_only_the_sampled_rows_and_passes_what_does_not_reproduce():
    gate = ScriptedGate([[(1.3, TIME_ROW)], [(1.1, TIME_ROW)]])
    status, first_changes = gate.decide(gate.continuous("--bench", "x"), ["--bench", "x"], True)
    assert status == 0 and TIME_ROW in first_changes
    assert gate.selections == ["x", f"^{re.escape(TIME_ROW)}$"]
    # A count rise fails the gate even when the sampled row beside it does not reproduce.
    counted = ScriptedGate([[(1.3, TIME_ROW), (1.02, COUNT_ROW)], [(1.1, TIME_ROW)]])
    assert counted.decide(counted.continuous("--bench", "x"), [], True)[0] == 1
    assert counted.selections[1] == f"^{re.escape(TIME_ROW)}$"


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
    "noise_study",
    "timer_crosscheck",
    "detection_power",
    "gpu_check",
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


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_asv_and_timer_agree_within_2x_on_a_cpu_matmul(tmp_path, monkeypatch):
    """A loose bound: it catches gross errors (a missing division by number, a timed
    warm-up), not the few percent tools/timer_crosscheck.py reports."""
    from tools import timer_crosscheck

    monkeypatch.setenv("HOME", str(tmp_path))  # asv's machine file

    (row,) = timer_crosscheck.crosscheck(REPO_ROOT, ["matmul512"], min_run_time=0.3, rounds=1)
    assert 0.5 < row["ratio"] < 2.0, row
    assert row["lowest"] == row["ratio"] == row["highest"]


def planted_mm(tmp_path, target: str, slowdown: float):
    """tensorops' mm variant after the target's plant, compiled against ``torch``."""
    from tools import detection_power

    source = tmp_path / "src" / "tensorops" / "matmul.py"
    source.parent.mkdir(parents=True)
    shutil.copy(REPO_ROOT / "src" / "tensorops" / "matmul.py", source)
    detection_power.TARGETS[target].plant(tmp_path, slowdown)
    return re.search(r"^def mm\(.*?(?=\n\n)", source.read_text(), re.S | re.M).group(0)


def test_the_planted_slowdown_keeps_mm_correct_and_adds_the_rows(tmp_path):
    import torch

    function = planted_mm(tmp_path, "time", 1.3)
    rows = []

    class CountingTorch:
        Tensor = torch.Tensor

        @staticmethod
        def mm(a, b):
            rows.append(a.shape[0])
            return torch.mm(a, b)

    namespace = {"torch": CountingTorch}
    exec(function, namespace)
    a, b = torch.randn(100, 8), torch.randn(8, 5)
    assert torch.equal(namespace["mm"](a, b), torch.mm(a, b))
    assert rows == [30, 100]  # 30% of the rows again, then the real product


def test_the_planted_instructions_are_sized_from_the_two_counts(tmp_path, monkeypatch):
    import itertools

    import torch

    from benchmarks import harness

    counts = {"call()": 500_000.0, "spin()": 2_500_000.0}  # 25 per loop step
    monkeypatch.setattr(harness, "callgrind_instructions", lambda stmt, setup, number: counts[stmt])
    function = planted_mm(tmp_path, "instructions", 1.02)
    assert "for _ in itertools.repeat(None, 400):" in function  # 2% of 500,000: 400 steps
    assert "import itertools\n" in (tmp_path / "src" / "tensorops" / "matmul.py").read_text()
    namespace = {"torch": torch, "itertools": itertools}
    exec(function, namespace)
    a, b = torch.randn(10, 8), torch.randn(8, 5)
    assert torch.equal(namespace["mm"](a, b), torch.mm(a, b))


def test_detection_reads_exact_ratios_from_unitless_counts():
    from tools import detection_power

    table = "\n".join(
        [
            HEADER,
            f"| + | 546k | 557k | 1.02 | {COUNT_ROW} |",
            f"| | 1.00ms | 2.00ms | 2.00 | {TIME_ROW} |",
        ]
    )
    gate = ScriptedGate([])
    gate.compare = lambda *extra, factor=None: table
    assert detection_power.row_ratio(gate, COUNT_ROW) == pytest.approx(557 / 546)
    assert detection_power.row_ratio(gate, TIME_ROW) == 2.0
    with pytest.raises(ToolError, match="no result for"):
        detection_power.row_ratio(gate, "bench_matmul.MatMul.time_matmul('cpu')")


def test_suggested_thresholds_cover_the_worst_no_op_change_with_a_margin():
    from tools.noise_study import suggested_thresholds

    runs = [
        [{"benchmark": "a.A.time_x", "ratio": 1.02}, {"benchmark": "b.B.time_y", "ratio": 0.5}],
        [{"benchmark": "a.A.time_x", "ratio": 0.97}, {"benchmark": "b.B.time_y", "ratio": 1.1}],
    ]
    # a: worst 3% -> 0.08 -> 0.10 (the floor); b: 0.5 is a 2x change -> 1.05 -> 1.05.
    assert suggested_thresholds(runs) == {"a.A.time_x": 0.10, "b.B.time_y": 1.05}


def test_the_published_regressions_see_a_2_percent_count_rise_and_not_time_noise():
    from types import SimpleNamespace

    from asv.config import Config
    from asv.plugins.regressions import _GraphDataFilter

    # asv takes the largest threshold of every pattern that matches, so the catch-all
    # must leave the counts out for their 1% to hold.
    graphs = _GraphDataFilter.__new__(_GraphDataFilter)
    graphs.conf = Config.load(str(REPO_ROOT / "asv.conf.json"))
    threshold = partial(graphs._get_threshold, SimpleNamespace(params={}), None)
    assert threshold("bench_instructions.Instructions.track_instructions") == 0.01
    assert threshold("bench_creation.Zeros.time_zeros") == 0.25
    assert threshold("bench_new.Suite.time_op") == 0.10
