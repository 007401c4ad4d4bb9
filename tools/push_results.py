"""Push an outbox of results (written by ``tools.nightly --outbox``) to the results branch.

    python -m tools.push_results OUTBOX [OUTBOX ...] [--remote origin] [--branch asv-results]
                                 [--landed FILE]

This is the only step of the nightly that holds a token that can write: in Actions it runs
in its own job, after the benchmarking job, with the standard library and git alone (no
installed package, no benchmarked commit's code), and the token reaches git through the
environment for its own commands only. An outbox is untrusted data: only regular files at
results-tree paths of its own machine, each JSON file of the kind its path says, are
written; a file the branch changed since the outbox's run began is left as the branch has
it; nothing lands on a branch that was rewound or under a machine name that stands for
other hardware there. A refused outbox leaves the others landing, and the status is 4.
``--landed`` writes the machines whose outboxes all landed (or held nothing new), one a
line: the issues filed afterwards name only results that are on the branch.
"""

from __future__ import annotations

import json
from pathlib import Path

from tools._lib.asv.results import is_result_file
from tools._lib.base.cli import ArgumentParser, BadInput, run_main
from tools._lib.base.git import repo_root
from tools._lib.measure.host_floors import check_floors_data
from tools._lib.store.branch import DEFAULT_BRANCH, ResultsBranch
from tools._lib.store.outbox import Outbox
from tools._lib.store.releases_page import check_comparison
from tools._lib.store.tree import PER_MACHINE_FOLDERS, machine_of


def checked_files(outbox: Outbox) -> dict[str, bytes]:
    """The outbox's files, each refused unless it is its own machine's (or the shared
    ``benchmarks.json``) and, where JSON, JSON of the kind its path says."""
    machine, files = outbox.machine, outbox.files()
    for name, content in files.items():
        owner = machine_of(name)
        if owner not in (None, machine):
            raise BadInput(f"{outbox.path}: {name} is not of machine {machine}")
        if name.endswith(".json"):
            check_json(outbox.path, name, content)
    return files


def check_json(folder: Path, name: str, content: bytes) -> None:
    try:
        data = json.loads(content)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        what = "not a result file" if name.count("/") == 1 else "not JSON"
        raise BadInput(f"{folder}: {name} is {what}: {error}") from None
    if name.endswith("/floors.json"):
        try:
            check_floors_data(data)
        except ValueError as error:
            raise BadInput(f"{folder}: {name} is not a floors file: {error}") from None
    if not isinstance(data, dict):
        # Every file of a results tree is a JSON object; a list or a string would crash
        # the merge of benchmarks.json or the machine check, and stop the next outbox.
        raise BadInput(f"{folder}: {name} is not a JSON object: {type(data).__name__}")
    folder_name = name.split("/", 1)[0]
    if folder_name == "releases":
        try:
            check_comparison(data)
        except ValueError as error:
            raise BadInput(f"{folder}: {name} is not a releases comparison: {error}") from None
    result_file = is_result_file(Path(name)) and folder_name not in PER_MACHINE_FOLDERS
    if result_file and "/" in name and not isinstance(data.get("commit_hash"), str):
        raise BadInput(f"{folder}: {name} is not a result file: no commit_hash")


def push_outbox(branch: ResultsBranch, outbox: Outbox) -> bool:
    """Land one outbox's files; False when it held nothing new."""
    machine, base = outbox.machine, outbox.base  # bad input unless nightly wrote them
    files = checked_files(outbox)
    if not files:
        print(f"push_results: {outbox.path} holds no results")
        return False
    branch.check_out()
    if base:
        branch.guard.check_tip(branch.tip, since=base)
    described = files.get(f"{machine}/machine.json")
    if described is not None:
        branch.guard.check_machine(machine, json.loads(described))
    kept = branch.write_files(files, since=base)
    for name in kept:
        print(f"push_results: {machine}: kept the branch's newer {name}")
    results = [name for name in files if name.count("/") == 1 and name.endswith(".json")]
    commits = sorted({name.split("/")[1][:8] for name in results if "machine.json" not in name})
    landed = branch.land(f"{machine}: results for {' '.join(commits) or 'its runs'}")
    print(f"push_results: {machine}: {'pushed' if landed else 'nothing new'}")
    return landed


def machine_or_none(outbox: Outbox) -> str | None:
    try:
        return outbox.machine
    except BadInput:
        return None


def main() -> int:
    parser = ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("outboxes", nargs="+", type=Path, metavar="OUTBOX")
    parser.add_argument("--remote", default="origin")
    parser.add_argument("--branch", default=DEFAULT_BRANCH)
    parser.add_argument("--landed", type=Path, help="write the machines that landed here")
    args = parser.parse_args()
    branch = ResultsBranch(repo_root(), args.remote, args.branch)
    refused, landed, failed = [], set(), set()
    try:
        with branch.guard.locked():
            for path in args.outboxes:  # one refused outbox leaves the others' results landing
                outbox = Outbox(path)
                try:
                    push_outbox(branch, outbox)
                    landed.add(outbox.machine)
                except BadInput as error:
                    refused.append(str(error))
                    failed.add(machine_or_none(outbox))
    finally:
        if args.landed:
            args.landed.write_text("".join(f"{m}\n" for m in sorted(landed - failed)))
    if refused:
        raise BadInput(
            f"refused {len(refused)} of {len(args.outboxes)} outboxes: " + "; ".join(refused)
        )
    return 0


if __name__ == "__main__":
    run_main("push_results", main)
