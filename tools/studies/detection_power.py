"""Is a planted slowdown caught, and is a no-op left alone? The PR gate's and asv find's
hit rate and false-alarm count, measured on rows chosen at random.

    python -m tools.studies.detection_power [--target time|instructions] [--tries 10]
        [--op OP] [--slowdown R] [--factor F] [--no-find] [--seed N] [--out FILE]

Each try picks an op at random, then one of its CPU rows of the target (``--op`` fixes the op),
and in a temporary clone of HEAD makes seven commits: a base, an empty (no-op) commit, two
fillers, the plant, and two more fillers. The plant goes into the row's variant function (found
by its ``@variant`` decorator), sized from the row's own cost:

- ``time`` (default 1.3): a decorator that makes every call of the variant busy-wait
  ``slowdown - 1`` of that call's own duration, so the plant is the same ratio in a slow
  process as in a fast one, like code that does more work (a training row's plant, in its
  forward, is scaled by the step's time over the forward's, measured first);
- ``instructions`` (default 1.02): straight-line statements worth ``slowdown - 1`` of the
  case's instruction count, both counts callgrind's (the gate counts the selected row's
  case only: tools.common.bench_selection).

Per try: the PR gate from the base to the plant (a hit if it fails), the gate from the base
to the no-op (a false alarm if it fails), and ``asv find`` over the seven commits (a hit if
it names the plant; unless ``--no-find``).
"""

from __future__ import annotations

import ast
import functools
import itertools
import json
import random
import re
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tools.common import (
    REPO_ROOT,
    RESULTS_DIR,
    ArgumentParser,
    BadInput,
    ExternalFailure,
    asv,
    git,
    register_machine,
    row_selection,
    run_main,
)
from tools.pr_gate import DEFAULT_FACTOR, Gate

MACHINE = "detection-power"
DEFAULTS = {"time": 1.3, "instructions": 1.02}
# The instruction plant: straight-line statements, each the same two bytecodes, so N of
# them cost N times one, with no fixed cost (a loop's setup alone, about a thousand
# instructions, was 2% of a small case by itself).
PLANTED_LINE = "_planted = None\n"
CALIBRATION_LINES = (1_000, 3_000)
# The time plant. A fixed wait sized from a measurement in this process was a different
# ratio in asv's: a row that ran 2.5x slower in one comparison's processes read a 1.3x
# plant as 1.2 (docs/measurement.md, "Is a planted slowdown caught?").
SLOWED_BY = "_planted_slowdown"
SLOWING_DECORATOR = f"""
import functools as _functools
import time as _time


def {SLOWED_BY}(fraction):
    \"\"\"detection_power's plant: each call busy-waits ``fraction`` of its own time.\"\"\"

    def wrap(function):
        @_functools.wraps(function)
        def slowed(*args, **kwargs):
            begun = _time.perf_counter()
            result = function(*args, **kwargs)
            until = _time.perf_counter() + fraction * (_time.perf_counter() - begun)
            while _time.perf_counter() < until:
                pass
            return result

        return slowed

    return wrap
"""


@dataclass(frozen=True)
class Row:
    """A benchmark row, and the tensorops case it measures."""

    label: str  # name(params), as asv shows and --bench selects it
    op: str
    variant: str
    spec: dict
    backward: bool = False
    cold: bool = False  # the class's cold_inputs


def time_rows() -> list[Row]:
    """Every ``time_`` row of the default suite on the CPU whose variant is a function of
    its own (the plant goes into it)."""
    from benchmarks._harness.tiers import declared_tier
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
            rows.append(Row(label, op, variant, spec, suite.backward, suite.cold_inputs))
    return rows


def count_rows() -> list[Row]:
    """Every count twin row whose variant is a function of its own."""
    from benchmarks import bench_instructions

    return [
        Row(label, case.op, case.variant, spec(case), case.backward)
        for label, case in bench_instructions.Counted.rows.items()
        if ".Instructions." not in label and variant_source(case.op, case.variant) is not None
    ]


