"""Is a planted slowdown caught, and is a no-op left alone? The PR gate's and asv find's
hit rate and false-alarm count, measured on rows chosen at random.

    python -m tools.studies.detection_power [--target time|instructions] [--tries 10]
        [--op OP] [--tier pr|nightly|any] [--slowdown R] [--factor F] [--floors FILE]
        [--noise PROFILE] [--no-find] [--seed N] [--out FILE]

Each try picks an op at random, then one of its CPU rows of the target in the tier
(``--tier``, default pr: the rows the gate measures; ``--op`` fixes the op),
and in a temporary clone of HEAD makes seven commits: a base, an empty (no-op) commit, two
fillers, the plant, and two more fillers. The plant goes into the row's variant function (found
by its ``@variant`` decorator), sized from the row's own cost:

- ``time`` (default 1.3): a decorator that makes every call of the variant busy-wait
  ``slowdown - 1`` of that call's own duration, so the plant is the same ratio in a slow
  process as in a fast one, like code that does more work (a training row's plant, in its
  forward, is scaled by the step's time over the forward's, measured first);
- ``instructions`` (default 1.02): straight-line statements worth ``slowdown - 1`` of the
  case's instruction count, both counts callgrind's (the gate counts the selected row's
  case only: tools/_lib/asv/run.bench_selection).

Per try: the PR gate from the base to the plant (a hit if it fails), the gate from the base
to the no-op (a false alarm if it fails), each with asv's first-pass ratio and the paired
slowdown beside its verdict, and ``asv find`` over the seven commits (a hit if it names the
plant; unless ``--no-find``). ``--floors`` judges at a machine's floors on this host, as the
gate does; ``--noise`` runs the whole study under an antagonist (tools/_lib/measure/antagonist.py).
"""

from __future__ import annotations

import json
import random
import re
import shutil
import tempfile
from pathlib import Path

from tools._lib.asv.machines import register_machine, this_host
from tools._lib.asv.results import RESULTS_DIR
from tools._lib.asv.run import asv
from tools._lib.asv.suites import REPO_ROOT
from tools._lib.base.cli import (
    ArgumentParser,
    BadInput,
    ExternalFailure,
    Status,
    add_judging,
    run_main,
)
from tools._lib.base.git import git
from tools._lib.measure.antagonist import PROFILES, noise
from tools._lib.measure.comparison import row_selection
from tools._lib.measure.host_floors import Floors, no_floors, read_floors
from tools._lib.verdict.gate import DEFAULT_FACTOR, Gate
from tools.studies.plants import PlantedRow, count_rows, planter, time_rows

MACHINE = "detection-power"
DEFAULTS = {"time": 1.3, "instructions": 1.02}


def make_history(workdir: Path, target: str, row: PlantedRow, slowdown: float) -> dict[str, str]:
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


def one_gate(repo: Path, base: str, head: str, row: str, factor: float, floors: Floors) -> dict:
    """One gate run on the row: its verdict, asv's first-pass ratio, the paired slowdown."""
    shutil.rmtree(repo / RESULTS_DIR / MACHINE, ignore_errors=True)
    gate = Gate(repo, base, head, factor, MACHINE, floors)
    verdict = gate.decide(gate.first_pass("--bench", row_selection(row)))
    first = next((r.ratio for r in verdict.rows if r.label == row), None)
    judged = next((j for j in verdict.judged if j.row.label == row), None)
    paired = judged.paired if judged else None
    return {
        "gate": int(verdict.status),
        "first_ratio": first,
        "paired": paired.slowdown if paired else None,
        "interval": list(paired.slowdown_interval) if paired else None,
        "threshold": judged.threshold if judged else None,
        "why": judged.outcome.why if judged else "",
    }


def one_try(
    workdir: Path, target: str, row: PlantedRow, slowdown: float, args, floors: Floors
) -> dict:
    commits = make_history(workdir, target, row, slowdown)
    repo = workdir / "repo"
    outcome = {"op": row.op, "row": row.label}
    for name in ("plant", "noop"):
        measured = one_gate(repo, commits["base"], commits[name], row.label, args.factor, floors)
        outcome.update({f"{name}_{key}": value for key, value in measured.items()})
    if not args.no_find:
        shutil.rmtree(repo / RESULTS_DIR / MACHINE, ignore_errors=True)
        named = find_names(repo, row.label, commits["base"], commits["filler4"])
        outcome["find_hit"] = commits["plant"].startswith(named)
    return outcome


def parse():
    parser = ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", choices=sorted(DEFAULTS), default="time")
    parser.add_argument("--tries", type=int, default=10)
    parser.add_argument("--op", help="plant in this op's rows only (default: any)")
    parser.add_argument(
        "--tier",
        choices=["pr", "nightly", "any"],
        default="pr",
        help="plant in this tier's rows (default pr: what the gate measures)",
    )
    parser.add_argument("--slowdown", type=float, help="planted cost ratio (target's default)")
    add_judging(parser, DEFAULT_FACTOR)
    parser.add_argument("--noise", choices=sorted(PROFILES), help="an antagonist throughout")
    parser.add_argument("--no-find", action="store_true", help="measure the gate only")
    parser.add_argument("--seed", type=int, help="the random choice of rows, for a rerun")
    parser.add_argument("--out", type=Path, help="write every try as JSON")
    return parser.parse_args()


def chosen_rows(args) -> list[PlantedRow]:
    slowdown = args.slowdown or DEFAULTS[args.target]
    if args.tries < 1 or not 1.0 < slowdown <= 2.0:
        raise BadInput("--tries must be at least 1 and --slowdown in (1, 2]")
    rows = [
        r
        for r in (time_rows() if args.target == "time" else count_rows())
        if (args.op is None or r.op == args.op) and args.tier in ("any", r.tier)
    ]
    if not rows:
        raise BadInput(f"no CPU row of op {args.op!r} to plant in")
    return rows


def summarize(args, slowdown: float, tries: list[dict]) -> dict:
    return {
        "target": args.target,
        "slowdown": slowdown,
        "factor": args.factor,
        "noise": args.noise,
        "tries": len(tries),
        "gate_hits": sum(t["plant_gate"] == Status.REGRESSED for t in tries),
        "gate_false_alarms": sum(t["noop_gate"] == Status.REGRESSED for t in tries),
        **({"find_hits": sum(t["find_hit"] for t in tries)} if not args.no_find else {}),
        "ops": [t["op"] for t in tries],
        "rows": sorted({t["row"] for t in tries}),
    }


def main() -> int:
    args = parse()
    rows = chosen_rows(args)
    slowdown = args.slowdown or DEFAULTS[args.target]
    floors = read_floors(args.floors, this_host()) if args.floors else no_floors(this_host())
    chooser = random.Random(args.seed)
    register_machine(MACHINE)
    tries = []
    with tempfile.TemporaryDirectory(prefix="detection-") as workdir, noise(args.noise):
        ops = sorted({r.op for r in rows})
        for number in range(args.tries):
            op = chooser.choice(ops)  # the op at random, then one of its rows
            row = chooser.choice([r for r in rows if r.op == op])
            tries.append(one_try(Path(workdir), args.target, row, slowdown, args, floors))
            print(f"try {number + 1}: {json.dumps(tries[-1])}", flush=True)
    summary = summarize(args, slowdown, tries)
    print(json.dumps(summary))
    if args.out:
        args.out.write_text(json.dumps({"summary": summary, "tries": tries}, indent=1))
    return 0


if __name__ == "__main__":
    run_main("detection_power", main)
