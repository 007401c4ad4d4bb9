from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
import torch

import tensorops
from benchmarks import _harness
from benchmarks._harness import devices
from tensorops._registry import _OPS, define_op, variant
from tests.support import REPO_ROOT  # noqa: F401 - fixtures and tests share it
from tests.support.lanes import ASV_ENVS_ENV
from tests.support.probe_workers import make_probe_repo


@pytest.fixture(scope="session")
def shared_asv_env(tmp_path_factory) -> Path:
    """asv's env folder, shared by every temporary project repository of the session (and
    of the lanes runner's later sessions on the same worker)."""
    kept = os.environ.get(ASV_ENVS_ENV)
    if not kept:
        return tmp_path_factory.mktemp("asv-env")
    folder = Path(kept) / os.environ.get("PYTEST_XDIST_WORKER", "main")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
def probe_repo(tmp_path) -> Path:
    """The real harness's workers over probe suites (tests/support/probe_workers.py)."""
    return make_probe_repo(tmp_path)


@pytest.fixture
def quick_alternation(monkeypatch):
    """One round of two pairs a row; a hang is given up on after a few seconds."""
    from tools._lib.measure import alternation, workers

    monkeypatch.setattr(alternation, "FIRST_ROUNDS", 1)
    monkeypatch.setattr(alternation, "MAX_ROUNDS", 1)
    monkeypatch.setattr(alternation, "PAIRS", 2)
    monkeypatch.setattr(workers, "BLOCK_SLACK_SECONDS", 2.0)
    monkeypatch.setattr(workers, "SETUP_SECONDS", 15.0)


@pytest.fixture
def fresh_cache():
    """No prepared case or calibration survives from one test to the next."""
    _harness.drop_cache()
    yield
    _harness.drop_cache()


@pytest.fixture
def probe_op(fresh_cache):
    """A registered op whose single variant counts its calls and can be slowed down."""
    state = {"calls": 0, "durations": []}

    def run(x):
        state["calls"] += 1
        state["last_input"] = x
        if state["durations"]:
            time.sleep(state["durations"].pop(0))
        return x + 1

    define_op(
        "probe",
        make_inputs=lambda case: tuple(tensorops.cases.random_inputs(case, case.shape)),
        flops=lambda case: 1000,
        bytes_moved=lambda case: 8000,
        reference="plus_one",
    )
    variant("probe", "plus_one")(run)
    yield state
    del _OPS["probe"]


@pytest.fixture
def fake_cuda(monkeypatch):
    """CUDA as the harness sees it, on the CPU: available, with counted synchronizes."""
    syncs = []
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *args, **kwargs: syncs.append(1))
    monkeypatch.setattr(devices.CudaDevice, "tensor_device", "cpu")
    return syncs
