"""Does the gate's depth hold? A planted slowdown in ops drawn at random, measured as the
gate measures a small selection (every timed row in the same number of rounds) and judged
at the row's floor scaled to that depth (tools/_lib/measure/host_floors.deep_floor), beside
no-op changes of the same function (a comment in its body) judged alike: the held-out check
of the depth rule (docs/explanation/comparison.md, "Depth").

    python -m tools.studies.depth_power [--ops 3] [--tries 5] [--slowdown 1.05]
        [--depth 16] [--floor-runs 4] [--noise PROFILE] [--seed N] [--out FILE]

Per op: one of its pr-tier CPU time rows at random, and a clone of HEAD with three commits
(the base; a comment as the first line of the row's variant function; the busy-wait plant of
``tools/studies/detection_power --target time`` in that function). The row's floor on this
host comes from ``--floor-runs`` no-op comparisons of the base against itself, measured as
``tools.floors`` measures them (the alternation's own rounds, tools/_lib/measure/no_op_floors.py);
then each try compares the base with the comment and the base with the plant, each in exactly
``--depth`` rounds. A hit: the plant judged slower at the deep floor; a false alarm: the
comment judged slower. Nothing here feeds the rule its numbers: the floors and the tries
are separate runs. ``--out`` keeps every try's pairs, so another rule can be tried on them.
"""

from __future__ import annotations

import json
import random
import tempfile
from pathlib import Path

from tools._lib.asv.machines import this_host
from tools._lib.asv.suites import REPO_ROOT
from tools._lib.base.cli import ArgumentParser, run_main
from tools._lib.base.git import git
from tools._lib.measure.alternation import compare_commits
from tools._lib.measure.antagonist import PROFILES, noise
from tools._lib.measure.host_floors import DEPTHS_CHECKED, deep_floor
from tools._lib.measure.no_op_floors import floor_of, samples_of
from tools.studies.plants import PlantedRow, insert_lines, planter, time_rows, variant_source

SAID_AGAIN = "# the same work, said again\n"


def history(workdir: Path, row: PlantedRow, slowdown: float) -> tuple[Path, dict[str, str]]:
    """A clone of HEAD with the base, the comment and the plant, and asv's environment."""
    repo = workdir / row.op / "repo"
    repo.parent.mkdir(parents=True)
    git("clone", "--quiet", str(REPO_ROOT), str(repo), cwd=workdir)
    (repo / ".asv").mkdir()
    (repo / ".asv" / "env").symlink_to(REPO_ROOT / ".asv" / "env")
    identity = ["-c", "user.name=depth", "-c", "user.email=depth@example.invalid"]
    commits = {"base": git("rev-parse", "HEAD", cwd=repo)}
    where = variant_source(row.op, row.variant)
    plant = planter("time", row, slowdown)
    for name, change in (
        ("comment", lambda r: insert_lines(r, where.path, where.body_line, SAID_AGAIN, "    ")),
        ("plant", plant),
    ):
        git("checkout", "--quiet", commits["base"], cwd=repo)
        change(repo)
        git("add", "-A", cwd=repo)
        git(*identity, "commit", "--quiet", "-m", name, cwd=repo)
        commits[name] = git("rev-parse", "HEAD", cwd=repo)
    return repo, commits


def paired(repo: Path, before: str, after: str, label: str, rounds: int | None):
    outcome = compare_commits(repo, before, after, [label], rounds=rounds)[label]
    if outcome.paired is None:
        raise RuntimeError(f"{label} could not be measured: {outcome.why}")
    return outcome.paired


def one_op(workdir: Path, row: PlantedRow, args) -> dict:
    repo, commits = history(workdir, row, args.slowdown)
    base = commits["base"]
    no_ops = [paired(repo, base, base, row.label, None).slowdown for _ in range(args.floor_runs)]
    floor = floor_of(no_ops)
    deep = deep_floor(floor, args.depth)
    tries = []
    for number in range(args.tries):
        read = {}
        for name in ("comment", "plant"):
            measured = paired(repo, base, commits[name], row.label, args.depth)
            read[name] = {
                "slowdown": measured.slowdown,
                "interval": list(measured.slowdown_interval),
                "round_slowdowns": list(measured.round_slowdowns),
                "slower": measured.slower(deep),
                "samples": samples_of([{row.label: measured}])[0][row.label],
            }
        tries.append(read)
        said = {n: {k: v for k, v in r.items() if k != "samples"} for n, r in read.items()}
        print(f"depth: {row.label}: try {number + 1}: {json.dumps(said)}", flush=True)
    return {
        "op": row.op,
        "row": row.label,
        "floor_no_ops": no_ops,
        "floor": floor,
        "deep_floor": deep,
        "hits": sum(t["plant"]["slower"] for t in tries),
        "false_alarms": sum(t["comment"]["slower"] for t in tries),
        "tries": tries,
    }


def parse():
    parser = ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ops", type=int, default=3)
    parser.add_argument("--tries", type=int, default=5)
    parser.add_argument("--slowdown", type=float, default=1.05)
    parser.add_argument("--depth", type=int, choices=DEPTHS_CHECKED, default=DEPTHS_CHECKED[-1])
    parser.add_argument("--floor-runs", type=int, default=4)
    parser.add_argument("--noise", choices=sorted(PROFILES), help="an antagonist throughout")
    parser.add_argument("--seed", type=int)
    parser.add_argument("--out", type=Path)
    return parser.parse_args()


def main() -> int:
    args = parse()
    chooser = random.Random(args.seed)
    rows = [row for row in time_rows() if row.tier == "pr" and not row.backward]
    ops = chooser.sample(sorted({row.op for row in rows}), args.ops)
    chosen = [chooser.choice([row for row in rows if row.op == op]) for op in ops]
    print(f"depth: ops {ops} on {this_host()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="depth-") as workdir, noise(args.noise):
        found = [one_op(Path(workdir), row, args) for row in chosen]
    summary = {
        "host": this_host(),
        "slowdown": args.slowdown,
        "depth": args.depth,
        "noise": args.noise,
        "rows": [
            {k: one[k] for k in ("row", "floor", "deep_floor", "hits", "false_alarms")}
            for one in found
        ],
    }
    print(json.dumps(summary))
    if args.out:
        args.out.write_text(json.dumps({"summary": summary, "ops": found}, indent=1))
    return 0


if __name__ == "__main__":
    run_main("depth_power", main)
