"""What the tooling scripts share: the exit-status contract, running git and asv,
reading result files, and the one adapter that reads a comparison out of asv's results.

The scripts run from a checkout of the project (``python -m tools.NAME``), locally or in
GitHub Actions, with the dev venv's interpreter: asv is the one installed beside it. This
module imports nothing outside the standard library at import time (asv only inside the
functions that need it), so the results push runs with a bare interpreter.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
RESULTS_DIR = Path(".asv") / "results"  # asv.conf.json's results_dir, from the repo root


# The exit statuses of every script (docs/continuous.md, "Exit statuses").
OK = 0
REGRESSED = 1  # the gate: performance regressed; the nightly: a benchmark failed
BENCHMARK_FAILED = 2  # the gate: a benchmark raised or timed out
EXTERNAL_FAILURE = 3  # asv or git failed, or an unexpected error (traceback in a log)
BAD_INPUT = 4  # bad input, or a state the script refuses to work on; nothing was changed
LOG_DIR_ENV = "TENSOROPS_LOG_DIR"


class ToolError(Exception):
    """A failure the user can act on: one line on stderr, and the exit status."""

    status = EXTERNAL_FAILURE


class BadInput(ToolError):
    """Bad input or a refused state (a rewound results branch, a corrupt file)."""

    status = BAD_INPUT


class ExternalFailure(ToolError):
    """asv or git failed; their own message is in the line."""

    status = EXTERNAL_FAILURE


def run_main(prog: str, main: Callable[[], int]) -> None:
    """Run a script's ``main`` under the exit-status contract: an expected failure is one
    line and its status; an unexpected one is one line, the traceback in a log file, and
    status 3 (never 1, which means "regressed")."""
    try:
        status = main()
    except ToolError as error:
        print(f"{prog}: {one_line(str(error))}", file=sys.stderr)
        status = error.status
    except Exception as error:
        log = write_traceback_log(prog)
        print(
            f"{prog}: unexpected error: {type(error).__name__}: {one_line(str(error))} "
            f"(traceback in {log})",
            file=sys.stderr,
        )
        status = EXTERNAL_FAILURE
    sys.exit(status)


class ArgumentParser(argparse.ArgumentParser):
    """argparse, with a usage error as bad input: one line and status 4 (argparse's own
    is two lines and status 2, which the gate uses for "a benchmark failed")."""

    def error(self, message: str):
        raise BadInput(f"{message} (see --help)")

    def parse_args(self, args=None, namespace=None):
        """Everything after a ``--`` goes, untouched, to ``asv_args`` (asv's own options),
        wherever the script's own options stand."""
        argv = list(sys.argv[1:] if args is None else args)
        passed = argv[argv.index("--") + 1 :] if "--" in argv else []
        own = argv[: argv.index("--")] if "--" in argv else argv
        parsed = super().parse_args(own, namespace)
        if hasattr(parsed, "asv_args"):
            parsed.asv_args = passed
        elif passed:
            self.error(f"takes no asv options: {' '.join(passed)}")
        return parsed


def machine_name(text: str) -> str:
    """An asv machine name, which names a folder of the results branch."""
    if not re.fullmatch(r"[A-Za-z0-9][\w.-]*", text):
        raise argparse.ArgumentTypeError(f"not a machine name (letters, digits, . _ -): {text!r}")
    return text


def one_line(text: str) -> str:
    """A message on one line: its non-empty lines joined."""
    return " | ".join(line.strip() for line in text.strip().splitlines() if line.strip())


def write_traceback_log(prog: str) -> Path:
    import datetime
    import tempfile
    import traceback

    folder = Path(os.environ.get(LOG_DIR_ENV) or Path(tempfile.gettempdir()) / "tensorops-logs")
    folder.mkdir(parents=True, exist_ok=True)
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y%m%dT%H%M%S")
    log = folder / f"{prog}-{stamp}-{os.getpid()}.log"
    log.write_text(traceback.format_exc())
    return log


def asv_executable() -> str:
    # The dev venv puts asv beside its python; Actions installs it the same way.
    beside = Path(sys.executable).with_name("asv")
    return str(beside) if beside.exists() else "asv"


# asv's --bench regexes of a run, as a JSON list, for the benchmarks' setup_cache (asv does
# not pass them on): the instruction counts count the cases of the selected rows only
# (benchmarks/_harness/twins.py reads it under the same name).
SELECTION_ENV = "TENSOROPS_BENCH"


def split_bench_selection(asv_args: Sequence[str]) -> tuple[list[str], list[str]]:
    """The ``--bench``/``-b`` regexes of asv arguments, and the other arguments."""
    selection, rest, following = [], [], False
    for arg in asv_args:
        if following:
            selection.append(arg)
            following = False
        elif arg in ("--bench", "-b"):
            following = True
        elif arg.startswith(("--bench=", "-b=")):
            selection.append(arg.split("=", 1)[1])
        else:
            rest.append(arg)
    return selection, rest


def bench_selection(asv_args: Sequence[str]) -> list[str]:
    """The benchmark regexes of an asv command: its ``--bench``/``-b`` options, or the
    last argument of ``asv find``."""
    if asv_args and asv_args[0] == "find":
        return [asv_args[-1]]
    return split_bench_selection(asv_args)[0]


# The allocator benchmark processes start with (benchmarks/_harness/allocator.py says why
# jemalloc): asv starts them with its own environment, so it is set there.
ALLOCATOR_ENV = "TENSOROPS_ALLOCATOR"
ALLOCATORS = ("jemalloc", "fixed", "glibc")
JEMALLOC_LIBRARY = "libjemalloc.so.2"
# Freed memory kept for reuse, never returned to the kernel: no timed call faults on pages
# that a call before it touched. Its memory on 2 MiB pages (madvise; the kernel's THP mode
# is "madvise" here and on GitHub's runners): a gather's random reads miss the TLB less,
# and its processes spread by 1.16x instead of 2.27x (docs/measurement.md, "Slow processes").
JEMALLOC_CONF = "thp:always,dirty_decay_ms:-1,muzzy_decay_ms:-1"


def allocator_environment(env: dict) -> dict:
    """``env`` with the allocator ``TENSOROPS_ALLOCATOR`` asks for (jemalloc by default)
    preloaded and configured; bad input for an unknown name or a missing jemalloc."""
    import ctypes.util

    choice = env.get(ALLOCATOR_ENV, "jemalloc")
    if choice not in ALLOCATORS:
        raise BadInput(f"{ALLOCATOR_ENV}={choice!r}: choose one of {', '.join(ALLOCATORS)}")
    environment = dict(env)
    if choice == "jemalloc":
        if ctypes.util.find_library("jemalloc") is None:
            raise BadInput(
                "jemalloc is not installed (apt install libjemalloc2); or set "
                f"{ALLOCATOR_ENV}=fixed to time on glibc's malloc"
            )
        preloaded = environment.get("LD_PRELOAD", "").split()
        others = [library for library in preloaded if "jemalloc" not in library]
        environment["LD_PRELOAD"] = " ".join([JEMALLOC_LIBRARY, *others])
        environment["MALLOC_CONF"] = JEMALLOC_CONF
    return environment


def asv_environment(repo: Path, env: dict | None = None, selection: Sequence[str] = ()) -> dict:
    """The environment asv runs in: the allocator preloaded; the instruction counts keep
    their function counts per commit under ``.asv/callgrind`` (the gate's and the triage's
    "why"), unless told otherwise, and count only the cases of the ``selection`` (every
    case when empty)."""
    environment = allocator_environment(
        {"TENSOROPS_CALLGRIND_DIR": str(repo / ".asv" / "callgrind"), **(env or os.environ)}
    )
    environment.pop(SELECTION_ENV, None)
    if selection:
        environment[SELECTION_ENV] = json.dumps(list(selection))
    return environment


def asv(*args: str, cwd: Path, env: dict | None = None, capture: bool = False):
    """Run asv; its exit status is the caller's to read (continuous and find use it)."""
    return subprocess.run(
        [asv_executable(), *args],
        cwd=cwd,
        env=asv_environment(cwd, env, bench_selection(args)),
        text=True,
        capture_output=capture,
    )


def git(*args: str, cwd: Path, check: bool = True, env: dict | None = None) -> str:
    done = subprocess.run(
        ["git", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        env=env,
    )
    if check and done.returncode != 0:
        message = one_line(done.stderr or done.stdout) or f"exit status {done.returncode}"
        raise ExternalFailure(f"git {' '.join(args)} failed: {message}")
    return done.stdout.strip()


def resolve_commit(name: str, repo: Path) -> str:
    """The full hash of commit ``name``; bad input when there is none."""
    resolved = git("rev-parse", "--verify", "--quiet", f"{name}^{{commit}}", cwd=repo, check=False)
    if not resolved:
        raise BadInput(f"{name!r} is not a commit of this repository")
    return resolved


def repo_root() -> Path:
    """The top of the git checkout the script runs in."""
    top = git("rev-parse", "--show-toplevel", cwd=Path.cwd(), check=False)
    if not top:
        raise BadInput(f"{Path.cwd()} is not inside a git checkout of the project")
    return Path(top)


def register_machine(name: str) -> None:
    """Describe this machine to asv under a stable name, so results from every run line up.

    Written with asv's own API because ``asv machine --machine NAME --yes`` saves only the
    fields that differ from its defaults, leaving the CPU, core count and architecture
    out of the results. Two fields are made stable: asv keys each graph by them, and the
    kernel version in its default ``os`` and the exact byte count in ``ram`` change
    between CI runner images of the same kind, which would split one machine's history
    into many graphs. (The nightly's manifest records the kernel.)
    """
    from asv.machine import MachineCollection
    from asv.util import UserError

    try:
        MachineCollection.save(name, describe_machine(name))
    except (UserError, ValueError) as error:  # a corrupt ~/.asv-machine.json
        raise BadInput(
            f"cannot record machine {name!r} in asv's machine file: {error} "
            "(fix or remove ~/.asv-machine.json)"
        ) from None


def describe_machine(name: str) -> dict[str, str]:
    """This machine as asv describes it, with the stable keys (see register_machine)."""
    from asv.machine import Machine

    described = {**Machine.get_defaults(), "machine": name}
    described["os"] = platform.system()
    described["ram"] = f"{round(int(described['ram']) / 2**30)}GB"
    return described


def read_result_file(path: Path) -> dict:
    """A result file's JSON; asv itself skips a corrupt one with a warning, so
    a caller that must not lose results asks here first."""
    try:
        data = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise BadInput(f"corrupt result file {path}: {error}") from None
    if not isinstance(data, dict) or not isinstance(data.get("commit_hash"), str):
        raise BadInput(f"corrupt result file {path}: no commit_hash")
    return data


def machine_result_files(results_dir: Path, machine: str) -> dict[Path, dict]:
    """Every result file of one machine, read and checked."""
    folder = results_dir / machine
    if not folder.is_dir():
        return {}
    return {
        path: read_result_file(path)
        for path in sorted(folder.glob("*.json"))
        if path.name != "machine.json"
    }


def benchmarked_commits(results_dir: Path, machine: str) -> set[str]:
    return {data["commit_hash"] for data in machine_result_files(results_dir, machine).values()}


def append_step_summary(markdown: str) -> bool:
    """Append to the Actions step summary; False when not running in Actions."""
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        with open(summary, "a") as out:
            out.write(markdown + "\n")
    return bool(summary)


def write_summary(markdown: str) -> None:
    """To the Actions step summary when there is one, else to stdout."""
    if not append_step_summary(markdown):
        print(markdown)


def first_parent_commits(revision_range: Sequence[str] | str, cwd: Path) -> list[str]:
    """Commits newest first, along first parents (the history asv graphs)."""
    spec = [revision_range] if isinstance(revision_range, str) else list(revision_range)
    return git("rev-list", "--first-parent", *spec, cwd=cwd).split()


# ---------------------------------------------------------------- asv comparisons
# The one place that reads a comparison of two commits out of asv's results, for the gate,
# the studies and bisect: values, samples and stats through asv's Results API, and asv's
# own rule for "beyond the factor and statistically different" (the rule `asv compare` and
# `asv continuous` apply; private in asv 0.6.6, so imported here and nowhere else).


def row_selection(label: str) -> str:
    """asv's ``--bench`` regex for exactly the row ``name(params)``: its regex characters
    escaped, and nothing else (it stays readable, and quotes well in a shell)."""
    return "^" + re.sub(r"([\\.^$*+?()\[\]{}|])", r"\\\1", label) + "$"


def higher_is_better(unit: str) -> bool:
    """Rates (GFLOP/s, GB/s) and shares of the machine's peak ("% of peak"): unlike
    asv's assumption, for these a higher value is the better one."""
    return unit.endswith("/s") or unit.startswith("%")


@dataclass(frozen=True)
class Row:
    """One benchmark and parameter combination measured at two commits."""

    benchmark: str
    params: str  # asv's text form, "('cpu', 'float32')"; "" when not parameterized
    unit: str
    before: float
    after: float
    # (stats, samples) of each side, as asv's significance test takes them.
    before_stats: tuple = (None, None)
    after_stats: tuple = (None, None)

    @property
    def label(self) -> str:
        """``name(params)``: how asv names the row, and what ``--bench`` matches."""
        return f"{self.benchmark}{self.params}"

    @property
    def ratio(self) -> float:
        return self.after / self.before

    @property
    def slowdown(self) -> float:
        """How many times worse ``after`` is: the ratio, inverted for rates."""
        return 1 / self.ratio if higher_is_better(self.unit) else self.ratio

    def shown(self, value: float) -> str:
        from asv.util import human_value

        text = human_value(value, self.unit)
        return text if self.unit in ("seconds", "bytes", "") else f"{text} {self.unit}"

    def slower(self, factor: float) -> bool:
        """Worse beyond ``factor`` and significantly so, by asv's rule (which reads every
        value as lower-is-better), turned round for rates."""
        from asv.commands.compare import _is_result_better

        if higher_is_better(self.unit):  # a fall is the slowdown
            return _is_result_better(
                self.after, self.before, self.after_stats, self.before_stats, factor
            )
        return _is_result_better(
            self.before, self.after, self.before_stats, self.after_stats, factor
        )

    def changed(self, factor: float) -> bool:
        """Beyond ``factor`` in either direction, significantly."""
        from asv.commands.compare import _is_result_better

        return _is_result_better(
            self.before, self.after, self.before_stats, self.after_stats, factor
        ) or _is_result_better(self.after, self.before, self.after_stats, self.before_stats, factor)


def benchmark_units(results_dir: Path) -> dict[str, str]:
    """Each benchmark's unit, from the benchmarks.json asv keeps beside the results."""
    benchmarks = json.loads((results_dir / "benchmarks.json").read_text())
    return {name: b.get("unit", "") for name, b in benchmarks.items() if name != "version"}


def commit_values(results_dir: Path, machine: str, commit: str) -> dict[tuple[str, str], tuple]:
    """``(benchmark, params) -> (value, stats, samples)`` of every measured row of
    ``machine`` at ``commit`` (skipped and failed rows left out)."""
    import itertools

    from asv.results import iter_results_for_machine_and_hash

    rows = {}
    for result in iter_results_for_machine_and_hash(str(results_dir), machine, commit):
        for key in result.get_all_result_keys():
            params = result.get_result_params(key)
            combos = [f"({', '.join(c)})" for c in itertools.product(*params)] if params else [""]
            measured = zip(
                combos,
                result.get_result_value(key, params),
                result.get_result_stats(key, params),
                result.get_result_samples(key, params),
                strict=True,
            )
            for combo, value, stats, samples in measured:
                if value is not None and value == value:  # None: failed; NaN: skipped
                    rows[key, combo] = (value, stats, samples)
    return rows


def discovered_units(repo: Path) -> dict[str, str]:
    """Every benchmark of the repository's suites and its unit, by asv_runner's own
    discovery (it imports the suites, and torch with them)."""
    from asv_runner.discovery import disc_benchmarks

    sys.path.insert(0, str(repo))
    try:
        return {b.name: b.unit for b in disc_benchmarks(str(repo / "benchmarks"))}
    finally:
        sys.path.remove(str(repo))


def tier_selection(repo: Path, tiers: Sequence[str]) -> tuple[str, set[str]]:
    """asv's ``--bench`` regex for exactly the rows of ``tiers``, and the benchmarks those
    rows belong to, from the tiers the suites declare (benchmarks/_harness/tiers.py)."""
    sys.path.insert(0, str(repo))
    try:
        from benchmarks._harness import tiers as declared

        classes = declared.benchmark_classes(declared.suite_modules())
        return declared.selection(classes, tiers), declared.benchmarks_of(classes, tiers)
    finally:
        sys.path.remove(str(repo))


def compare(
    results_dir: Path, machine: str, base: str, head: str, units: dict[str, str] | None = None
) -> list[Row]:
    """Every row measured at both commits with a positive value before. Units come from
    the benchmarks.json asv writes beside the results, unless given (``asv find`` writes
    none)."""
    units = units if units is not None else benchmark_units(results_dir)
    before = commit_values(results_dir, machine, base)
    after = commit_values(results_dir, machine, head)
    return [
        Row(
            name,
            params,
            units.get(name, ""),
            before[name, params][0],
            after[name, params][0],
            before[name, params][1:],
            after[name, params][1:],
        )
        for name, params in sorted(set(before) & set(after))
        if before[name, params][0] > 0
    ]
