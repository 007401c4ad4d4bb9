"""Planted slowdowns, for the studies that measure whether one is caught: the rows a plant can
go into (a CPU row whose variant is a function of its own), and the plants themselves, put
into that function's source in a clone (a busy-wait sized from the call's own time, or
straight-line statements sized from its instruction count)."""

from __future__ import annotations

import ast
import functools
import itertools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tools._lib.base.cli import BadInput

# The instruction plant: straight-line statements, each the same two bytecodes, so N of
# them cost N times one, with no fixed cost (a loop's setup alone, about a thousand
# instructions, was 2% of a small case by itself).
PLANTED_LINE = "_planted = None\n"
CALIBRATION_LINES = (1_000, 3_000)
# The time plant. A fixed wait sized from a measurement in this process was a different
# ratio in asv's: a row that ran 2.5x slower in one comparison's processes read a 1.3x
# plant as 1.2 (docs/explanation/comparison.md, "Is a planted slowdown caught?").
SLOWED_BY = "_planted_slowdown"
# Its imports and function, pasted after the module's ``import torch`` (its docstring left out).
SLOWING_DECORATOR = Path(__file__).with_name("planted_slowdown.py")


@dataclass(frozen=True)
class PlantedRow:
    """A benchmark row, and the tensorops case it measures."""

    label: str  # name(params), as asv shows and --bench selects it
    op: str
    variant: str
    spec: dict
    backward: bool = False
    cold: bool = False  # the class's cold_inputs
    tier: str = "nightly"


def time_rows() -> list[PlantedRow]:
    """Every ``time_`` row of the default suite on the CPU whose variant is a function of
    its own (the plant goes into it)."""
    from benchmarks._harness.tiers import declared_tier, tier_of
    from benchmarks._harness.twins import UNCOUNTED_VARIANTS, suite_classes
    from benchmarks.bench_instructions import SUITES

    rows = []
    for suite in suite_classes(SUITES):
        methods = [name for name in dir(suite) if name.startswith("time_")]
        if declared_tier(suite) == "weekly" or not suite.cpu_rows or not methods:
            continue  # the rows the gate and the nightly run
        for combination in itertools.product(*suite.params):
            named = dict(zip(suite.param_names, combination, strict=True))
            if named["device"] != "cpu":
                continue
            op, variant, spec = suite().resolve(named)
            if variant in UNCOUNTED_VARIANTS or variant_source(op, variant) is None:
                continue
            params = ", ".join(repr(value) for value in combination)
            name = f"{suite.__module__.split('.')[-1]}.{suite.__name__}.{methods[0]}"
            label = f"{name}({params})"
            tier = tier_of(suite, methods[0], named)
            rows.append(
                PlantedRow(label, op, variant, spec, suite.backward, suite.cold_inputs, tier)
            )
    return rows


def count_rows() -> list[PlantedRow]:
    """Every count twin row whose variant is a function of its own."""
    from benchmarks import bench_instructions

    return [
        PlantedRow(label, case.op, case.variant, spec(case), case.backward)
        for label, case in bench_instructions.Counted.rows.items()
        if ".Instructions." not in label and variant_source(case.op, case.variant) is not None
    ]


def spec(case) -> dict:
    return {"device": "cpu", "dtype": case.dtype, "layout": case.layout, "shape": case.shape}


@dataclass(frozen=True)
class Source:
    """Where a variant function is: its file, its ``def`` line, its body's first line
    (after the docstring) and its last line."""

    path: Path
    def_line: int
    body_line: int
    end_line: int


def variant_source(op: str, variant: str) -> Source | None:
    """The function registered as ``@variant(op, variant)``; None for a variant made by a
    helper."""
    import tensorops

    for module in Path(tensorops.__file__).parent.glob("*.py"):
        tree = ast.parse(module.read_text())
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef):
                continue
            for decorator in node.decorator_list:
                if (
                    isinstance(decorator, ast.Call)
                    and getattr(decorator.func, "id", "") == "variant"
                    and [getattr(a, "value", None) for a in decorator.args[:2]] == [op, variant]
                ):
                    first = node.body[1] if ast.get_docstring(node) else node.body[0]
                    path = Path("src") / "tensorops" / module.name
                    return Source(path, node.lineno, first.lineno, node.end_lineno)
    return None


def insert_lines(repo: Path, relative: Path, line: int, lines: str, indent: str) -> None:
    """``lines``, indented, before line number ``line`` of ``relative``."""
    source = repo / relative
    text = source.read_text().splitlines(keepends=True)
    text.insert(line - 1, "".join(indent + x if x.strip() else x for x in lines.splitlines(True)))
    source.write_text("".join(text))


