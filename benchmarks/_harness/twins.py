"""Instruction-count twins: for every case the wall-time suites time on the CPU, a
``track_instructions`` row counting the same op, variant, dtype and layout (and training
step) at a small shape, derived from the suites' own declarations, so an op added later
gets its twin with no benchmark code of its own.

Every count of a commit comes from one valgrind process (callgrind.count_cases), in asv's
``setup_cache``: defined once here, it runs once per commit and environment for every twin
class (asv keys a cache by the function's source), and hands the counts to each row. It
counts the cases of the rows asv was asked to run: asv does not tell a ``setup_cache`` its
``--bench`` selection, so the tools hand the same regexes over in ``$TENSOROPS_BENCH``
(tools.common.asv); unset, every case is counted.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import re
from collections.abc import Iterable
from typing import Any

from .._names import COUNT_UNIT, SELECTION_ENV
from .base import OpBenchmark
from .callgrind import CountCase, CountFailed, count_cases
from .devices import DEVICES
from .tiers import benchmark_classes, declared_tier, row_label, tier_of

# A twin's shape: the suite's, each largest dimension halved until the shape's product is
# at most this. Small enough that a call under callgrind (about 50x slower) stays cheap. A
# suite whose shape's product says little of its cost states ``count_shape`` itself.
COUNT_ELEMENTS = 2**15
# Compiled variants are left out: under valgrind, counting attention's compiled bfloat16
# case killed its child, and a child that dies fails every count of the commit
# (docs/explanation/measurement.md, "Instruction counts").
UNCOUNTED_VARIANTS = {"compiled"}


def count_shape(shape: Iterable[int]) -> tuple[int, ...]:
    """``shape`` shrunk for counting: its largest dimension halved, again and again."""
    shape = list(shape)
    while math.prod(shape) > COUNT_ELEMENTS and max(shape) > 1:
        largest = shape.index(max(shape))
        shape[largest] //= 2
    return tuple(shape)


def timed_methods(suite: type) -> list[str]:
    """The ``time_`` methods of a suite class whose cases have twins (none for the sweeps,
    which are wall time only, nor for a class with no CPU rows)."""
    timed = [name for name in dir(suite) if name.startswith("time_")]
    return timed if declared_tier(suite) != "weekly" and suite.cpu_rows else []


def twin_case(suite: type, named: dict[str, Any]) -> CountCase | None:
    """The counted case of one row of a suite class (its params by name), None where the
    row has no twin (another device, an uncounted variant)."""
    if named["device"] != "cpu":
        return None
    op, variant, spec = suite().resolve(named)
    if variant in UNCOUNTED_VARIANTS:
        return None
    shape = getattr(suite, "count_shape", None) or count_shape(spec["shape"])
    return CountCase(op, variant, shape, spec["dtype"], spec["layout"], suite.backward)


def timed_cases(suites: Iterable[type]) -> dict[CountCase, str]:
    """Every case the suite classes time on the CPU (``time_`` rows), at its count shape,
    each once, with its tier: ``pr`` when one of the rows it counts for is."""
    cases: dict[CountCase, str] = {}
    for suite in suites:
        timed = timed_methods(suite)
        if not timed:
            continue
        for combination in itertools.product(*suite.params):
            named = dict(zip(suite.param_names, combination, strict=True))
            case = twin_case(suite, named)
            if case is None:
                continue
            in_pr = any(tier_of(suite, method, named) == "pr" for method in timed)
            cases[case] = "pr" if in_pr or cases.get(case) == "pr" else "nightly"
    return dict(sorted(cases.items(), key=lambda item: item[0].key))


def twins_of_rows(suites: Iterable[type]) -> dict[str, str]:
    """Each ``time_`` row of the suite classes (``name(params)``) and its count twin's
    row, for the rows that have one."""
    counted = {case: row for row, case in Counted.rows.items()}
    found = {}
    for suite in suites:
        module = suite.__module__.split(".", 1)[-1]
        for combination in itertools.product(*suite.params):
            named = dict(zip(suite.param_names, combination, strict=True))
            case = twin_case(suite, named) if timed_methods(suite) else None
            if case in counted:
                for method in timed_methods(suite):
                    found[row_label(f"{module}.{suite.__name__}.{method}", combination)] = counted[
                        case
                    ]
    return found


def label(case: CountCase) -> str:
    """The row's param: everything that identifies the case but the op."""
    return f"{case.variant} {case.dtype} {case.layout} {case.shape}"


