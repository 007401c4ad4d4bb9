"""Benchmark the committed HEAD on this machine and publish the site: the README's first
command (``tools/dev.sh bench`` sets up, then runs this).

    python -m tools.bench [--tier nightly|pr|weekly|all] [--rounds 1] [--emulated]
                          [-- ASV RUN OPTIONS]

By default the nightly tier: the pr and nightly rows, their instruction counts included
(benchmarks/_harness/tiers.py); ``--tier weekly`` the shape sweeps, ``--tier all`` every
row. Each row is timed in one round (one benchmark process) by default, half what the
nightly's history takes (asv's two), so a first look at the site costs minutes, not most
of an hour; ``--rounds 2`` measures as the nightly does. On a CPU with no native
arithmetic for bfloat16 or float16 (no AVX-512 BF16/FP16 or AMX: GitHub's hosted runners,
many EPYC and Xeon hosts) the first look leaves those rows out and says how many: torch
computes them through float32 there, a large product at a minute a call, and the nightly
measures them; ``--emulated`` includes them. One line per phase: the
environment (asv's virtualenv, built on first use), the benchmarks (asv's own progress
lines), a publish of the timed rows (with the address to open: the site is there to look
at while the counts run), the counts (one valgrind process for the commit), and the
publish of everything; it ends with the address again. Options after ``--`` go to both asv
runs (``-- --show-stderr`` prints why each n/a row skipped; ``-- --bench REGEX`` replaces
the tier's rows).

Exit status: 0 published; 1 a benchmark failed (the others published); 3 asv failed; 4 bad
input.
"""

from __future__ import annotations

import argparse
import platform
import re
import shutil
import time
from pathlib import Path

from tools._lib.asv.machines import register_machine
from tools._lib.asv.run import asv, bench_selection, ensure_environment, split_bench_selection
from tools._lib.asv.suites import discovered, emulated_rows, tier_selection
from tools._lib.base.cli import BadInput, ExternalFailure, Status, command_parser, run_main
from tools._lib.base.git import git, repo_root
from tools._lib.store.site import publish

TIERS = {
    "pr": ("pr",),
    "nightly": ("pr", "nightly"),
    "weekly": ("weekly",),
    "all": ("pr", "nightly", "weekly"),
}
COUNTS = r"bench_instructions\."
SITE = Path(".asv") / "html"
PORT = 8000
ADDRESS = (
    f"serve the site with .venv/bin/python -m http.server -d {SITE} {PORT}, "
    f"then open http://localhost:{PORT}/"
)


def phase(number: int, name: str, what: str) -> float:
    print(f"bench: [{number}/5] {name}: {what}", flush=True)
    return time.monotonic()


def leaving_out(rows: set[str]) -> str:
    """A regex lookahead that leaves out exactly ``rows`` (``name(params)``); empty when
    there are none."""
    if not rows:
        return ""
    return "(?!(?:" + "|".join(re.escape(row) + "$" for row in sorted(rows)) + "))"


def selections(
    repo: Path, tier: str, asv_args: list[str], rows: list[str], left: set[str] = frozenset()
) -> tuple[str, str]:
    """The two asv runs' ``--bench`` regexes: the timed rows, then the counts; the tier's
    rows less the ``left`` ones. A chosen regex is looked for anywhere
    in a row's name (``name(params)``), as asv looks; one that is no regex or selects none
    of ``rows`` is bad input, before any environment is built."""
    chosen = bench_selection(asv_args)
    if not chosen:
        body = f"(?:{tier_selection(repo, TIERS[tier])[0].removeprefix('^')})"
        body = leaving_out(set(left)) + body
        return f"^(?!{COUNTS}){body}", f"^(?={COUNTS}){body}"
    body = ".*?(?:" + "|".join(f"(?:{r})" for r in chosen) + ")"
    shown = " ".join(chosen)
    try:
        selected = selected_rows(body, rows)
    except re.error as error:
        raise BadInput(f"--bench {shown!r} is not a valid regex: {error}") from None
    if not selected:
        raise BadInput(f"--bench {shown!r} selects no benchmark row (one is named {rows[0]})")
    return f"^(?!{COUNTS}){body}", f"^(?={COUNTS}){body}"


def selected_rows(regex: str, rows: list[str]) -> list[str]:
    """The ``rows`` (``name(params)``) that asv's ``--bench regex`` runs."""
    pattern = re.compile(regex)
    return [row for row in rows if pattern.search(row)]