def plant_statements(repo: Path, row: PlantedRow, lines: str) -> None:
    """``lines`` at the top of the row's variant function's body."""
    where = variant_source(row.op, row.variant)
    insert_lines(repo, where.path, where.body_line, lines, "    ")


def plant_slowdown(repo: Path, row: PlantedRow, fraction: float) -> None:
    """The row's variant function decorated to busy-wait ``fraction`` of each call's time,
    the decorator defined after the module's ``import torch``."""
    where = variant_source(row.op, row.variant)
    source = repo / where.path
    if "\nimport torch\n" not in source.read_text():  # checked before the file is touched
        raise BadInput(f"{where.path} has no `import torch` line to define the plant by")
    insert_lines(repo, where.path, where.def_line, f"@{SLOWED_BY}({fraction!r})\n", "")
    text = source.read_text()
    pasted = "\n" + SLOWING_DECORATOR.read_text().split('"""', 2)[2].lstrip("\n")
    source.write_text(text.replace("\nimport torch\n", f"\nimport torch\n{pasted}", 1))


# The time plant inside the function's body alone, so that the change is the function's
# and nothing at module level: what a pull request's own slowdown in one function looks
# like to the gate's selection (the decorator above is module-level code, which selects
# every row that imports the module).
BODY_PLANT_BEFORE = """\
_planted_clock = __import__("time").perf_counter
_planted_begun = _planted_clock()
try:
"""
BODY_PLANT_AFTER = """\
finally:
    _planted_until = _planted_clock() + {fraction!r} * (_planted_clock() - _planted_begun)
    while _planted_clock() < _planted_until:
        pass
"""


def plant_in_body(repo: Path, row: PlantedRow, fraction: float) -> None:
    """The row's variant function's body (after its docstring) run in a ``try`` whose
    ``finally`` busy-waits ``fraction`` of the body's time: the same plant as the
    decorator's, changing lines of that function alone."""
    where = variant_source(row.op, row.variant)
    source = repo / where.path
    lines = source.read_text().splitlines(keepends=True)
    first, last = where.body_line - 1, where.end_line
    body = ["    " + line if line.strip() else line for line in lines[first:last]]
    indent = "    "
    before = [indent + line for line in BODY_PLANT_BEFORE.splitlines(keepends=True)]
    after = BODY_PLANT_AFTER.format(fraction=fraction).splitlines(keepends=True)
    lines[first:last] = [*before, *body, *(indent + line for line in after)]
    source.write_text("".join(lines))


def seconds_per_call(row: PlantedRow, backward: bool) -> float:
    from benchmarks._harness.controls import controlled, controls_from_env
    from benchmarks._harness.measure import measure_seconds
    from benchmarks._harness.prepare import prepare

    with controlled(controls_from_env()) as controls:
        prepared = prepare(row.op, row.variant, backward=backward, **row.spec)
        return measure_seconds(prepared.call, controls.threads, min_run_time=1.0)


def planter(
    target: str, row: PlantedRow, slowdown: float, in_body: bool = False
) -> Callable[[Path], None]:
    """What plants ``slowdown`` in a clone, sized from the row's cost (a time plant in the
    function's body alone with ``in_body``)."""
    if target == "time":
        fraction = slowdown - 1.0
        if row.backward:  # the plant slows the forward only: scale it to the whole step
            fraction *= seconds_per_call(row, True) / seconds_per_call(row, False)
        fraction = round(fraction, 6)
        print(f"plant: {row.label}: each call of the variant waits {fraction} of its time")
        planted = plant_in_body if in_body else plant_slowdown
        return functools.partial(planted, row=row, fraction=fraction)
    from benchmarks._harness.callgrind import CountCase, count_cases

    case = CountCase(
        row.op, row.variant, row.spec["shape"], row.spec["dtype"], row.spec["layout"], row.backward
    )
    counted = count_cases([case])[case.key]
    per_line = instructions_per_line()
    lines = max(1, round((slowdown - 1.0) * counted / per_line))
    print(
        f"plant: {row.label}: {counted:,.0f} instructions per call, {per_line:.2f} per "
        f"planted line, {lines} lines"
    )
    return functools.partial(plant_statements, row=row, lines=PLANTED_LINE * lines)


@functools.cache
def instructions_per_line() -> float:
    """callgrind's instructions per planted line: the difference of two functions of
    different lengths, per line (the call itself cancels out)."""
    from benchmarks._harness.callgrind import callgrind_instructions

    fewer, more = (
        callgrind_instructions("spin()", "def spin():\n" + f"    {PLANTED_LINE}" * n, number=1)
        for n in CALIBRATION_LINES
    )
    return (more - fewer) / (CALIBRATION_LINES[1] - CALIBRATION_LINES[0])
