"""Instruction counts: CPU instructions of a tensorops case under valgrind's callgrind,
at one thread. The same count for the same binary and inputs whatever else the machine
runs, so a 2% change shows where wall time's 10% drift hides it."""

from __future__ import annotations

import os
import shutil
import sys

from torch.utils.benchmark import Timer


def require_valgrind() -> None:
    if shutil.which("valgrind") is None:
        raise NotImplementedError("valgrind is not installed; instruction counts need it")


def instructions_per_call(
    op: str, variant: str, shape: tuple[int, ...], dtype: str = "float32", number: int = 10
) -> float:
    """Instructions one call of a tensorops case executes.

    The child interpreter builds the case from its description (tensors cannot be
    handed over), seeded as here.
    """
    setup = (
        "import tensorops\n"
        f"case = tensorops.Case({op!r}, {tuple(shape)!r}, dtype={dtype!r}, device='cpu')\n"
        f"call = tensorops.get_variant({op!r}, {variant!r}).bind(case.inputs())\n"
        "call()\n"
    )
    return callgrind_instructions("call()", setup, number)


def callgrind_instructions(stmt: str, setup: str, number: int) -> float:
    """Instructions per run of ``stmt``, counted by valgrind's callgrind through
    ``Timer.collect_callgrind`` at one thread and denoised by torch (CPython's own
    bookkeeping dropped).

    callgrind runs the statement in a child interpreter started as ``python`` from PATH,
    so this one's folder goes first.
    """
    require_valgrind()
    saved_path = os.environ.get("PATH", "")
    os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + saved_path
    try:
        stats = Timer(stmt, setup=setup, num_threads=1).collect_callgrind(number=number)
    finally:
        os.environ["PATH"] = saved_path
    return stats.counts(denoise=True) / number
