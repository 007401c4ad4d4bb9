"""Instruction counts: CPU instructions of tensorops cases under valgrind's callgrind, at one
thread. The same count for the same binary and inputs whatever else the machine runs, so a
2% change shows where wall time's 10% drift hides it.

Most of a count's cost is valgrind running the interpreter and torch's import, so every
case of a commit is counted under one valgrind process (:func:`count_cases`): it imports
torch once and forks a child per case, and each child turns collection on around its calls
and dumps it, with the toggles ``Timer.collect_callgrind`` uses
(``torch._C._valgrind_toggle`` and ``_valgrind_toggle_and_dump_stats``). Each dump is read
with ``callgrind_annotate`` into torch's ``FunctionCounts`` and denoised as torch does.

Valgrind runs uninstrumented until a child has prepared its case: instrumented, torch's
import alone takes 65 s under callgrind, uninstrumented 17 s (measured here). torch binds
callgrind's collection toggle but not ``CALLGRIND_START_INSTRUMENTATION``, so a child
calls that macro from a four-line C library built against valgrind's own ``callgrind.h``
(:func:`instrumentation_switch`). Where no C compiler or header is found, valgrind
instruments from the start: slower, the same counts.

A count must come out the same in every run, so nothing in the process may vary: string
hashes are fixed (``PYTHONHASHSEED=0``), every case starts from the same forked state (not
from the heap the cases before it left), the warm-up is a fixed number of calls (a timed
one, ending after more or fewer calls, leaves malloc's heap in another state, and malloc
then runs other instructions), and the garbage collector waits until a count is taken.
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
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
from torch.utils.benchmark import Timer
from torch.utils.benchmark.utils.valgrind_wrapper.timer_interface import (
    FunctionCount,
    FunctionCounts,
)

from .._names import CALLGRIND_DIR_ENV, kept_functions
from . import allocator

# Calls per count: the same as the first counts' (Timer.collect_callgrind(number=10)).
NUMBER = 10
# Children counting at once, at most: each holds a valgrind'd interpreter's memory.
MAX_JOBS = 4
# The code torch runs under valgrind on every host with AVX2: valgrind presents its own
# CPU (AVX2, no AVX-512), so the counts and their floors are the same on an AVX-512 host
# as on an AVX2-only runner (docs/explanation/measurement.md, "Instruction counts"). A
# valgrind that presented the host's own instructions would end that; the count process
# says which it ran.
COUNTED_CPU = "AVX2"


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


# The program valgrind runs: it counts every case in a child of its own (counter.py).
COUNTER = Path(__file__).with_name("counter.py")

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


def count_cases(cases: Iterable[CountCase]) -> dict[str, float | str | CountFailed]:
    """Instructions per call of every case, from one valgrind process; a case that cannot
    run on this machine maps to the reason, one whose counting failed to a CountFailed.
    With ``$TENSOROPS_CALLGRIND_DIR`` set, each case's function counts are kept under it,
    by commit (``$ASV_COMMIT``)."""
    require_valgrind()
    cases = list(cases)
    root = Path(__file__).resolve().parents[2]  # the folder holding `benchmarks`
    with tempfile.TemporaryDirectory(prefix="counts-") as scratch:
        listed = Path(scratch) / "cases.json"
        listed.write_text(json.dumps([asdict(case) for case in cases]))
        outcomes = Path(scratch) / "outcomes"
        outcomes.mkdir()
        switch = instrumentation_switch(Path(scratch))
        done = subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                f"--callgrind-out-file={scratch}/callgrind.%p",
                f"--instr-atstart={'no' if switch else 'yes'}",
                "--collect-atstart=no",
                sys.executable,
                str(COUNTER),
                str(root),
                str(listed),
                str(outcomes),
                str(jobs()),
                str(switch or ""),
            ],
            capture_output=True,
            text=True,
            env={**allocator.without_preload(os.environ), "PYTHONHASHSEED": "0"},
        )
        if done.returncode != 0:
            raise RuntimeError(f"callgrind counting failed: {done.stderr.strip()[-500:]}")
        say_counted_cpu((outcomes / "cpu").read_text())
        with ThreadPoolExecutor(jobs()) as pool:  # callgrind_annotate: a process per dump
            read = pool.map(lambda i: read_outcome(Path(scratch), i, cases[i]), range(len(cases)))
            return {case.key: counted for case, counted in zip(cases, read, strict=True)}


def say_counted_cpu(picked: str) -> None:
    """One line on stderr (asv's log of the count rows' setup): the code torch ran under
    valgrind, and whether it is the code every other host's counts ran."""
    same = "as on every host with AVX2" if picked == COUNTED_CPU else f"not {COUNTED_CPU}"
    print(f"callgrind: torch ran its {picked} code under valgrind, {same}", file=sys.stderr)


@dataclass(frozen=True)
class CountFailed:
    """A case whose counting child raised or died: its row fails, the others are counted
    (each case has a child of its own, so one crash costs one count)."""

    why: str


def read_outcome(scratch: Path, index: int, case: CountCase) -> float | str | CountFailed:
    """The count of case ``index`` (its functions kept), why it cannot run here, or why
    counting it failed."""
    written = scratch / "outcomes" / str(index)
    if not written.exists():
        return CountFailed(f"callgrind counting of {case.key} ended without an outcome")
    outcome = json.loads(written.read_text())
    if "error" in outcome:
        return CountFailed(f"callgrind counting of {case.key} failed: {outcome['error']}")
    if "skip" in outcome:
        return outcome["skip"]
    functions = function_counts(scratch / f"callgrind.{outcome['pid']}.1")
    keep_functions(case, functions)
    return functions.denoise().sum() / NUMBER


INSTRUMENTATION_SWITCH = """
#include <valgrind/callgrind.h>
void start_instrumentation(void) { CALLGRIND_START_INSTRUMENTATION; }
void discard_translations(void) { VALGRIND_DISCARD_TRANSLATIONS(0x1000, ~(unsigned long)0xfff); }
"""


def instrumentation_switch(folder: Path) -> Path | None:
    """A shared library whose ``start_instrumentation()`` is callgrind.h's macro and whose
    ``discard_translations()`` drops every translation valgrind holds, built in ``folder``;
    None where no C compiler or valgrind header is found."""
    compiler = shutil.which(os.environ.get("CC", "cc"))
    if compiler is None:
        return None
    source, library = folder / "switch.c", folder / "switch.so"
    source.write_text(INSTRUMENTATION_SWITCH)
    built = subprocess.run(
        [compiler, "-O1", "-shared", "-fPIC", "-o", str(library), str(source)],
        capture_output=True,
    )
    return library if built.returncode == 0 else None


def jobs() -> int:
    """Cases counted at once: one per CPU this process may use (each child is one thread,
    and a count does not depend on what else runs), at most MAX_JOBS."""
    return max(1, min(MAX_JOBS, len(os.sched_getaffinity(0))))


def keep_functions(case: CountCase, functions: FunctionCounts) -> None:
    folder = os.environ.get(CALLGRIND_DIR_ENV)
    if not folder:
        return
    commit = os.environ.get("ASV_COMMIT", "working-tree")
    target = kept_functions(Path(folder), commit, torch.__version__, case.key)
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