def run(
    repo: Path, machine: str, regex: str, rows: list[str], asv_args: list[str], rounds: int
) -> int | None:
    """asv run of the ``rows`` that ``regex`` selects, each in ``rounds`` rounds unless the
    asv options set them; None when it selects none (asv would exit 1)."""
    if not selected_rows(regex, rows):
        return None
    rest = split_bench_selection(asv_args)[1]
    if not any(arg.startswith("rounds=") for arg in rest):
        rest = ["--attribute", f"rounds={rounds}", *rest]
    done = asv("run", "--machine", machine, *rest, "--bench", regex, "HEAD^!", cwd=repo)
    if done.returncode not in (0, 2):
        raise ExternalFailure(f"asv run exited {done.returncode}")
    return done.returncode


def parse():
    parser = command_parser(__doc__, "run")
    parser.add_argument(
        "--tier",
        choices=sorted(TIERS),
        default="nightly",
        help="which rows (default nightly: the pr and nightly rows)",
    )
    parser.add_argument(
        "--emulated",
        action="store_true",
        help="include the rows of dtypes this CPU computes through float32 (bfloat16, "
        "float16 without native support), which the first look leaves out",
    )
    parser.add_argument(
        "--rounds",
        type=positive,
        default=1,
        help="benchmark processes a row (default 1, a first look; the nightly takes 2)",
    )
    return parser.parse_args()


def positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of rounds, 1 or more")
    return int(text)


def counts_phase(regex: str, rows: list[str]) -> str:
    """What the counts phase will do."""
    if not selected_rows(regex, rows):
        return "none in this selection"
    if shutil.which("valgrind"):
        return "one valgrind process"
    return (
        "valgrind is not installed, so the count rows show n/a (tools/dev.sh setup installs "
        "it where it can)"
    )


def left_out(repo: Path, tier: str, rows: list[str], left: set[str]) -> None:
    """Say how many of the tier's rows the first look leaves out, and why."""
    everything, _ = selections(repo, tier, [], rows)
    count = len(set(selected_rows(everything, rows)) & left)
    if count:
        print(
            f"bench: left out {count} rows: large bfloat16 or float16 calls this CPU computes "
            "through float32 (no AVX-512 BF16/FP16 or AMX), at up to a minute a call; the "
            "nightly measures them, and --emulated includes them here",
            flush=True,
        )


def announce(head: str, machine: str, tier: str, rounds: int) -> None:
    rest = (
        " (the pr and nightly rows, counts included; --tier weekly or --tier all for the rest)"
        if tier == "nightly"
        else ""
    )
    print(
        f"bench: benchmarking HEAD ({head}) on machine {machine!r}, tier {tier!r}{rest}; "
        f"{rounds} round{'s' if rounds > 1 else ''} a row (--rounds 2 measures as the nightly)",
        flush=True,
    )


def main() -> int:
    args = parse()
    repo, machine = repo_root(), platform.node() or "this-machine"
    rows = [row for _, named in discovered(repo).values() for row in named]
    left = set() if args.emulated else emulated_rows(repo)
    timed, counted = selections(repo, args.tier, args.asv_args, rows, left)
    announce(git("rev-parse", "--short", "HEAD", cwd=repo), machine, args.tier, args.rounds)
    if left and not bench_selection(args.asv_args):
        left_out(repo, args.tier, rows, left)
    register_machine(machine)
    begun = phase(1, "environment", "asv's virtualenv in .asv/env (built on first use)")
    ensure_environment(repo)
    spent = time.monotonic() - begun
    begun = phase(2, "benchmarks", f"asv run of the rows (environment: {spent:.0f} s)")
    timed_status = run(repo, machine, timed, rows, args.asv_args, args.rounds)
    failed = timed_status == 2
    # The timed rows go on the site before the counts are taken: a first look need not
    # wait for valgrind's minutes.
    if timed_status is None:
        phase(3, "publish", "not yet: the selection has no timed row")
    else:
        spent = time.monotonic() - begun
        phase(3, "publish", f"the timed rows to {SITE} (benchmarks: {spent:.0f} s)")
        publish(repo, repo / SITE)
        print(f"bench: the timed rows are published; {ADDRESS}; the counts follow", flush=True)
    begun = phase(4, "counts", counts_phase(counted, rows))
    failed |= run(repo, machine, counted, rows, args.asv_args, args.rounds) == 2
    phase(
        5, "publish", f"the site again, counts included (counts: {time.monotonic() - begun:.0f} s)"
    )
    publish(repo, repo / SITE)
    print(f"bench: done; {ADDRESS}", flush=True)
    if failed:
        print("bench: some benchmarks failed (the rest are published); see asv's output above")
        return Status.REGRESSED
    return Status.OK


if __name__ == "__main__":
    run_main("bench", main)
