"""The PR gate: does HEAD make any benchmark slower than BASE beyond its threshold here?

    python -m tools.pr_gate BASE HEAD [--factor F] [--floors FILE] [--machine pr-gate]
                                      [--summary-file FILE] [--verdict-file FILE]
                                      [-- ASV CONTINUOUS OPTIONS]

asv records both commits (its first pass, one round a side); every timed row is then
measured again by alternation, both commits' libraries taking turns block by block on one
core, and fails when its paired slowdown is above its floor on this host (``--floors``, a
machine's floors.json: tools/floors.py writes it) or above the factor where the host has
no floors yet; a row whose floor is above the factor is listed as not judged here.
Instruction counts are judged at 1.01 and peak memory at the factor, on asv's numbers
(tools/_lib/verdict/gate.py). By default it measures the ``pr`` tier; ``-- --bench REGEX``
chooses other rows. The summary goes as Markdown to ``$GITHUB_STEP_SUMMARY`` (stdout when
unset) and to ``--summary-file``; the verdict itself, every row's judgement as data
(tools/_lib/verdict/row.py), to ``--verdict-file``: the pull-request comment is built from it.

Exit status: 0 no slowdown beyond a threshold, 1 performance regressed, 2 a benchmark
failed (raised, timed out, or could not be measured again), 3 asv or git failed, 4 bad
input (an unknown commit, BASE equal to HEAD, a factor that is not a finite number above 1,
a floors file that is not there or not one).
"""

from __future__ import annotations

import json
from pathlib import Path

from tools._lib.asv.machines import register_machine, this_host
from tools._lib.base.cli import BadInput, Status, add_judging, command_parser, run_main
from tools._lib.base.git import repo_root
from tools._lib.base.step_summary import write_summary
from tools._lib.measure.comparison import is_count
from tools._lib.measure.explain import grown_functions
from tools._lib.measure.host_floors import no_floors, read_floors
from tools._lib.verdict.gate import DEFAULT_FACTOR, Gate, with_default_selection
from tools._lib.verdict.gate_report import gate_report
from tools._lib.verdict.markdown import markdown


def parse():
    parser = command_parser(__doc__, "continuous", "--bench bench_matmul")
    parser.add_argument("base", help="the commit to compare against, e.g. origin/main")
    parser.add_argument("head", help="the commit under test, e.g. HEAD")
    add_judging(parser, DEFAULT_FACTOR)
    parser.add_argument("--machine", default="pr-gate", help="asv machine name")
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
    verdict = gate.decide(gate.first_pass(*with_default_selection(args.asv_args, repo)))

    def why() -> str:
        sections = [
            grown_functions(repo, gate.base, gate.head, row.label)
            for row in gate.asv_slower(verdict.rows)
            if is_count(row.unit)
        ]
        return "\n\n".join(section for section in sections if section)

    report = gate_report(gate, verdict, (args.base, args.head))
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
    print(f"pr_gate: {verdict.headline}")
    return verdict.status


if __name__ == "__main__":
    run_main("pr_gate", main)
