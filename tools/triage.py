"""After a nightly: find the new steps in one machine's history, confirm each, bisect it to
one commit, explain it, and write the report that tools/file_issues.py files as issues.

    python -m tools.triage --machine NAME [--budget-minutes M] [--report FILE]
                           [--site-url URL] [--outbox DIR --no-fetch] [--no-check-out]

1. **Steps**: asv's step detection over the machine's graphs (tools/_lib/triage/steps.py), each
   row at the history's threshold (asv.conf.json's ``regressions_thresholds``), or
   finer where the machine's floors allow it. A step inside one triaged before is not new.
2. **Confirm**: a timed row's two endpoint commits measured again by alternation; the
   step is dismissed unless the row is slower than its floor on this host (or than the
   history's threshold where there are no floors). A count is deterministic: its history
   is the measurement. A row that cannot be measured again is left for the next night.
3. **Bisect** a confirmed step spanning more than one commit (tools/_lib/triage/bisection.py).
4. **Explain**: the profiler's operators, or the functions whose counts grew.
5. **Resolve**: an open regression whose latest value looks back is measured again, and
   closed only when that measurement says so.

Each step's record is saved to ``triage/NAME.json`` on the results branch as soon as it is
made, so a triage cut by its budget or a failure keeps what it finished; what does not fit
``--budget-minutes`` waits for the next night. With ``--outbox`` the records go to an
outbox for tools.push_results instead: the nightly's (``--no-check-out``, after its
benchmarks), or one this run starts from the branch it checks out (a triage job of its
own, once every shard of a sharded machine has landed).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from tools._lib.asv.machines import this_host
from tools._lib.base.cli import ArgumentParser, ToolError, machine_name, minutes, run_main
from tools._lib.base.git import repo_root
from tools._lib.store.branch import DEFAULT_BRANCH, ResultsBranch
from tools._lib.store.outbox import Outbox
from tools._lib.triage.investigation import Investigation, report, resolution_of
from tools._lib.triage.record import Finding, Regression
from tools._lib.triage.records import TriageStore
from tools._lib.triage.steps import contains, history_steps


def said(record: Regression) -> str:
    if record.finding == Finding.CONFIRMED:
        return f"confirmed; guilty {record.guilty[:12]} after {record.builds} builds"
    if record.finding == Finding.DISMISSED:
        return f"dismissed ({record.confirmation})"
    return f"{record.confirmation}; tried again next night"


class Triage:
    """One machine's triage: its records, the budget, and where results go."""

    def __init__(self, args, repo: Path):
        self.args, self.repo = args, repo
        self.branch = ResultsBranch(repo, args.remote, args.branch, fetch=not args.no_fetch)
        self.outbox = Outbox(args.outbox) if args.outbox else None
        self.started = time.monotonic()

    def in_budget(self) -> bool:
        budget = self.args.budget_minutes
        return budget is None or time.monotonic() - self.started < budget * 60

    def triage(self, store: TriageStore, investigation: Investigation) -> None:
        fresh = [
            step
            for step in history_steps(self.repo, self.args.machine, investigation.detection_at)
            if not any(contains(self.repo, old, step) for old in store.settled())
        ]
        print(f"triage: {len(fresh)} new steps on {self.args.machine}")
        for number, step in enumerate(sorted(fresh, key=lambda s: -s.slowdown)):
            if not self.in_budget():
                print(f"triage: budget spent; {len(fresh) - number} steps wait")
                return
            try:
                record = investigation.investigate(step)
            except ToolError as error:  # this step alone waits; the others go on
                record = Regression(step, Finding.UNMEASURED, f"not measured again: {error}")
            print(f"triage: {step.label}: {said(record)}")
            store.keep(record, f"{self.args.machine}: triage of {step.label}")

    def resolve(self, store: TriageStore, investigation: Investigation) -> None:
        for record in store.open():
            if not self.in_budget():
                print("triage: budget spent; the open regressions are looked at next night")
                return
            resolved = resolution_of(investigation, record)
            if resolved is not record:
                store.keep(resolved, f"{self.args.machine}: {record.step.label} resolved")

    def run(self) -> int:
        with self.branch.guard.locked():
            if self.args.check_out:
                self.branch.check_out()
                if self.outbox is not None:  # a triage job of its own, after the push
                    self.outbox.start(self.args.machine, self.branch.remote_base)
            store = TriageStore(self.repo, self.args.machine, self.branch, self.outbox)
            investigation = Investigation(self.repo, self.args.machine, this_host())
            self.triage(store, investigation)
            self.resolve(store, investigation)
            store.keep(None, f"{self.args.machine}: triage")
        print(f"triage: done in {time.monotonic() - self.started:.0f} s")
        if self.args.report:
            written = report(
                self.repo, store.records.values(), self.args.machine, self.args.site_url
            )
            self.args.report.parent.mkdir(parents=True, exist_ok=True)
            self.args.report.write_text(json.dumps(written.to_json(), indent=1) + "\n")
        return 0


def main() -> int:
    parser = ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--machine", required=True, type=machine_name)
    parser.add_argument("--budget-minutes", type=minutes, metavar="M")
    parser.add_argument("--report", type=Path, help="write the report for file_issues here")
    parser.add_argument("--site-url", default="", help="the published site, for graph links")
    parser.add_argument("--remote", default="origin")
    parser.add_argument("--branch", default=DEFAULT_BRANCH)
    parser.add_argument("--outbox", type=Path, help="save results here for push_results")
    parser.add_argument("--no-fetch", action="store_true", help="no network for the branch")
    parser.add_argument(
        "--no-check-out",
        dest="check_out",
        action="store_false",
        help="use the results worktree as the nightly left it",
    )
    return Triage(parser.parse_args(), repo_root()).run()


if __name__ == "__main__":
    run_main("triage", main)
