"""The tooling: the dev entry point and the measurement scripts' arithmetic."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

from tests.support import REPO_ROOT


def load_tool(name: str):
    path = REPO_ROOT / "tools" / "studies" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_dev_script_rejects_an_unknown_command_as_bad_input():
    done = subprocess.run(
        ["bash", str(REPO_ROOT / "tools" / "dev.sh"), "benchmark"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 4
    assert done.stderr.strip() == (
        "dev.sh: usage: tools/dev.sh bench [--tier pr|nightly|weekly|all] [--rounds N]"
        " [-- asv run options] | test [pytest options] | setup"
    )


@pytest.mark.parametrize(
    ("option", "line"),
    [
        (("--tier", "hourly"), "bench: argument --tier: invalid choice: 'hourly'"),
        (
            ("--rounds", "0"),
            "bench: argument --rounds: '0' is not a whole number of rounds, 1 or more",
        ),
        (
            ("--", "--bench", "NoSuchSuite"),
            "bench: --bench 'NoSuchSuite' selects no benchmark row (one is named bench_",
        ),
        (("--", "--bench", "time_("), "bench: --bench 'time_(' is not a valid regex: "),
    ],
)
def test_the_bench_command_rejects_bad_options_before_benchmarking(option, line):
    done = subprocess.run(
        [sys.executable, "-m", "tools.bench", *option],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 4
    (said,) = done.stderr.strip().splitlines()
    assert said.startswith(line)


def test_the_bench_command_times_each_row_in_its_rounds_unless_asv_is_told(monkeypatch):
    from tools import bench

    calls = []
    monkeypatch.setattr(bench, "discovered", lambda repo: {"s": (None, ["bench_x.X.time_op"])})
    monkeypatch.setattr(
        bench, "asv", lambda *args, cwd: calls.append(args) or subprocess.CompletedProcess(args, 0)
    )
    rows = ["bench_x.X.time_op"]
    bench.run(REPO_ROOT, "m", "^bench_x", rows, [], 1)
    bench.run(REPO_ROOT, "m", "^bench_x", rows, ["-a", "rounds=2", "--bench", "x"], 1)
    assert calls[0][:5] == ("run", "--machine", "m", "--attribute", "rounds=1")
    assert calls[1][:5] == ("run", "--machine", "m", "-a", "rounds=2")
    assert "rounds=1" not in calls[1]


ROWS = [
    "bench_matmul.MatMulSweep.time_matmul('cpu', 'bfloat16', (64, 64, 64), 'contiguous', 'mm')",
    "bench_matmul.MatMulSweep.time_matmul('cpu', 'float32', (64, 64, 64), 'contiguous', 'mm')",
    "bench_instructions.MatMulCount.track_instructions('matmul/mm/float32')",
]


def test_the_bench_command_finds_a_chosen_regex_anywhere_in_a_row_as_asv_does(monkeypatch):
    from tools import bench

    timed, counted = bench.selections(REPO_ROOT, "nightly", ["--bench", "'bfloat16'"], ROWS)
    assert bench.selected_rows(timed, ROWS) == ROWS[:1]
    assert bench.selected_rows(counted, ROWS) == []
    timed, counted = bench.selections(
        REPO_ROOT, "nightly", ["-b", "^bench_matmul", "-b", "mm/"], ROWS
    )
    assert bench.selected_rows(timed, ROWS) == ROWS[:2]
    assert bench.selected_rows(counted, ROWS) == ROWS[2:]
    # A selection of counts alone runs no timed row: asv is not asked to.
    monkeypatch.setattr(bench, "asv", lambda *args, cwd: pytest.fail(f"asv ran: {args}"))
    timed, _ = bench.selections(REPO_ROOT, "nightly", ["--bench", "Count"], ROWS)
    assert bench.run(REPO_ROOT, "m", timed, ROWS, [], 1) is None


def test_the_first_look_leaves_out_large_calls_this_cpu_emulates_and_says_so(monkeypatch, capsys):
    """On a CPU without native bfloat16 or float16, the tier's large calls of those dtypes
    are left out of the first look, with a line that says how many and why; on one with
    them, or with --emulated, nothing is."""
    from benchmarks._harness import devices, emulated
    from tools import bench
    from tools._lib.asv.suites import discovered

    rows = [row for _, named in discovered(REPO_ROOT).values() for row in named]
    product = "bench_matmul.MatMul.time_matmul('cpu', '{}', (1024, 1024, 1024), 'mm')"
    small = "bench_activation.Gelu.time_gelu('cpu', 'bfloat16', (32, 512, 768), 'exact')"
    for native, expected in ((set(), False), ({"bfloat16", "float16"}, True)):
        monkeypatch.setattr(devices.CpuDevice, "native_dtypes", lambda self, n=native: n)
        left = bench.emulated_rows(REPO_ROOT)
        timed, _ = bench.selections(REPO_ROOT, "nightly", [], rows, left)
        kept = set(bench.selected_rows(timed, rows))
        assert (product.format("bfloat16") in kept) is expected
        assert (product.format("float16") in kept) is expected
        assert product.format("float32") in kept and small in kept  # small calls stay
    monkeypatch.setattr(devices.CpuDevice, "native_dtypes", lambda self: set())
    bench.left_out(REPO_ROOT, "nightly", rows, bench.emulated_rows(REPO_ROOT))
    said = capsys.readouterr().out
    assert "bench: left out" in said and "--emulated includes them" in said
    assert emulated.EMULATED_MAX_FLOPS == 2**28


def test_ci_runs_the_readme_test_command():
    readme = (REPO_ROOT / "README.md").read_text()
    ci = (REPO_ROOT / ".ci" / "run").read_text()
    (commands,) = [part for part in readme.split("\n## ") if part.startswith("Two commands")]
    assert "tools/dev.sh bench" in commands.split("```")[1]
    assert "tools/dev.sh test" in commands.split("```")[1]
    assert "exec bash tools/dev.sh test" in ci


def test_commit_overhead_times_each_commit_from_its_header_to_benchmarking():
    tool = load_tool("commit_overhead")
    lines = [
        (0.0, "· Running '/usr/bin/git clone ...'"),
        (5.0, "[ 0.00%] · For tensorops commit aaaa1111 <main>:"),
        (5.5, "[ 0.00%] ·· Benchmarking virtualenv-py3.11"),
        (9.0, "[50.00%] · For tensorops commit bbbb2222 <main~1>:"),
        (9.1, "[50.00%] ··· Running '/usr/bin/git checkout -f bbbb2222'"),
        (12.5, "[50.00%] ·· Benchmarking virtualenv-py3.11"),
    ]
    assert tool.overheads(lines) == pytest.approx({"aaaa1111": 0.5, "bbbb2222": 3.5})


def test_launch_cost_counts_a_process_per_combination_and_round():
    tool = load_tool("launch_cost")
    results = {
        "result_columns": ["result", "params", "duration"],
        "results": {
            "bench_x.X.time_op": [[1.0, 2.0, None], [["'a'", "'b'", "'c'"]], 3.0],
            "bench_x.X.track_gflops": [[5.0, 6.0, 7.0], [["'a'", "'b'", "'c'"]], 1.0],
            "bench_x.X.peakmem_op": [[8.0], [["'a'"]], 1.0],
        },
    }
    assert tool.process_count(results) == 3 * 2 + 3 + 1


def test_measurement_scripts_have_help():
    for name in ("commit_overhead", "launch_cost"):
        done = subprocess.run(
            [sys.executable, "-m", f"tools.studies.{name}", "--help"],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0
        assert "usage:" in done.stdout
