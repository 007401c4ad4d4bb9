"""tools/studies/gpu_check.py's asv part, end to end on CPU rows under both launch methods
(on a GPU it runs the same on CUDA rows)."""

from __future__ import annotations

import pytest

from tools.studies import asv_check

CPU_ROWS = [
    r"^bench_matmul\.MatMul\.time_matmul\('cpu', 'float32', \(512, 512, 512\), 'mm'\)$",
    r"^bench_creation\.Zeros\.time_zeros\('cpu', .*'on_device'\)$",
]


@pytest.mark.timeout(600)
def test_the_asv_check_runs_end_to_end_on_cpu_rows():
    result = asv_check.check_asv(selection=CPU_ROWS)
    assert [row["launch_method"] for row in result["rows"]] == ["spawn", "forkserver"]
    for row in result["rows"]:
        assert row["exit"] == 0, row["log_tail"]
        assert len(row["values"]) == 2 and all(value > 0 for value in row["values"].values())
    assert result["passed"]
