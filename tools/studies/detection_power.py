"""Is a planted slowdown caught, and is a no-op left alone? The PR gate's and asv find's
hit rate and false-alarm count, measured.

    python -m tools.studies.detection_power [--target time|instructions] [--tries 10]
                                    [--slowdown R] [--factor F] [--no-find] [--out FILE]

In a temporary clone of HEAD it makes seven commits: a base, an empty (no-op) commit,
two fillers, the plant, and two more fillers. The plant makes ``tensorops``' mm variant
cost ``slowdown`` times as much, as the target's benchmark row sees it:

- ``time`` (default 1.3): ``torch.mm`` also multiplies the first ``slowdown - 1`` of the
  rows again; the row is the wall time of a 1024³ float32 mm;
- ``instructions`` (default 1.02): a loop of pure interpreter work, sized from two
  callgrind counts taken first (mm's, and one loop step's); the row is the instruction
  count of a 128³ mm.

Each try then runs, on that one row:

- the PR gate (tools/pr_gate.py, confirming) from the base to the plant: a hit if it fails;
- the PR gate from the base to the no-op: a false alarm if it fails;
- ``asv find`` over the seven commits: a hit if it names the plant (unless ``--no-find``).
"""

from __future__ import annotations

import json
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
    run_main,
)
from tools.pr_gate import DEFAULT_FACTOR, Gate

MACHINE = "detection-power"
MM_RETURN = "    return torch.mm(a, b)\n"
MM_SOURCE = f'''    """torch.mm: 2-D only, no broadcasting logic to dispatch through."""
{MM_RETURN}'''
COUNTED_SHAPE = (128, 128, 128)
LOOP_STEPS = 100_000  # enough that the statement's own call is lost in the count


def plant_in_mm(repo: Path, lines: str, imports: str = "") -> None:
    """``lines`` go into tensorops' mm variant, before its return; ``imports`` above
    the module's ``import torch``."""
    source = repo / "src" / "tensorops" / "matmul.py"
    text = source.read_text()
    planted = text.replace(MM_SOURCE, MM_SOURCE.replace(MM_RETURN, lines + MM_RETURN))
    if planted == text or "\nimport torch\n" not in text:
        raise BadInput("tensorops' mm variant changed; update tools/detection_power.py's plant")
    source.write_text(planted.replace("\nimport torch\n", f"\n{imports}import torch\n", 1))


def plant(repo: Path, slowdown: float) -> None:
    """torch.mm also multiplies the first (slowdown - 1) of a's rows again."""
    extra = slowdown - 1.0
    plant_in_mm(repo, f"    torch.mm(a[: round(a.shape[0] * {extra!r})], b)\n")


# Each step yields the same object, so it costs the same whatever the count; a range()
# past 256 allocates an int per step, and its short loops would cost less per step.
SPIN = "    for _ in itertools.repeat(None, {steps}):\n        pass\n"


def plant_interpreter_work(repo: Path, slowdown: float) -> None:
    """A loop whose instruction count is (slowdown - 1) of the counted mm's: interpreter
    work only, so the product and its kernels stay as they were."""
    steps = loop_steps_for(slowdown - 1.0)
    plant_in_mm(repo, SPIN.format(steps=steps), imports="import itertools\n")


def loop_steps_for(share: float) -> int:
    """How many steps of the planted loop add ``share`` of the counted mm's
    instructions; both counts are callgrind's, in this environment."""
    from benchmarks._harness.callgrind import callgrind_instructions, instructions_per_call

    counted = instructions_per_call("matmul", "mm", COUNTED_SHAPE)
    loop = "import itertools\ndef spin():\n" + SPIN.format(steps=LOOP_STEPS)
    per_step = callgrind_instructions("spin()", loop, number=1) / LOOP_STEPS
    steps = round(share * counted / per_step)
    print(f"plant: {counted:,.0f} instructions per mm, {per_step:.1f} per loop step, {steps}")
    return steps


@dataclass(frozen=True)
class Target:
    """A planted slowdown and the benchmark row that must see it."""

    row: str
    slowdown: float
    plant: Callable[[Path, float], None]


TARGETS = {
    "time": Target(
        "bench_matmul.MatMul.time_matmul('cpu', 'float32', (1024, 1024, 1024), 'mm')",
        1.3,
        plant,
    ),
    "instructions": Target(
        f"bench_instructions.Instructions.track_instructions('cpu', ('matmul', 'mm', "
        f"{COUNTED_SHAPE!r}))",
        1.02,
        plant_interpreter_work,
    ),
}


