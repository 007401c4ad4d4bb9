"""Is a planted slowdown caught, and is a no-op left alone? The PR gate's and asv find's
hit rate and false-alarm count, measured.

    python -m tools.detection_power [--tries 10] [--slowdown 1.3] [--factor F]

In a temporary clone of HEAD it makes seven commits: a base, an empty (no-op) commit,
two fillers, the plant (``torch.mm`` also multiplies the first ``slowdown - 1`` of the
rows again, so the matmul costs ``slowdown`` times as much), and two more fillers. Each
try then runs, on the planted op's one benchmark row:

- the PR gate (tools/pr_gate.py, confirming) from the base to the plant: a hit if it fails;
- the PR gate from the base to the no-op: a false alarm if it fails;
- ``asv find`` over the seven commits: a hit if it names the plant.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import tempfile
from pathlib import Path

from tools.common import REPO_ROOT, RESULTS_DIR, ToolError, asv, git, register_machine, run_main
from tools.pr_gate import DEFAULT_FACTOR, Gate

MACHINE = "detection-power"
ROW = "bench_matmul.MatMul.time_matmul('cpu', 'float32', (1024, 1024, 1024), 'mm')"
MM_SOURCE = '''    """torch.mm: 2-D only, no broadcasting logic to dispatch through."""
    return torch.mm(a, b)
'''


def plant(repo: Path, slowdown: float) -> None:
    """torch.mm also multiplies the first (slowdown - 1) of a's rows again."""
    source = repo / "src" / "tensorops" / "matmul.py"
    text = source.read_text()
    extra = slowdown - 1.0
    planted = text.replace(
        MM_SOURCE,
        MM_SOURCE.replace(
            "    return torch.mm(a, b)\n",
            f"    torch.mm(a[: round(a.shape[0] * {extra!r})], b)\n    return torch.mm(a, b)\n",
        ),
    )
    if planted == text:
        raise ToolError("tensorops' mm variant changed; update tools/detection_power.py's plant")
    source.write_text(planted)


def make_history(workdir: Path, slowdown: float) -> dict[str, str]:
    repo = workdir / "repo"
    git("clone", "--quiet", str(REPO_ROOT), str(repo), cwd=workdir)
    identity = ["-c", "user.name=detection", "-c", "user.email=detection@example.invalid"]
    commits = {"base": git("rev-parse", "HEAD", cwd=repo)}
    for name in ("noop", "filler1", "filler2", "plant", "filler3", "filler4"):
        if name == "plant":
            plant(repo, slowdown)
            git("add", "-A", cwd=repo)
        git(*identity, "commit", "--quiet", "--allow-empty", "-m", name, cwd=repo)
        commits[name] = git("rev-parse", "HEAD", cwd=repo)
    return commits


def find_names(repo: Path, good: str, bad: str) -> str:
    done = asv(
        "find",
        "--machine",
        MACHINE,
        "--launch-method",
        "forkserver",
        f"{bad} ^{good}^",
        f"^{re.escape(ROW)}$",
        cwd=repo,
        capture=True,
    )
    found = re.findall(r"Greatest regression found: ([0-9a-f]{7,40})", done.stdout)
    if done.returncode != 0 or not found:
        raise ToolError(f"asv find failed: {(done.stdout + done.stderr)[-500:]}")
    return found[-1]


def clear_results(repo: Path) -> None:
    shutil.rmtree(repo / RESULTS_DIR / MACHINE, ignore_errors=True)


def measure(tries: int, slowdown: float, factor: float, workdir: Path) -> dict:
    commits = make_history(workdir, slowdown)
    repo = workdir / "repo"
    register_machine(MACHINE)
    selection = ["--bench", f"^{re.escape(ROW)}$"]
    planted = Gate(repo, commits["base"], commits["plant"], factor, MACHINE)
    no_op = Gate(repo, commits["base"], commits["noop"], factor, MACHINE)
    outcome = {"gate_hits": 0, "gate_false_alarms": 0, "find_hits": 0, "tries": []}
    for number in range(tries):
        clear_results(repo)
        gate_hit = planted.decide(planted.continuous(*selection), selection, confirmed=True)[0]
        ratio = row_ratio(planted)
        clear_results(repo)
        false_alarm = no_op.decide(no_op.continuous(*selection), selection, confirmed=True)[0]
        clear_results(repo)
        named = find_names(repo, commits["base"], commits["filler4"])
        one = {
            "gate": gate_hit,
            "measured_ratio": ratio,
            "no_op_gate": false_alarm,
            "find_named": named,
            "find_hit": commits["plant"].startswith(named),
        }
        outcome["tries"].append(one)
        outcome["gate_hits"] += gate_hit == 1
        outcome["gate_false_alarms"] += false_alarm == 1
        outcome["find_hits"] += one["find_hit"]
        print(f"try {number + 1}: {json.dumps(one)}", flush=True)
    return outcome


def row_ratio(gate: Gate) -> float | None:
    """The planted row's after/before, from asv compare's table."""
    for line in gate.compare().splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[4] == ROW:
            try:
                return float(cells[3].lstrip("~"))
            except ValueError:
                return None
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tries", type=int, default=10)
    parser.add_argument("--slowdown", type=float, default=1.3, help="planted cost ratio")
    parser.add_argument("--factor", type=float, default=DEFAULT_FACTOR, help="the gate's factor")
    parser.add_argument("--out", type=Path, help="write every try as JSON")
    args = parser.parse_args()
    if args.tries < 1 or not 1.0 < args.slowdown <= 2.0:
        raise ToolError("--tries must be at least 1 and --slowdown in (1, 2]")
    with tempfile.TemporaryDirectory(prefix="detection-") as workdir:
        outcome = measure(args.tries, args.slowdown, args.factor, Path(workdir))
    summary = {key: value for key, value in outcome.items() if key != "tries"}
    print(
        json.dumps(
            {"tries": args.tries, "slowdown": args.slowdown, "factor": args.factor, **summary}
        )
    )
    if args.out:
        args.out.write_text(json.dumps(outcome, indent=1))
    return 0


if __name__ == "__main__":
    run_main("detection_power", main)