def spec(case) -> dict:
    return {"device": "cpu", "dtype": case.dtype, "layout": case.layout, "shape": case.shape}


@dataclass(frozen=True)
class Source:
    """Where a variant function is: its file, its ``def`` line and its body's first line
    (after the docstring)."""

    path: Path
    def_line: int
    body_line: int


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
                    return Source(path, node.lineno, first.lineno)
    return None


def insert_lines(repo: Path, relative: Path, line: int, lines: str, indent: str) -> None:
    """``lines``, indented, before line number ``line`` of ``relative``."""
    source = repo / relative
    text = source.read_text().splitlines(keepends=True)
    text.insert(line - 1, "".join(indent + x if x.strip() else x for x in lines.splitlines(True)))
    source.write_text("".join(text))


def plant_statements(repo: Path, row: Row, lines: str) -> None:
    """``lines`` at the top of the row's variant function's body."""
    where = variant_source(row.op, row.variant)
    insert_lines(repo, where.path, where.body_line, lines, "    ")


def plant_slowdown(repo: Path, row: Row, fraction: float) -> None:
    """The row's variant function decorated to busy-wait ``fraction`` of each call's time,
    the decorator defined after the module's ``import torch``."""
    where = variant_source(row.op, row.variant)
    source = repo / where.path
    if "\nimport torch\n" not in source.read_text():  # checked before the file is touched
        raise BadInput(f"{where.path} has no `import torch` line to define the plant by")
    insert_lines(repo, where.path, where.def_line, f"@{SLOWED_BY}({fraction!r})\n", "")
    text = source.read_text()
    source.write_text(text.replace("\nimport torch\n", f"\nimport torch\n{SLOWING_DECORATOR}", 1))


def seconds_per_call(row: Row, backward: bool) -> float:
    from benchmarks._harness.controls import controlled, controls_from_env
    from benchmarks._harness.measure import measure_seconds
    from benchmarks._harness.prepare import prepare

    with controlled(controls_from_env()) as controls:
        prepared = prepare(row.op, row.variant, backward=backward, **row.spec)
        return measure_seconds(prepared.call, controls.threads, min_run_time=1.0)


def planter(target: str, row: Row, slowdown: float) -> Callable[[Path], None]:
    """What plants ``slowdown`` in a clone, sized from the row's cost."""
    if target == "time":
        fraction = slowdown - 1.0
        if row.backward:  # the plant slows the forward only: scale it to the whole step
            fraction *= seconds_per_call(row, True) / seconds_per_call(row, False)
        fraction = round(fraction, 6)
        print(f"plant: {row.label}: each call of the variant waits {fraction} of its time")
        return functools.partial(plant_slowdown, row=row, fraction=fraction)
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


def make_history(workdir: Path, target: str, row: Row, slowdown: float) -> dict[str, str]:
    repo = workdir / "repo"
    shutil.rmtree(repo, ignore_errors=True)
    git("clone", "--quiet", str(REPO_ROOT), str(repo), cwd=workdir)
    (workdir / "env").mkdir(exist_ok=True)  # asv's environment: built once, for every try
    (repo / ".asv").mkdir(exist_ok=True)
    (repo / ".asv" / "env").symlink_to(workdir / "env")
    plant = planter(target, row, slowdown)
    identity = ["-c", "user.name=detection", "-c", "user.email=detection@example.invalid"]
    commits = {"base": git("rev-parse", "HEAD", cwd=repo)}
    for name in ("noop", "filler1", "filler2", "plant", "filler3", "filler4"):
        if name == "plant":
            plant(repo)
            git("add", "-A", cwd=repo)
        git(*identity, "commit", "--quiet", "--allow-empty", "-m", name, cwd=repo)
        commits[name] = git("rev-parse", "HEAD", cwd=repo)
    return commits


def find_names(repo: Path, row: str, good: str, bad: str) -> str:
    done = asv(
        "find",
        "--machine",
        MACHINE,
        "--launch-method",
        "forkserver",
        f"{bad} ^{good}^",
        row_selection(row),
        cwd=repo,
        capture=True,
    )
    found = re.findall(r"Greatest regression found: ([0-9a-f]{7,40})", done.stdout)
    if done.returncode != 0 or not found:
        raise ExternalFailure(f"asv find failed: {(done.stdout + done.stderr)[-500:]}")
    return found[-1]


