"""The nightly run of one machine: benchmark the newest commits it has not measured yet,
push the results to the results branch, and optionally publish the site.

    python -m tools.nightly --machine NAME [--max-commits 5] [--site _site] [-- ASV RUN OPTIONS]

1. The results branch is checked out clean at ``.asv/results`` (tools/results_branch.py).
2. asv's machine file gets the stable ``--machine`` name.
3. ``asv run --skip-existing-commits`` over the newest ``--max-commits`` first-parent
   commits of ``--ref`` with no result file for this machine. (asv's own ``NEW`` means
   "after the newest benchmarked commit" and is unbounded, so the list is made here.)
4. The new result files, and a manifest of the environment they were measured in, are
   committed and pushed; a push that loses a race is replayed onto the new tip.
5. With ``--site``, every machine's results are published there.

A run killed before step 4 pushes nothing; running again redoes its commits.
"""

from __future__ import annotations

import argparse
import datetime
import subprocess
import tempfile
from pathlib import Path

from tools.common import (
    RESULTS_DIR,
    ToolError,
    asv,
    benchmarked_commits,
    first_parent_commits,
    git,
    register_machine,
    run_main,
)
from tools.publish import publish
from tools.results_branch import DEFAULT_BRANCH, ResultsBranch

MANIFEST = "manifest.txt"  # not *.json: asv would try to load it as a result file
# Run by the asv env's interpreter, from the repo root: what the benchmarks ran under.
MANIFEST_PROBE = """
import dataclasses, os, platform, torch
from benchmarks._harness.controls import controls_from_env
controls = dataclasses.asdict(controls_from_env())
cuda = torch.cuda.is_available()
facts = {
    "python": platform.python_version(),
    "platform": platform.platform(),
    "cpu_count": os.cpu_count(),
    "torch": torch.__version__,
    "cuda": torch.version.cuda,
    "cudnn": torch.backends.cudnn.version() if cuda else None,
    "gpus": [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())],
    "threads (harness)": controls["threads"],
    "tf32 (harness)": controls["allow_tf32"],
    "cudnn.benchmark (harness)": controls["cudnn_benchmark"],
    "tf32 matmul (torch default)": torch.backends.cuda.matmul.allow_tf32,
    "tf32 cudnn (torch default)": torch.backends.cudnn.allow_tf32,
}
for key, value in facts.items():
    print(f"{key}: {value}")
"""


def commits_to_run(repo: Path, machine: str, ref: str, limit: int) -> list[str]:
    """The newest ``limit`` first-parent commits of ``ref`` that ``machine`` lacks."""
    done = benchmarked_commits(repo / RESULTS_DIR, machine)
    return [commit for commit in first_parent_commits(ref, repo) if commit not in done][:limit]


def write_manifest(repo: Path, machine: str) -> None:
    """Record torch, CUDA, cuDNN, GPUs, controls and pip freeze of each asv env."""
    sections = [f"# written by tools/nightly.py at {datetime.datetime.now(datetime.UTC):%FT%TZ}"]
    for python in sorted((repo / ".asv" / "env").glob("*/bin/python")):
        probe = subprocess.run(
            [str(python), "-c", MANIFEST_PROBE], cwd=repo, capture_output=True, text=True
        )
        if probe.returncode != 0:
            raise ToolError(f"manifest probe failed in {python}: {probe.stderr.strip()[-300:]}")
        frozen = subprocess.run(
            [str(python), "-m", "pip", "freeze"], capture_output=True, text=True, check=True
        )
        packages = "\n".join(f"  {line}" for line in frozen.stdout.splitlines())
        env = python.parent.parent.name
        sections.append(f"[{env}]\n{probe.stdout.rstrip()}\npip freeze:\n{packages}")
    (repo / RESULTS_DIR / machine / MANIFEST).write_text("\n\n".join(sections) + "\n")


def nightly(args: argparse.Namespace, repo: Path) -> int:
    branch = ResultsBranch(repo, args.remote, args.branch)
    branch.check_out()
    register_machine(args.machine)
    commits = commits_to_run(repo, args.machine, args.ref, args.max_commits)
    failed = False
    if not commits:
        print(f"nightly: every one of the newest commits of {args.ref} has results")
    else:
        print(f"nightly: benchmarking {len(commits)} commits on {args.machine}", flush=True)
        with tempfile.TemporaryDirectory() as scratch:
            hashfile = Path(scratch) / "commits.txt"
            hashfile.write_text("\n".join(commits) + "\n")
            done = asv(
                "run",
                "--machine",
                args.machine,
                "--skip-existing-commits",
                *args.asv_args,
                f"HASHFILE:{hashfile}",
                cwd=repo,
            )
        # asv run exits 2 when a benchmark failed: its results, failures included, are
        # still the record for those commits. Anything else means no usable results.
        if done.returncode not in (0, 2):
            raise ToolError(f"asv run exited {done.returncode}; nothing was pushed")
        failed = done.returncode == 2
        write_manifest(repo, args.machine)
        short = " ".join(commit[:8] for commit in commits)
        if branch.commit(f"{args.machine}: results for {short}"):
            branch.push()
            print(f"nightly: pushed results for {short} to {args.remote} {args.branch}")
    if args.site:
        publish(repo, args.site)
    if failed:
        print("nightly: some benchmarks failed (results pushed); see asv's output above")
        return 1
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="Arguments after -- go to asv run, e.g. -- --bench bench_matmul --quick",
    )
    parser.add_argument("--machine", required=True, help="stable machine name, e.g. gha-cpu")
    parser.add_argument("--max-commits", type=int, default=5, metavar="K")
    parser.add_argument("--ref", default="HEAD", help="history to benchmark (default HEAD)")
    parser.add_argument("--remote", default="origin")
    parser.add_argument("--branch", default=DEFAULT_BRANCH, help="the results branch")
    parser.add_argument("--site", type=Path, help="publish every machine's results here")
    parser.add_argument("asv_args", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.max_commits < 1:
        raise ToolError("--max-commits must be at least 1")
    repo = Path(git("rev-parse", "--show-toplevel", cwd=Path.cwd()))
    return nightly(args, repo)


if __name__ == "__main__":
    run_main("nightly", main)
