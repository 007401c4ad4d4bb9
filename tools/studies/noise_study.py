"""How far apart does a no-op comparison put a row? asv's interleaved rounds and the paired
alternation side by side, in the same run, on the same host: the evidence behind the gate.

Clones the committed HEAD, adds an empty commit, and ``--runs`` times compares the two
(identical code): asv's own comparison (``asv continuous --split --interleave-rounds``,
two rounds a side, asv's default: the comparison before the alternation), then every
timed row it measured again by alternation, and the gate's verdict on that (at the floors
of ``--floors`` on this host, else at ``--factor``). Per run and row it records asv's
ratio, the paired slowdown with its interval, and whether asv's rule would flag the row at
each candidate factor; per run, the gate's verdict and the summary it would post (its rows
not judged here among them). Every failing verdict is a false alarm.

By default it measures what the gate measures (the ``pr`` tier) less the instruction
counts, which are deterministic. ``--rows REGEX`` narrows the rows (their ``name(params)``
from the start); ``--noise PROFILE`` runs it under an antagonist (tools/_lib/measure/antagonist.py);
runs made in batches hours apart are summarized together with ``--combine``. ``--samples``
also writes each run's pairs as ``tools.floors --samples`` does, so the same no-op runs can
give this host its floors (``tools.floors --from-samples``) where a session has no time to
measure floors apart from them.

    python -m tools.studies.noise_study --runs 4 [--floors FILE] [--noise bursty] [--out F]
                                        [--samples FILE]
    python -m tools.studies.noise_study --combine batch1.json batch2.json [--out all.json]
"""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path

from tools._lib.asv.machines import register_machine, this_host
from tools._lib.asv.results import RESULTS_DIR
from tools._lib.asv.suites import REPO_ROOT, tier_selection
from tools._lib.base.cli import BadInput, ExternalFailure, add_judging, command_parser, run_main
from tools._lib.base.git import git
from tools._lib.measure.antagonist import PROFILES, noise
from tools._lib.measure.host_floors import no_floors, read_floors
from tools._lib.measure.no_op_floors import samples_of
from tools._lib.verdict.gate import DEFAULT_FACTOR, DEFAULT_TIERS, Gate
from tools._lib.verdict.gate_report import summary
from tools.studies.noise_summary import FACTORS, summarize

MACHINE = "noise-study"
ASV_ROUNDS = 2  # asv's default rounds, interleaved: the comparison before the alternation


def default_selection(repo: Path, rows: str | None = None) -> str:
    """The gate's default rows less the instruction counts; only those whose
    ``name(params)`` ``rows`` matches from the start, when given."""
    regex, _ = tier_selection(repo, DEFAULT_TIERS)
    narrowed = f"(?={rows})" if rows else ""
    return rf"^{narrowed}(?!bench_instructions\.)" + regex.removeprefix("^")


def no_op_clone(workdir: Path) -> Path:
    repo = workdir / "repo"
    git("clone", "--quiet", str(REPO_ROOT), str(repo), cwd=workdir)
    identity = ["-c", "user.name=noise", "-c", "user.email=noise@example.invalid"]
    git(*identity, "commit", "--quiet", "--allow-empty", "-m", "no-op", cwd=repo)
    return repo


def run_records(verdict) -> list[dict]:
    """One record per row asv measured at both commits: asv's ratio and flags, and the
    paired slowdown with its interval where the row was measured again."""
    paired = {j.row.label: j for j in verdict.judged}
    records = []
    for row in verdict.rows:
        record = {
            "benchmark": row.benchmark,
            "params": row.params,
            "ratio": row.ratio,
            "flagged_at": [factor for factor in FACTORS if row.changed(factor)],
        }
        judged = paired.get(row.label)
        if judged is not None and judged.paired is not None:
            record["paired"] = judged.paired.ratio
            record["interval"] = list(judged.paired.slowdown_interval)
            record["pairs"] = len(judged.paired.ratios)
        elif judged is not None:
            record["not_measured"] = judged.outcome.why
        records.append(record)
    return records


def paired_of(verdict) -> dict:
    """The rows the alternation measured in one run, by label."""
    return {j.row.label: j.paired for j in verdict.judged if j.paired is not None}