def make_history(workdir: Path, target: Target, slowdown: float) -> dict[str, str]:
    repo = workdir / "repo"
    git("clone", "--quiet", str(REPO_ROOT), str(repo), cwd=workdir)
    identity = ["-c", "user.name=detection", "-c", "user.email=detection@example.invalid"]
    commits = {"base": git("rev-parse", "HEAD", cwd=repo)}
    for name in ("noop", "filler1", "filler2", "plant", "filler3", "filler4"):
        if name == "plant":
            target.plant(repo, slowdown)
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
        f"^{re.escape(row)}$",
        cwd=repo,
        capture=True,
    )
    found = re.findall(r"Greatest regression found: ([0-9a-f]{7,40})", done.stdout)
    if done.returncode != 0 or not found:
        raise ExternalFailure(f"asv find failed: {(done.stdout + done.stderr)[-500:]}")
    return found[-1]


def clear_results(repo: Path) -> None:
    shutil.rmtree(repo / RESULTS_DIR / MACHINE, ignore_errors=True)


def measure(
    target: Target, tries: int, slowdown: float, factor: float, find: bool, workdir: Path
) -> dict:
    commits = make_history(workdir, target, slowdown)
    repo = workdir / "repo"
    register_machine(MACHINE)
    selection = ["--bench", f"^{re.escape(target.row)}$"]
    planted = Gate(repo, commits["base"], commits["plant"], factor, MACHINE)
    no_op = Gate(repo, commits["base"], commits["noop"], factor, MACHINE)
    outcome = {"gate_hits": 0, "gate_false_alarms": 0, "tries": []}
    if find:
        outcome["find_hits"] = 0
    for number in range(tries):
        clear_results(repo)
        gate_hit = planted.decide(planted.continuous(*selection), selection, confirmed=True)[0]
        one = {"gate": gate_hit, "measured_ratio": row_ratio(planted, target.row)}
        clear_results(repo)
        one["no_op_gate"] = no_op.decide(no_op.continuous(*selection), selection, True)[0]
        one["no_op_ratio"] = row_ratio(no_op, target.row)
        outcome["gate_hits"] += gate_hit == 1
        outcome["gate_false_alarms"] += one["no_op_gate"] == 1
        if find:
            clear_results(repo)
            one["find_named"] = find_names(repo, target.row, commits["base"], commits["filler4"])
            one["find_hit"] = commits["plant"].startswith(one["find_named"])
            outcome["find_hits"] += one["find_hit"]
        outcome["tries"].append(one)
        print(f"try {number + 1}: {json.dumps(one)}", flush=True)
    return outcome


def row_ratio(gate: Gate, row: str) -> float:
    """The row's after/before, from the gate's comparison."""
    for measured in gate.rows():
        if measured.label == row:
            return measured.ratio
    raise ExternalFailure(f"no result for {row}: did the benchmark run? (asv's log above)")


def main() -> int:
    parser = ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", choices=sorted(TARGETS), default="time")
    parser.add_argument("--tries", type=int, default=10)
    parser.add_argument("--slowdown", type=float, help="planted cost ratio (target's default)")
    parser.add_argument("--factor", type=float, default=DEFAULT_FACTOR, help="the gate's factor")
    parser.add_argument("--no-find", action="store_true", help="measure the gate only")
    parser.add_argument("--out", type=Path, help="write every try as JSON")
    args = parser.parse_args()
    target = TARGETS[args.target]
    slowdown = args.slowdown or target.slowdown
    if args.tries < 1 or not 1.0 < slowdown <= 2.0:
        raise BadInput("--tries must be at least 1 and --slowdown in (1, 2]")
    with tempfile.TemporaryDirectory(prefix="detection-") as workdir:
        outcome = measure(
            target, args.tries, slowdown, args.factor, not args.no_find, Path(workdir)
        )
    summary = {key: value for key, value in outcome.items() if key != "tries"}
    print(
        json.dumps(
            {
                "target": args.target,
                "tries": args.tries,
                "slowdown": slowdown,
                "factor": args.factor,
                **summary,
            }
        )
    )
    if args.out:
        args.out.write_text(json.dumps(outcome, indent=1))
    return 0


if __name__ == "__main__":
    run_main("detection_power", main)
