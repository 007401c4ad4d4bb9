"""tools/studies/gpu_check.py can only measure on a GPU; what it can do here is checked: its
asv part refuses a row that was not measured, its memory expectations come from shapes
alone, and with no GPU it says so and exits 2 (its asv part end to end:
tests/integration/test_gpu_check_asv.py)."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch

from tests.support import REPO_ROOT
from tools.studies import asv_check, gpu_check


def test_the_asv_check_fails_when_a_row_is_not_measured():
    # The CUDA rows of a CPU machine are skips (NaN): not "measured", so not a pass.
    result = asv_check.check_asv(
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
