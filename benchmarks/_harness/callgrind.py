"""Instruction counts: CPU instructions of tensorops cases under valgrind's callgrind, at one
thread. The same count for the same binary and inputs whatever else the machine runs, so a
2% change shows where wall time's 10% drift hides it.

Most of a count's cost is valgrind running the interpreter and torch's import, so every
case of a commit is counted in one valgrind process (:func:`count_cases`): collection is
off at start, and around each case the script turns it on and dumps it, with the toggles
``Timer.collect_callgrind`` uses (``torch._C._valgrind_toggle`` and
``_valgrind_toggle_and_dump_stats``), one dump per case. Each dump is read with
``callgrind_annotate`` into torch's ``FunctionCounts`` and denoised as torch does.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

from torch.utils.benchmark import Timer
from torch.utils.benchmark.utils.valgrind_wrapper.timer_interface import (
    FunctionCount,
    FunctionCounts,
)

# Calls per count: the same as the first counts' (Timer.collect_callgrind(number=10)).
NUMBER = 10
# Where a count's functions are kept, per commit, for the PR gate's "why" (its env var).
FUNCTIONS_DIR_ENV = "TENSOROPS_CALLGRIND_DIR"


def require_valgrind() -> None:
    if shutil.which("valgrind") is None or shutil.which("callgrind_annotate") is None:
        raise NotImplementedError("valgrind is not installed; instruction counts need it")


@dataclass(frozen=True)
class CountCase:
    """One counted call: a tensorops case at one thread on the CPU."""

    op: str
    variant: str
    shape: tuple[int, ...]
    dtype: str = "float32"
    layout: str = "contiguous"
    backward: bool = False

    @property
    def key(self) -> str:
        parts = [self.op, self.variant, self.dtype, self.layout, str(tuple(self.shape))]
        return "/".join(parts + (["backward"] if self.backward else []))


# Run by the interpreter under valgrind: each case built by the harness as a benchmark
# builds it, warmed up, then NUMBER calls counted, one dump per case. Prints a JSON line
# per case: its dump number, or why it could not run.
COUNTER = f"""
import gc, json, sys
sys.path.insert(0, sys.argv[1])
import torch
import torch._C as bindings
from benchmarks._harness.controls import Controls, controlled
from benchmarks._harness.prepare import prepare

torch.set_num_threads(1)
counted = compile("\\n".join(["call()"] * {NUMBER}), "<counted>", "exec")
dumps = 0
for case in json.load(open(sys.argv[2])):
    with controlled(Controls(threads=1)):
        try:
            prepared = prepare(case["op"], case["variant"], device="cpu",
                               shape=tuple(case["shape"]), dtype=case["dtype"],
                               layout=case["layout"], backward=case["backward"])
        except NotImplementedError as skip:
            print(json.dumps({{"skip": str(skip)}}), flush=True)
            continue
        namespace = {{"call": prepared.call}}
        exec(counted, namespace)
        gc.collect()
        bindings._valgrind_toggle()
        exec(counted, namespace)
        bindings._valgrind_toggle_and_dump_stats()
        dumps += 1
        print(json.dumps({{"dump": dumps}}), flush=True)
"""

ANNOTATED = re.compile(r"^\s*([0-9,]+)\s+(.+:.+)$")


def function_counts(dump: Path) -> FunctionCounts:
    """A dump's exclusive instruction counts per function, read as torch reads them
    (torch's parser is a closure inside its wrapper, so it is not callable from here)."""
    annotated = subprocess.run(
        ["callgrind_annotate", "--inclusive=no", "--threshold=100", "--show-percs=no", str(dump)],
        capture_output=True,
        text=True,
        check=True,
    )
    lines = annotated.stdout.splitlines()
    total = next(
        int(line.split()[0].replace(",", "")) for line in lines if "PROGRAM TOTALS" in line
    )
    start = next(i for i, line in enumerate(lines) if re.match(r"Ir\s+file:function", line))
    counts = []
    for line in lines[start + 1 :]:
        if matched := ANNOTATED.match(line):
            count = int(matched.group(1).replace(",", ""))
            if count != total:  # callgrind repeats the totals as a top-level symbol
                counts.append(FunctionCount(count, matched.group(2)))
        elif not re.match(r"^-*$", line):
            break
    return FunctionCounts(tuple(sorted(counts, reverse=True)), inclusive=False)


def count_cases(cases: Iterable[CountCase]) -> dict[str, float | str]:
    """Instructions per call of every case, from one valgrind process; a case that cannot
    run on this machine maps to the reason. With ``$TENSOROPS_CALLGRIND_DIR`` set, each
    case's function counts are kept under it, by commit (``$ASV_COMMIT``)."""
    require_valgrind()
    cases = list(cases)
    root = Path(__file__).resolve().parents[2]  # the folder holding `benchmarks`
    with tempfile.TemporaryDirectory(prefix="counts-") as scratch:
        listed = Path(scratch) / "cases.json"
        listed.write_text(json.dumps([asdict(case) for case in cases]))
        dumps = Path(scratch) / "callgrind.out"
        done = subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                f"--callgrind-out-file={dumps}",
                "--dump-line=yes",
                "--dump-instr=yes",
                "--instr-atstart=yes",
                "--collect-atstart=no",
                sys.executable,
                "-c",
                COUNTER,
                str(root),
                str(listed),
            ],
            capture_output=True,
            text=True,
        )
        outcomes = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        if done.returncode != 0 or len(outcomes) != len(cases):
            raise RuntimeError(f"callgrind counting failed: {done.stderr.strip()[-500:]}")
        counts: dict[str, float | str] = {}
        for case, outcome in zip(cases, outcomes, strict=True):
            if "skip" in outcome:
                counts[case.key] = outcome["skip"]
                continue
            functions = function_counts(Path(f"{dumps}.{outcome['dump']}"))
            counts[case.key] = functions.denoise().sum() / NUMBER
            keep_functions(case, functions)
    return counts


def keep_functions(case: CountCase, functions: FunctionCounts) -> None:
    folder = os.environ.get(FUNCTIONS_DIR_ENV)
    if not folder:
        return
    commit = os.environ.get("ASV_COMMIT", "working-tree")
    target = Path(folder) / commit / (re.sub(r"[^\w.-]+", "_", case.key) + ".json")
    target.parent.mkdir(parents=True, exist_ok=True)
    per_call = [[count / NUMBER, name] for count, name in functions]
    target.write_text(json.dumps({"case": case.key, "functions": per_call}))


def instructions_per_call(
    op: str, variant: str, shape: tuple[int, ...], dtype: str = "float32", number: int = 10
) -> float:
    """Instructions one call of a tensorops case executes, counted in a valgrind process
    of its own (a study's calibration; the suites count in one process per commit)."""
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
