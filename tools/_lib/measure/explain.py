"""Why a row got slower between two sides (two commits, or two torch releases), from the
row's own call: for a wall-time row the torch.profiler operator table of each side side by
side (the row set up by the worker, as asv runs it), for an instruction count the functions
whose counts grew most (callgrind's dumps, kept per commit and release by the counting run).
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import json
from pathlib import Path

from benchmarks._names import CALLGRIND_DIR, kept_functions
from tools._lib.asv.matrix import default_release
from tools._lib.base.text import cell, code
from tools._lib.measure.alternation import profile_pair, profile_side
from tools._lib.measure.comparison import is_count
from tools._lib.measure.workers import Side

PROFILED_CALLS = 5
PROFILE_ROWS = 12
GROWN_FUNCTIONS = 15


def per_call(operators: dict[str, list[float]], calls: int) -> dict[str, tuple]:
    return {key: tuple(value / calls for value in values) for key, values in operators.items()}


def profile_table(before: dict, after: dict, rows: int = PROFILE_ROWS) -> str:
    """The two commits' operators side by side, those whose self time grew most first."""

    def self_us(table: dict, key: str) -> float:
        return table.get(key, (0.0, 0.0, 0.0))[0]

    keys = sorted(
        set(before) | set(after), key=lambda k: self_us(after, k) - self_us(before, k), reverse=True
    )[:rows]
    lines = [
        "| operator | self CPU before (µs/call) | after | calls before | after |",
        "|---|---:|---:|---:|---:|",
    ]
    for key in keys:
        old, new = before.get(key, (0.0, 0.0, 0.0)), after.get(key, (0.0, 0.0, 0.0))
        lines.append(f"| {cell(key)} | {old[0]:.1f} | {new[0]:.1f} | {old[2]:g} | {new[2]:g} |")
    return "\n".join(lines)


def explain_releases(
    repo: Path, commit: str, sides: tuple[Side, Side], torches: tuple[str, str], row
) -> str:
    """Why a row moved from one release to the other at ``commit``, as Markdown: the
    profiler's operators of a timed row under each release's interpreter (``sides``), and
    the functions of its count twin (or of the count itself) that grew or shrank most."""
    parts = []
    if not is_count(row.unit):
        before, after = (
            per_call(profile_side(repo, side, row.label, PROFILED_CALLS), PROFILED_CALLS)
            for side in sides
        )
        parts.append(
            f"torch.profiler `key_averages()` of the row's call, {PROFILED_CALLS} calls under "
            f"each release ({sides[0].name} before, {sides[1].name} after), per call:\n\n"
            + profile_table(before, after)
        )
    counted = row.label if is_count(row.unit) else row.twin
    if counted:
        functions = function_changes(
            repo, counted, (commit, torches[0]), (commit, torches[1]), both_ways=True
        )
        parts.append(functions or "callgrind kept no function counts of this case.")
    return "\n\n".join(parts)


def explain_time(repo: Path, parent: str, guilty: str, label: str) -> str:
    """The profiler's view of the row at both commits, as Markdown."""
    profiled = profile_pair(repo, parent, guilty, label, PROFILED_CALLS)
    before, after = (per_call(operators, PROFILED_CALLS) for operators in profiled)
    return (
        f"torch.profiler `key_averages()` of the row's call, {PROFILED_CALLS} calls at each "
        f"commit (`{parent[:12]}` before, `{guilty[:12]}` after), per call:\n\n"
        + profile_table(before, after)
    )


def counted_case(label: str) -> str | None:
    """The counted case's key of an instruction-count row, None for another row."""
    name, _, params = label.partition("(")
    module, cls, _ = name.rsplit(".", 2)
    suite = getattr(importlib.import_module(f"benchmarks.{module}"), cls, None)
    if suite is None or not hasattr(suite, "case_for"):
        return None
    named = dict(zip(suite.param_names, ast.literal_eval(f"({params}"), strict=True))
    return suite().case_for(named["case"]).key


def functions_at(repo: Path, commit: str, torch_version: str, key: str):
    """The case's exclusive function counts per call at ``commit`` under a torch release,
    as torch's ``CallgrindStats`` (for its ``as_standardized`` and ``delta``), or None when
    that run kept none."""
    from torch.utils.benchmark.utils.common import TaskSpec
    from torch.utils.benchmark.utils.valgrind_wrapper.timer_interface import (
        CallgrindStats,
        FunctionCount,
        FunctionCounts,
    )

    kept = kept_functions(repo / CALLGRIND_DIR, commit, torch_version, key)
    if not kept.exists():
        return None
    functions = json.loads(kept.read_text())["functions"]
    counts = FunctionCounts(tuple(FunctionCount(c, name) for c, name in functions), False)
    nothing = FunctionCounts((), inclusive=True)
    empty = FunctionCounts((), inclusive=False)
    return CallgrindStats(TaskSpec("call()", ""), 1, False, nothing, empty, nothing, counts, None)


def shortened(function: str, keep: int = 160) -> str:
    """A C++ symbol cut in the middle when templates make it long."""
    if len(function) <= keep:
        return function
    return f"{function[: keep // 2]}…{function[-keep // 2 :]}"


def function_changes(
    repo: Path, label: str, before: tuple[str, str], after: tuple[str, str], both_ways: bool
) -> str:
    """The functions whose instructions per call grew most (and, ``both_ways``, shrank
    most) from one side to the other, as Markdown; a side is a commit and a torch release.
    Empty when the counts were not kept."""
    key = counted_case(label)
    if key is None:
        return ""
    old, new = functions_at(repo, *before, key), functions_at(repo, *after, key)
    if old is None or new is None:
        return ""
    delta = list(new.as_standardized().delta(old.as_standardized()))
    grown = sorted((c for c in delta if c.count > 0), key=lambda c: -c.count)
    shrunk = sorted((c for c in delta if c.count < 0), key=lambda c: c.count)
    chosen = grown[:GROWN_FUNCTIONS] + (shrunk[:GROWN_FUNCTIONS] if both_ways else [])
    ways = "grew or shrank most" if both_ways else "grew most"
    sides = [f"`{commit[:12]}` torch {torch}" for commit, torch in (before, after)]
    return "\n".join(
        [
            f"Functions whose instructions per call {ways}, {sides[0]} → {sides[1]} "
            f"(callgrind, {code(key)}):",
            "",
            "| instructions | function |",
            "|---:|---|",
            *(f"| {c.count:+,.1f} | {cell(shortened(c.function))} |" for c in chosen),
        ]
    )


def grown_functions(repo: Path, before: str, after: str, label: str) -> str:
    """The functions whose instructions per call grew most from commit ``before`` to
    ``after`` under the default release, as Markdown; empty when the counts were not
    kept."""
    torch = default_release(repo).torch
    return function_changes(repo, label, (before, torch), (after, torch), both_ways=False)


def explained(repo: Path, record):
    """A confirmed record with the why of its step: the profiler's operators at both
    commits, or for a count the functions that grew."""
    step = record.step
    if is_count(step.unit):
        why = grown_functions(repo, record.parent, record.guilty, step.label) or (
            "callgrind kept no function counts of these commits on this machine."
        )
    else:
        why = explain_time(repo, record.parent, record.guilty, step.label)
    return dataclasses.replace(record, explanation=why)
