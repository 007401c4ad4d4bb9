"""The PR gate: does HEAD make any benchmark slower than BASE beyond its threshold here?

    python -m tools.pr_gate BASE HEAD [--factor F] [--floors FILE] [--machine pr-gate]
                                      [--all] [--reach-map FILE] [--budget-minutes M]
                                      [--summary-file FILE] [--verdict-file FILE]
                                      [-- ASV CONTINUOUS OPTIONS]

It measures the rows the change can reach: a changed function of the library selects the
rows whose setup or call ran it at the base, module-level code the rows that imported its
module, the harness, the suites and the configuration every row, and docs, tests and
workflows none (tools/_lib/reach/selection.py); a change no row can reach measures nothing
and passes. What each row ran at the base comes from ``--reach-map`` (the nightly's), the
cache under .asv/reach, or is traced now. ``--all`` measures every row of the selection.
Where the change selects fewer rows than the selection holds and its timed rows are few
enough to be measured in ``--budget-minutes`` at a depth the floors were checked at (16
rounds), each is, and is judged at its floor scaled to that depth
(tools/_lib/measure/host_floors.Floors.threshold_at).

Of the rows selected, asv records both commits (its first pass, one round a side); every
timed row is then measured again by alternation, both commits' libraries taking turns
block by block on one core, and fails when its paired slowdown is above its floor on this
host (``--floors``, a machine's floors.json: tools/floors.py writes it) or above the factor
where the host has no floors yet; a row whose floor is above the factor is listed as not
judged here.
Instruction counts are judged at 1.01, or at their row's floor where the counting
process's layout moves the count further (asv.conf.json), and peak memory at the factor,
on asv's numbers (tools/_lib/verdict/gate.py). Its selection is the ``pr`` tier;
``-- --bench REGEX`` chooses other rows. The summary goes as Markdown to
``$GITHUB_STEP_SUMMARY`` (stdout when unset) and to ``--summary-file``; the verdict
itself, every row's judgement as data (tools/_lib/verdict/row.py), to
``--verdict-file``: the pull-request comment is built from it.

Exit status: 0 no slowdown beyond a threshold, 1 performance regressed, 2 a benchmark
failed (raised, timed out, or could not be measured again), 3 asv, git or the tracing of
what the rows reach failed, 4 bad input (an unknown commit, BASE equal to HEAD, a factor
that is not a finite number above 1, a floors file or reach map that is not there or not
one).
"""

from __future__ import annotations

import json
from pathlib import Path

from tools._lib.asv.machines import register_machine, this_host
from tools._lib.base.cli import (
    BadInput,
    Status,
    add_judging,
    command_parser,
    existing_file,
    minutes,
    run_main,
)
from tools._lib.base.git import repo_root
from tools._lib.base.step_summary import write_summary
from tools._lib.measure.comparison import is_count
from tools._lib.measure.explain import grown_functions
from tools._lib.measure.host_floors import no_floors, read_floors
from tools._lib.verdict.gate import DEFAULT_FACTOR, Gate, Verdict, with_default_selection
from tools._lib.verdict.gate_report import gate_report
from tools._lib.verdict.gate_rows import (
    DEPTH_BUDGET_MINUTES,
    depth_for,
    gate_selection,
    measured_args,
    row_selection,
)
from tools._lib.verdict.markdown import headline, markdown


def parse():
    parser = command_parser(__doc__, "continuous", "--bench bench_matmul")
    parser.add_argument("base", help="the commit to compare against, e.g. origin/main")
    parser.add_argument("head", help="the commit under test, e.g. HEAD")
    add_judging(parser, DEFAULT_FACTOR)
    parser.add_argument("--machine", default="pr-gate", help="asv machine name")
    parser.add_argument(
        "--all", action="store_true", help="measure every row, whatever the change reaches"
    )
    parser.add_argument(
        "--reach-map",
        type=existing_file,
        help="what each row runs at the base (the nightly's map of that commit)",
    )
    parser.add_argument(
        "--budget-minutes",
        type=minutes,
        default=DEPTH_BUDGET_MINUTES,
        metavar="M",
        help=f"time for measuring a small selection deeply (default {DEPTH_BUDGET_MINUTES:g})",
    )
    parser.add_argument("--summary-file", type=Path, help="also write the summary here")
    parser.add_argument("--verdict-file", type=Path, help="write the verdict's JSON here")
    return parser.parse_args()


def main() -> int:
    args = parse()
    repo = repo_root()
    host = this_host()
    floors = read_floors(args.floors, host) if args.floors else no_floors(host)
    gate = Gate(repo, args.base, args.head, args.factor, args.machine, floors)
    if gate.base == gate.head:
        raise BadInput(
            f"{args.base} and {args.head} are the same commit ({gate.base[:12]}): "
            "nothing to compare"
        )
    register_machine(args.machine)
    selection = gate_selection(repo, gate.base, gate.head, args.asv_args, args.all, args.reach_map)
    print(f"pr_gate: measuring {len(selection.rows)} of {len(selection.candidates)} rows")
    if not selection.rows:
        verdict = Verdict(Status.OK)
    elif selection.everything:
        verdict = gate.decide(gate.first_pass(*with_default_selection(args.asv_args, repo)))
    else:
        gate.measured = frozenset(selection.rows)
        gate.depth = depth_for(selection.rows, args.budget_minutes)
        verdict = gate.decide(gate.first_pass(*measured_args(args.asv_args, selection)))

    def why() -> str:
        sections = [
            grown_functions(repo, gate.base, gate.head, row.label)
            for row in gate.asv_slower(verdict.rows)
            if is_count(row.unit)
        ]
        return "\n\n".join(section for section in sections if section)

    report = gate_report(gate, verdict, (args.base, args.head), row_selection(selection))
    grown = why() if verdict.status == Status.REGRESSED else ""
    text = markdown(report, grown=grown)
    write_summary(text)
    for path, content in (
        (args.summary_file, text),
        (args.verdict_file, json.dumps(report.to_json(), indent=1) + "\n"),
    ):
        if path:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content)
    print(f"pr_gate: {headline(report)}")
    return verdict.status


if __name__ == "__main__":
    run_main("pr_gate", main)
