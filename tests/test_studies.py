"""The measurement studies' arithmetic, without measuring: the planted slowdowns, the
ratio a detection run reads, and the thresholds the noise study suggests. Their figures
come from running them on an idle machine (docs/measurement.md), never from a test."""

from __future__ import annotations

import re
import shutil
from functools import partial

import pytest

from tools.common import ToolError

from .conftest import REPO_ROOT
from .scripted_gate import COUNT_ROW, TIME_ROW, ScriptedGate


def planted_mm(tmp_path, target: str, slowdown: float):
    """tensorops' mm variant after the target's plant, compiled against ``torch``."""
    from tools.studies import detection_power

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

    from benchmarks._harness import callgrind

    counts = {"call()": 500_000.0, "spin()": 2_500_000.0}  # 25 per loop step
    monkeypatch.setattr(
        callgrind, "callgrind_instructions", lambda stmt, setup, number: counts[stmt]
    )
    function = planted_mm(tmp_path, "instructions", 1.02)
    assert "for _ in itertools.repeat(None, 400):" in function  # 2% of 500,000: 400 steps
    assert "import itertools\n" in (tmp_path / "src" / "tensorops" / "matmul.py").read_text()
    namespace = {"torch": torch, "itertools": itertools}
    exec(function, namespace)
    a, b = torch.randn(10, 8), torch.randn(8, 5)
    assert torch.equal(namespace["mm"](a, b), torch.mm(a, b))


def test_detection_reads_the_exact_ratio_of_its_row():
    from tools.studies import detection_power

    gate = ScriptedGate([[(557 / 546, COUNT_ROW), (2.0, TIME_ROW)]])
    assert detection_power.row_ratio(gate, COUNT_ROW) == pytest.approx(557 / 546)
    assert detection_power.row_ratio(gate, TIME_ROW) == 2.0
    with pytest.raises(ToolError, match="no result for"):
        detection_power.row_ratio(gate, "bench_matmul.MatMul.time_matmul('cpu')")


def test_suggested_thresholds_cover_the_worst_no_op_change_with_a_margin():
    from tools.studies.noise_study import suggested_thresholds

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


def test_no_unit_test_compares_timings():
    """Agreement of two timings is a measurement (tools/studies), not a pass/fail test:
    one failed on a fresh clone while another process shared the machine."""
    timing_calls = re.compile(r"\b(crosscheck|timer_seconds|asv_seconds|blocked_autorange)\(")
    offenders = [
        path.name
        for path in (REPO_ROOT / "tests").glob("test_*.py")
        if timing_calls.search(path.read_text())
    ]
    assert offenders == []
