"""What "% of peak" divides by: this machine's own best matmul and copy, measured with
the same timer, threads and TF32 setting as the op, not a datasheet's figure (which a
1-thread CPU run or a clock-limited GPU never reaches).

Measured once per asv run: asv starts a process per row and round, and each calibrating
again cost 80 s of every nightly commit (the matmul's % of peak rows alone). The first
process of a run at a commit measures and leaves the figure in the run's calibration
folder, which the tools make for each asv run, private to this user, and remove after it
(``TENSOROPS_RUN_DIR``, tools/_lib/asv/run.py); the run's later processes at that
commit read it. Never a folder at a path another user could guess and fill first: with no
run's folder (asv by hand, or outside asv), each process calibrates for itself."""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable

import torch

from .controls import Controls
from .devices import Device
from .measure import measure_seconds
from .prepare import prepare
from .run_folder import commit_folder, write_whole
from .warmup import warm_up

CALIBRATION_MATMUL = {"cpu": 1024, "cuda": 8192}  # n of an n x n x n product
CALIBRATION_COPY_BYTES = {"cpu": 64 * 2**20, "cuda": 1024 * 2**20}
CALIBRATION_MIN_RUN_TIME = 0.2


def once_per_run(key: str, measure: Callable[[], float]) -> float:
    """``measure()``, or the figure an earlier process of this asv run measured for
    ``key`` at this commit (in the run's folder, when the tools gave it one: run_folder.py)."""
    folder = commit_folder()
    if folder is None:
        return measure()
    path = folder / f"{hashlib.sha256(key.encode()).hexdigest()[:16]}.json"
    try:
        return float(json.loads(path.read_text())["value"])
    except (OSError, ValueError, KeyError, TypeError):
        pass
    value = measure()
    write_whole(path, json.dumps({"key": key, "value": value}))
    return value


@functools.cache
def peak_matmul_gflops(device: Device, dtype: str, controls: Controls) -> float:
    def measure() -> float:
        n = CALIBRATION_MATMUL[device.name]
        product = prepare("matmul", "mm", device=device.name, shape=(n, n, n), dtype=dtype)
        seconds = measure_seconds(product.call, controls.threads, CALIBRATION_MIN_RUN_TIME)
        return product.case.flops / seconds / 1e9

    return once_per_run(f"matmul {device.name} {dtype} {controls!r}", measure)


@functools.cache
def peak_copy_gbps(device: Device, controls: Controls) -> float:
    """A device-to-device (or RAM-to-RAM) copy, counting bytes read and written."""
    return once_per_run(f"copy {device.name} {controls!r}", lambda: copy_gbps(device, controls))


def copy_gbps(device: Device, controls: Controls) -> float:
    size = CALIBRATION_COPY_BYTES[device.name]
    source = torch.empty(size, dtype=torch.uint8, device=device.tensor_device).random_()
    target = torch.empty_like(source)
    warm_up(lambda: target.copy_(source), device.synchronize)
    copy_seconds = measure_seconds(
        lambda: target.copy_(source), controls.threads, CALIBRATION_MIN_RUN_TIME
    )
    return 2 * size / copy_seconds / 1e9


def forget_calibration() -> None:
    peak_matmul_gflops.cache_clear()
    peak_copy_gbps.cache_clear()