def ratio(gate: Gate, row: str) -> float:
    """The row's after/before, from the gate's comparison."""
    for measured in gate.rows():
        if measured.label == row:
            return measured.ratio
    raise ExternalFailure(f"no result for {row}: did the benchmark run? (asv's log above)")


def one_try(workdir: Path, target: str, row: Row, slowdown: float, factor: float, find: bool):
    commits = make_history(workdir, target, row, slowdown)
    repo = workdir / "repo"
    selection = ["--bench", row_selection(row.label)]
    outcome = {"op": row.op, "row": row.label}
    for name, head in (("plant", commits["plant"]), ("no_op", commits["noop"])):
        shutil.rmtree(repo / RESULTS_DIR / MACHINE, ignore_errors=True)
        gate = Gate(repo, commits["base"], head, factor, MACHINE)
        first_pass = gate.continuous(*selection)
        outcome[f"{name}_first_ratio"] = ratio(gate, row.label)
        outcome[f"{name}_gate"] = gate.decide(first_pass, selection, True)[0]
        outcome[f"{name}_ratio"] = ratio(gate, row.label)  # both passes' samples, if confirmed
    if find:
        shutil.rmtree(repo / RESULTS_DIR / MACHINE, ignore_errors=True)
        named = find_names(repo, row.label, commits["base"], commits["filler4"])
        outcome["find_hit"] = commits["plant"].startswith(named)
    return outcome


def main() -> int:
    parser = ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", choices=sorted(DEFAULTS), default="time")
    parser.add_argument("--tries", type=int, default=10)
    parser.add_argument("--op", help="plant in this op's rows only (default: any)")
    parser.add_argument("--slowdown", type=float, help="planted cost ratio (target's default)")
    parser.add_argument("--factor", type=float, default=DEFAULT_FACTOR, help="the gate's factor")
    parser.add_argument("--no-find", action="store_true", help="measure the gate only")
    parser.add_argument("--seed", type=int, help="the random choice of rows, for a rerun")
    parser.add_argument("--out", type=Path, help="write every try as JSON")
    args = parser.parse_args()
    slowdown = args.slowdown or DEFAULTS[args.target]
    if args.tries < 1 or not 1.0 < slowdown <= 2.0:
        raise BadInput("--tries must be at least 1 and --slowdown in (1, 2]")
    rows = [
        r
        for r in (time_rows() if args.target == "time" else count_rows())
        if args.op is None or r.op == args.op
    ]
    if not rows:
        raise BadInput(f"no CPU row of op {args.op!r} to plant in")
    chooser = random.Random(args.seed)
    register_machine(MACHINE)
    tries = []
    with tempfile.TemporaryDirectory(prefix="detection-") as workdir:
        ops = sorted({r.op for r in rows})
        for number in range(args.tries):
            op = chooser.choice(ops)  # the op at random, then one of its rows
            row = chooser.choice([r for r in rows if r.op == op])
            tries.append(
                one_try(Path(workdir), args.target, row, slowdown, args.factor, not args.no_find)
            )
            print(f"try {number + 1}: {json.dumps(tries[-1])}", flush=True)
    summary = {
        "target": args.target,
        "slowdown": slowdown,
        "factor": args.factor,
        "tries": len(tries),
        "gate_hits": sum(t["plant_gate"] == 1 for t in tries),
        "gate_false_alarms": sum(t["no_op_gate"] == 1 for t in tries),
        **({"find_hits": sum(t["find_hit"] for t in tries)} if not args.no_find else {}),
        "ops": [t["op"] for t in tries],
        "rows": sorted({t["row"] for t in tries}),
    }
    print(json.dumps(summary))
    if args.out:
        args.out.write_text(json.dumps({"summary": summary, "tries": tries}, indent=1))
    return 0


if __name__ == "__main__":
    run_main("detection_power", main)
