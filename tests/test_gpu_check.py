"""tools/studies/gpu_check.py can only measure on a GPU; what it can do here is checked: its
asv part runs end to end on CPU rows under both launch methods, its memory expectations
come from shapes alone, and with no GPU it says so and exits 2."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch

from tools.studies import gpu_check

from .conftest import REPO_ROOT

CPU_ROWS = [
    r"^bench_matmul\.MatMul\.time_matmul\('cpu', 'float32', \(512, 512, 512\), 'mm'\)$",
    r"^bench_creation\.Zeros\.time_zeros\('cpu', .*'on_device'\)$",
]


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_the_asv_check_runs_end_to_end_on_cpu_rows():
    result = gpu_check.check_asv(selection=CPU_ROWS)
    assert [row["launch_method"] for row in result["rows"]] == ["spawn", "forkserver"]
    for row in result["rows"]:
        assert row["exit"] == 0, row["log_tail"]
        assert len(row["values"]) == 2 and all(value > 0 for value in row["values"].values())
    assert result["passed"]


def test_the_asv_check_fails_when_a_row_is_not_measured():
    # The CUDA rows of a CPU machine are skips (NaN): not "measured", so not a pass.
    result = gpu_check.check_asv(
        launch_methods=("forkserver",),
        selection=[r"^bench_creation\.Zeros\.time_zeros\('cuda', .*'on_device'\)$"],
    )
    assert not result["passed"]


def test_memory_expectations_come_from_shapes_in_allocator_blocks():
    nlp_bytes = 32 * 512 * 768 * 4
    assert gpu_check.expected_bytes("silu", "manual", (32, 512, 768), "float32", 2) == 2 * nlp_bytes
    # 4096 x 1024 float16 output; a 1000-byte output rounds up to two 512-byte blocks.
    assert (
        gpu_check.expected_bytes("matmul", "mm", (4096, 2048, 1024), "float16", 1)
        == 4096 * 1024 * 2
    )
    assert gpu_check.expected_bytes("silu", "functional", (250,), "float32", 1) == 1024


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-GPU path")
def test_without_a_gpu_it_says_so_and_exits_2(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "tools.studies.gpu_check", "--out", str(tmp_path)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert done.stderr.strip() == "gpu_check: no CUDA device here"
