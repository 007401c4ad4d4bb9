"""The PR gate: does HEAD make any benchmark slower than BASE by more than a factor?

    python -m tools.pr_gate BASE HEAD [--factor 1.3] [--machine pr-gate] [-- ASV OPTIONS]

Runs ``asv continuous --split --interleave-rounds`` (both commits measured in alternating
rounds, so drift on a shared runner hits both alike), then writes ``asv compare --split``
as Markdown to ``$GITHUB_STEP_SUMMARY`` (stdout when unset). Exit status: 0 no change
beyond the factor, 1 performance regressed, 2 a benchmark failed, 3 asv itself failed.

The default factor comes from tools/noise_study.py on a 2-core runner (README,
"Choosing the factor"): the smallest factor with no false alarm over repeated no-op
comparisons, rounded up.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from tools.common import ToolError, asv, git, register_machine, run_main, write_summary

DEFAULT_FACTOR = 1.3
VERDICTS = {
    0: "no benchmark changed by more than the factor",
    1: "performance regressed: a benchmark is slower than the factor allows",
    2: "a benchmark failed: it raised or timed out (see the asv log above)",
}


def compare_table(repo: Path, machine: str, base: str, head: str, factor: float, *extra: str):
    done = asv(
        "compare",
        "--split",
        "--factor",
        str(factor),
        "--machine",
        machine,
        *extra,
        base,
        head,
        cwd=repo,
        capture=True,
    )
    if done.returncode != 0:
        raise ToolError(f"asv compare failed: {done.stderr.strip()[-300:]}")
    return done.stdout.strip()


def gate(repo: Path, base: str, head: str, factor: float, machine: str, asv_args: list[str]):
    base_sha, head_sha = (
        git("rev-parse", "--verify", f"{name}^{{commit}}", cwd=repo) for name in (base, head)
    )
    register_machine(machine, repo)
    continuous = asv(
        "continuous",
        "--split",
        "--interleave-rounds",
        "--factor",
        str(factor),
        "--machine",
        machine,
        *asv_args,
        base_sha,
        head_sha,
        cwd=repo,
    )
    status = continuous.returncode
    if status not in VERDICTS:
        raise ToolError(f"asv continuous exited {status}; no verdict")
    verdict = VERDICTS[status]
    changed = compare_table(repo, machine, base_sha, head_sha, factor, "--only-changed")
    everything = compare_table(repo, machine, base_sha, head_sha, factor)
    write_summary(
        f"## Benchmarks: {verdict}\n\n"
        f"`{base_sha[:8]}` ({base}) → `{head_sha[:8]}` ({head}), factor {factor}, "
        f"machine `{machine}`\n\n"
        f"{changed or 'No benchmark changed beyond the factor.'}\n\n"
        f"<details><summary>All benchmarks</summary>\n\n{everything}\n\n</details>\n"
    )
    print(f"pr_gate: {verdict}")
    return status


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="Arguments after -- go to asv continuous, e.g. -- --bench bench_matmul",
    )
    parser.add_argument("base", help="the commit to compare against, e.g. origin/main")
    parser.add_argument("head", help="the commit under test, e.g. HEAD")
    parser.add_argument(
        "--factor",
        type=float,
        default=DEFAULT_FACTOR,
        help=f"slowdown ratio that fails the gate (default {DEFAULT_FACTOR})",
    )
    parser.add_argument("--machine", default="pr-gate", help="asv machine name")
    parser.add_argument("asv_args", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.factor <= 1.0:
        raise ToolError(f"--factor must be above 1.0, got {args.factor}")
    repo = Path(git("rev-parse", "--show-toplevel", cwd=Path.cwd()))
    return gate(repo, args.base, args.head, args.factor, args.machine, args.asv_args)


if __name__ == "__main__":
    run_main("pr_gate", main)
