"""Push an outbox of results (written by ``tools.nightly --outbox``) to the results branch.

    python -m tools.push_results OUTBOX [OUTBOX ...] [--remote origin] [--branch asv-results]

This is the only step of the nightly that holds a token that can write: in Actions it runs
in its own job, after the benchmarking job, with the standard library and git alone (no
installed package, no benchmarked commit's code), and the token reaches git through the
environment for its own commands only. An outbox is untrusted data: only results-tree
paths are written, and nothing lands on a branch that was rewound since the run began or
under a machine name that stands for other hardware there.
"""

from __future__ import annotations

import json
from pathlib import Path

from tools._lib.cli import ArgumentParser, BadInput, run_main
from tools._lib.git import repo_root
from tools._lib.outbox import Outbox
from tools._lib.results_branch import DEFAULT_BRANCH, ResultsBranch


def push_outbox(branch: ResultsBranch, outbox: Outbox) -> bool:
    """Land one outbox's files; False when it held nothing new."""
    machine, base = outbox.machine, outbox.base  # bad input unless nightly wrote them
    files = outbox.files()
    if not files:
        print(f"push_results: {outbox.path} holds no results")
        return False
    branch.check_out()
    if base:
        branch.check_tip(branch.tip, since=base)
    described = files.get(f"{machine}/machine.json")
    if described is not None:
        try:
            branch.check_machine(machine, json.loads(described))
        except json.JSONDecodeError:
            raise BadInput(f"{outbox.path}: {machine}/machine.json is not JSON") from None
    branch.write_files(files)
    results = [name for name in files if name.count("/") == 1 and name.endswith(".json")]
    commits = sorted({name.split("/")[1][:8] for name in results if "machine.json" not in name})
    landed = branch.land(f"{machine}: results for {' '.join(commits) or 'its runs'}")
    print(f"push_results: {machine}: {'pushed' if landed else 'nothing new'}")
    return landed


def main() -> int:
    parser = ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("outboxes", nargs="+", type=Path, metavar="OUTBOX")
    parser.add_argument("--remote", default="origin")
    parser.add_argument("--branch", default=DEFAULT_BRANCH)
    args = parser.parse_args()
    branch = ResultsBranch(repo_root(), args.remote, args.branch)
    with branch.locked():
        for path in args.outboxes:
            push_outbox(branch, Outbox(path))
    return 0


if __name__ == "__main__":
    run_main("push_results", main)
