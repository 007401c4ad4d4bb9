"""Does the gate's depth hold? Planted slowdowns in ops drawn at random, each in the body of
the row's variant function alone, selected and measured as the gate selects and measures
them (the rows the change reaches, in the depth its budget gives them) and judged at the
row's floor scaled to that depth (tools/_lib/measure/host_floors.deep_floor), beside no-op
changes of the same function (a comment in its body) judged alike: the held-out check of
the depth rule (docs/explanation/comparison.md, "Depth").

    python -m tools.studies.depth_power [--ops 3] [--tries 5] [--slowdown 1.05 [1.10 ...]]
        [--floor-runs 4] [--noise PROFILE] [--seed N] [--out FILE]

Per op: one of its pr-tier CPU time rows at random, and a clone of HEAD with the base and
one commit a change (a comment as the first line of the row's variant function; each
slowdown as the busy-wait of ``tools/studies/detection_power --target time``, put inside
that function's body). Each change goes through the gate's selection (its map of the base
traced once): the study records what it selects and the depth the gate's budget gives that
selection, and stops if the row is not selected. The row's floor on this host comes from
``--floor-runs`` no-op comparisons of the base against itself, measured as ``tools.floors``
measures them (the alternation's own rounds, tools/_lib/measure/no_op_floors.py); then each
try compares the base with every change, the row alone in the gate's depth. A hit: a plant
judged slower at the floor of that depth; a false alarm: the comment judged slower. Nothing
here feeds the rule its numbers: the floors and the tries are separate runs. ``--out``
keeps every try's pairs, so another rule can be tried on them.
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
from tools._lib.measure.host_floors import deep_floor
from tools._lib.measure.no_op_floors import floor_of, samples_of
from tools._lib.verdict.gate_rows import DEPTH_BUDGET_MINUTES, depth_for, gate_selection
from tools.studies.plants import PlantedRow, insert_lines, planter, time_rows, variant_source

SAID_AGAIN = "# the same work, said again\n"


def history(workdir: Path, row: PlantedRow, slowdowns: list[float]) -> tuple[Path, dict[str, str]]:
    """A clone of HEAD with the base and a commit for each change (the comment, each
    plant), and asv's environment."""
    repo = workdir / row.op / "repo"
    repo.parent.mkdir(parents=True)
    git("clone", "--quiet", str(REPO_ROOT), str(repo), cwd=workdir)
    (repo / ".asv").mkdir()
    (repo / ".asv" / "env").symlink_to(REPO_ROOT / ".asv" / "env")
    identity = ["-c", "user.name=depth", "-c", "user.email=depth@example.invalid"]
    commits = {"base": git("rev-parse", "HEAD", cwd=repo)}
    where = variant_source(row.op, row.variant)
    changes = {
        "comment": lambda r: insert_lines(r, where.path, where.body_line, SAID_AGAIN, "    "),
        **{plant_name(s): planter("time", row, s, in_body=True) for s in slowdowns},
    }
    for name, change in changes.items():
        git("checkout", "--quiet", commits["base"], cwd=repo)
        change(repo)
        git("add", "-A", cwd=repo)
        git(*identity, "commit", "--quiet", "-m", name, cwd=repo)
        commits[name] = git("rev-parse", "HEAD", cwd=repo)
    return repo, commits


def plant_name(slowdown: float) -> str:
    return f"plant {slowdown:g}"


def gate_depth(repo: Path, base: str, head: str, row: PlantedRow) -> dict:
    """What the gate selects for the change and the depth its budget gives that selection;
    a change whose selection leaves the row out is not the case this study measures."""
    selection = gate_selection(repo, base, head, [], False, None)
    if row.label not in selection.rows:
        raise RuntimeError(f"the gate's selection left {row.label} out: {selection.rows}")
    depth = depth_for(selection.rows, DEPTH_BUDGET_MINUTES)
    return {"selected": list(selection.rows), "map": selection.source, "depth": depth}


def paired(repo: Path, before: str, after: str, label: str, rounds: int | None):
    outcome = compare_commits(repo, before, after, [label], rounds=rounds)[label]
    if outcome.paired is None:
        raise RuntimeError(f"{label} could not be measured: {outcome.why}")
    return outcome.paired


def one_op(workdir: Path, row: PlantedRow, args) -> dict:
    repo, commits = history(workdir, row, args.slowdown)
    base = commits.pop("base")
    gated = {name: gate_depth(repo, base, head, row) for name, head in commits.items()}
    print(f"depth: {row.label}: {json.dumps(gated)}", flush=True)
    no_ops = [paired(repo, base, base, row.label, None).slowdown for _ in range(args.floor_runs)]
    floor = floor_of(no_ops)
    judged_at = {
        name: deep_floor(floor, g["depth"]) if g["depth"] else floor for name, g in gated.items()
    }
    tries = []
    for number in range(args.tries):
        read = {}
        for name, head in commits.items():
            measured = paired(repo, base, head, row.label, gated[name]["depth"])
            read[name] = {
                "slowdown": measured.slowdown,
                "interval": list(measured.slowdown_interval),
                "round_slowdowns": list(measured.round_slowdowns),
                "slower": measured.slower(judged_at[name]),
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
        "gate": gated,
        "judged_at": judged_at,
        "hits": {n: sum(t[n]["slower"] for t in tries) for n in commits if n != "comment"},
        "false_alarms": sum(t["comment"]["slower"] for t in tries),
        "tries": tries,
    }


def parse():
    parser = ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ops", type=int, default=3)
    parser.add_argument("--tries", type=int, default=5)
    parser.add_argument("--slowdown", type=float, nargs="+", default=[1.05])
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
        "noise": args.noise,
        "rows": [
            {k: one[k] for k in ("row", "floor", "judged_at", "hits", "false_alarms")}
            for one in found
        ],
    }
    print(json.dumps(summary))
    if args.out:
        args.out.write_text(json.dumps({"summary": summary, "ops": found}, indent=1))
    return 0


if __name__ == "__main__":
    run_main("depth_power", main)
