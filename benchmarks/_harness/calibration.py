"""What "% of peak" divides by: this machine's own best matmul and copy, measured with
the same timer, threads and TF32 setting as the op, not a datasheet's figure (which a
1-thread CPU run or a clock-limited GPU never reaches). Measured once per process."""

from __future__ import annotations

import functools

import torch

from .controls import Controls
from .devices import Device
from .measure import measure_seconds
from .prepare import prepare
from .warmup import warm_up

CALIBRATION_MATMUL = {"cpu": 1024, "cuda": 8192}  # n of an n x n x n product
CALIBRATION_COPY_BYTES = {"cpu": 64 * 2**20, "cuda": 1024 * 2**20}
CALIBRATION_MIN_RUN_TIME = 0.2


@functools.cache
def peak_matmul_gflops(device: Device, dtype: str, controls: Controls) -> float:
    n = CALIBRATION_MATMUL[device.name]
    product = prepare("matmul", "mm", device=device.name, shape=(n, n, n), dtype=dtype)
    seconds = measure_seconds(product.call, controls.threads, CALIBRATION_MIN_RUN_TIME)
    return product.case.flops / seconds / 1e9


@functools.cache
def peak_copy_gbps(device: Device, controls: Controls) -> float:
    """A device-to-device (or RAM-to-RAM) copy, counting bytes read and written."""
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