class Counted:
    """Base of the count rows: one ``setup_cache`` for all of them (one valgrind process
    per commit), a ``setup`` that picks the row's count or skips saying why."""

    unit = COUNT_UNIT
    rounds = 1  # a count does not vary between rounds
    timeout = 600.0
    version = "1"  # as OpBenchmark's: history survives harness edits
    # Every count row (asv's ``name(params)``) and its case; set by bench_instructions.
    rows: dict[str, CountCase] = {}

    def setup_cache(self) -> dict[str, float | str]:
        chosen = selected_cases(Counted.rows, os.environ.get(SELECTION_ENV))
        try:
            return count_cases(chosen)
        except NotImplementedError as missing:  # no valgrind: every row skips, saying why
            return {case.key: str(missing) for case in chosen}

    setup_cache.timeout = 1800

    def case_for(self, case: Any) -> CountCase:
        """The counted case of the row's ``case`` param."""
        raise NotImplementedError

    def setup(self, counts: dict, device: str, case: Any) -> None:
        self.count = self.count_of(counts, self.case_for(case), device)

    def count_of(self, counts: dict, case: CountCase, device: str) -> float:
        if device != "cpu":
            raise NotImplementedError("instruction counts are of CPU code (valgrind)")
        counted = counts.get(case.key, "not counted in this commit's valgrind run")
        if isinstance(counted, str):
            raise NotImplementedError(counted)
        if isinstance(counted, CountFailed):  # this row fails, as a benchmark that raised
            raise RuntimeError(counted.why)
        return counted


def twin_classes(cases: dict[CountCase, str], module: str) -> dict[str, type]:
    """One class per op (and one per op's training step), its rows the cases; a case of
    the ``pr`` tier is a ``pr`` row (the class's ``pr`` mapping)."""
    grouped = itertools.groupby(
        sorted(cases, key=lambda c: (c.op, c.backward, c.key)), key=lambda c: (c.op, c.backward)
    )
    classes = {}
    for (op, backward), members in grouped:
        by_label = {label(case): case for case in members}
        name = re.sub(r"(?:^|_)(\w)", lambda m: m.group(1).upper(), op) + (
            "Training" if backward else ""
        )

        def track_instructions(self, counts, device, case):
            return self.count

        classes[name] = type(
            name,
            (Counted,),
            {
                "params": [DEVICES, sorted(by_label)],
                "param_names": ["device", "case"],
                "tier": "nightly",
                "pr": {
                    "device": ["cpu"],
                    "case": [t for t, c in by_label.items() if cases[c] == "pr"],
                },
                "cases": by_label,
                "case_for": lambda self, case: self.cases[case],
                "track_instructions": track_instructions,
                "__module__": module,
                "__qualname__": name,
                "__doc__": f"Instructions per call of {op}"
                + (" forward and backward" if backward else "")
                + ", per variant, dtype and layout.",
            },
        )
    return classes


def count_rows(classes: Iterable[type]) -> dict[str, CountCase]:
    """asv's ``name(params)`` of every CPU count row of the classes, and its case."""
    rows = {}
    for cls in classes:
        name = f"{cls.__module__.split('.', 1)[-1]}.{cls.__name__}.track_instructions"
        for combination in itertools.product(*cls.params):
            named = dict(zip(cls.param_names, combination, strict=True))
            if named["device"] == "cpu":
                rows[row_label(name, combination)] = cls().case_for(named["case"])
    return rows


def selected_cases(rows: dict[str, CountCase], selection: str | None) -> list[CountCase]:
    """The cases of the rows asv's ``--bench`` regexes (``selection``, a JSON list) pick,
    as asv picks them (``re.search`` in ``name(params)``); all of them when unset."""
    regexes = [re.compile(regex) for regex in json.loads(selection)] if selection else []
    chosen = {
        case.key: case
        for row, case in rows.items()
        if not regexes or any(regex.search(row) for regex in regexes)
    }
    return sorted(chosen.values(), key=lambda case: case.key)


def suite_classes(modules: Iterable[Any]) -> list[type]:
    """The OpBenchmark classes the suite modules define."""
    return [cls for cls in benchmark_classes(modules) if issubclass(cls, OpBenchmark)]