def measure(args, workdir: Path) -> tuple[list[list[dict]], list[dict]]:
    repo = no_op_clone(workdir)
    register_machine(MACHINE)
    host = this_host()
    floors = read_floors(args.floors, host) if args.floors else no_floors(host)
    gate = Gate(repo, "HEAD~1", "HEAD", args.factor, MACHINE, floors)
    selection = ["--bench", args.bench or default_selection(repo, args.rows)]
    runs, verdicts, pairs = [], [], []
    for number in range(args.runs):
        first_pass = gate.first_pass(*args.asv_args, *selection, rounds=ASV_ROUNDS)
        if first_pass not in (0, 1):
            raise ExternalFailure(f"asv continuous exited {first_pass} in run {number + 1}")
        verdict = gate.decide(first_pass)
        runs.append(run_records(verdict))
        pairs.append(paired_of(verdict))
        if args.samples:  # after every run, so a run cut short keeps the ones before it
            args.samples.write_text(json.dumps(samples_of(pairs)) + "\n")
        verdicts.append(
            {
                "verdict": int(verdict.status),
                "failed": sorted(j.row.label for j in verdict.judged if j.slower),
                "not_judged": sorted(j.row.label for j in verdict.not_judged),
                "not_measured": sorted(j.row.label for j in verdict.not_measured),
                "host": host,
                "floors_runs": floors.runs,
                "noise": args.noise,
                "summary": summary(gate, verdict, ("HEAD~1", "HEAD"), lambda: ""),
            }
        )
        for path in (repo / RESULTS_DIR / MACHINE).glob("*.json"):
            if path.name != "machine.json":
                path.unlink()  # the next run measures afresh
        print(json.dumps(summarize(runs[-1:], verdicts[-1:]), indent=1), flush=True)
    return runs, verdicts


def combined(paths: list[Path]) -> tuple[list[list[dict]], list[dict]]:
    """The runs and verdicts of earlier ``--out`` files, in order."""
    runs, verdicts = [], []
    for path in paths:
        try:
            saved = json.loads(path.read_text())
            runs += saved["runs"]
            verdicts += saved["verdicts"]
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise BadInput(f"{path}: not a noise_study --out file ({error})") from None
    return runs, verdicts


def parse():
    parser = command_parser(__doc__, "continuous", "-a rounds=4")
    parser.add_argument("--runs", type=int, default=3)
    add_judging(parser, DEFAULT_FACTOR)
    parser.add_argument("--noise", choices=sorted(PROFILES), help="an antagonist throughout")
    parser.add_argument("--bench", help="asv --bench regex (default: the pr tier, no counts)")
    parser.add_argument("--rows", help="regex: only the default rows it matches from the start")
    parser.add_argument("--combine", type=Path, nargs="+", help="summarize earlier --out files")
    parser.add_argument("--out", type=Path, help="write every row and the summary as JSON")
    parser.add_argument("--samples", type=Path, help="also write every run's pairs (tools.floors)")
    args = parser.parse_args()
    if args.runs < 1:
        raise BadInput("--runs must be at least 1")
    if args.samples is not None and args.combine:
        raise BadInput("--samples writes the pairs of new runs; --combine makes none")
    if args.rows is not None and args.bench is not None:
        raise BadInput("--rows narrows the default rows; it does not combine with --bench")
    if args.rows is not None:
        try:
            re.compile(args.rows)
        except re.error as error:
            raise BadInput(f"--rows {args.rows!r} is not a valid regex: {error}") from None
    return args


def main() -> int:
    args = parse()
    if args.combine:
        runs, verdicts = combined(args.combine)
    else:
        with tempfile.TemporaryDirectory(prefix="noise-study-") as workdir, noise(args.noise):
            runs, verdicts = measure(args, Path(workdir))
    summarized = summarize(runs, verdicts)
    print(json.dumps(summarized, indent=1))
    if args.out:
        args.out.write_text(
            json.dumps({"summary": summarized, "runs": runs, "verdicts": verdicts}, indent=1)
        )
    return 0


if __name__ == "__main__":
    run_main("noise_study", main)
