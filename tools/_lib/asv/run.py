"""Running asv the one way the tools run it: the benchmark processes on jemalloc, the count
twins told which rows were selected, the default torch release unless the caller names
an environment, and asv's exit status left to the caller."""

from __future__ import annotations

import contextlib
import ctypes.util
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

from benchmarks._names import (
    ALLOCATOR_ENV,
    ALLOCATORS,
    CALLGRIND_DIR,
    CALLGRIND_DIR_ENV,
    DEFAULT_ALLOCATOR,
    RUN_DIR_ENV,
    SELECTION_ENV,
)
from tools._lib.asv.matrix import Release, default_release
from tools._lib.base.cli import BadInput, ExternalFailure

JEMALLOC_LIBRARY = "libjemalloc.so.2"
# Where tools/dev.sh unpacks jemalloc for a user who cannot install packages.
LOCAL_JEMALLOC = Path("lib") / "jemalloc" / JEMALLOC_LIBRARY
# Freed memory kept for reuse, never returned to the kernel: no timed call faults on pages
# that a call before it touched. Its memory on 2 MiB pages (madvise; the kernel's THP mode
# is "madvise" here and on GitHub's runners): a gather's random reads miss the TLB less,
# and its processes spread less (docs/explanation/measurement.md, "The allocator").
JEMALLOC_CONF = "thp:always,dirty_decay_ms:-1,muzzy_decay_ms:-1"


def asv_executable() -> str:
    # The dev venv puts asv beside its python; Actions installs it the same way.
    beside = Path(sys.executable).with_name("asv")
    return str(beside) if beside.exists() else "asv"


def jemalloc_library() -> str | None:
    """What to preload for jemalloc: the system's, else the copy tools/dev.sh unpacked
    into the venv this interpreter runs in; None when neither is there."""
    if ctypes.util.find_library("jemalloc"):
        return JEMALLOC_LIBRARY
    local = Path(sys.prefix) / LOCAL_JEMALLOC
    return str(local) if local.is_file() else None


def allocator_environment(env: dict) -> dict:
    """``env`` with the allocator ``TENSOROPS_ALLOCATOR`` asks for (jemalloc by default)
    preloaded and configured; bad input for an unknown name or a missing jemalloc."""
    choice = env.get(ALLOCATOR_ENV, DEFAULT_ALLOCATOR)
    if choice not in ALLOCATORS:
        raise BadInput(f"{ALLOCATOR_ENV}={choice!r}: choose one of {', '.join(ALLOCATORS)}")
    environment = dict(env)
    if choice == "jemalloc":
        library = jemalloc_library()
        if library is None:
            raise BadInput(
                "jemalloc is not installed (tools/dev.sh setup installs it, or: apt install "
                f"libjemalloc2); or set {ALLOCATOR_ENV}=fixed to time on glibc's malloc"
            )
        preloaded = environment.get("LD_PRELOAD", "").split()
        others = [name for name in preloaded if "jemalloc" not in name]
        environment["LD_PRELOAD"] = " ".join([library, *others])
        environment["MALLOC_CONF"] = JEMALLOC_CONF
    return environment


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


def asv_environment(repo: Path, env: dict | None = None, selection: Sequence[str] = ()) -> dict:
    """The environment asv runs in: the allocator preloaded; the instruction counts keep
    their function counts per commit under ``.asv/callgrind`` (the "why" of a count that
    grew), unless told otherwise, and count only the cases of the ``selection`` (every
    case when empty)."""
    environment = allocator_environment(
        {CALLGRIND_DIR_ENV: str(repo / CALLGRIND_DIR), **(env or os.environ)}
    )
    environment.pop(SELECTION_ENV, None)
    if selection:
        environment[SELECTION_ENV] = json.dumps(list(selection))
    return environment


# The asv commands that build or run in environments; each gets the default release's
# unless the caller chose one.
ENVIRONMENT_COMMANDS = ("run", "continuous", "find", "setup", "check")
ENVIRONMENT_OPTIONS = ("-E", "--environment", "--python")


def with_environment(args: Sequence[str], repo: Path) -> list[str]:
    """asv's arguments with ``-E`` of the default release where the command takes one and
    the caller named none: a matrix of releases would otherwise build and run them all."""
    chosen = any(arg.split("=")[0] in ENVIRONMENT_OPTIONS for arg in args)
    if not args or args[0] not in ENVIRONMENT_COMMANDS or chosen:
        return list(args)
    return [args[0], "-E", default_release(repo).env_name, *args[1:]]


@contextlib.contextmanager
def run_folder(environment: dict) -> Iterator[dict]:
    """``environment`` with a folder of its own for one asv run: made private to this user
    (``mkdtemp``: mode 0700, a name no one can guess), removed when the run ends
    (what its processes share: benchmarks/_harness/calibration.py, derived.py)."""
    with tempfile.TemporaryDirectory(prefix="tensorops-run-") as folder:
        yield {**environment, RUN_DIR_ENV: folder}


def asv(*args: str, cwd: Path, env: dict | None = None, capture: bool = False):
    """Run asv; its exit status is the caller's to read (continuous and find use it)."""
    with run_folder(asv_environment(cwd, env, bench_selection(args))) as environment:
        return subprocess.run(
            [asv_executable(), *with_environment(args, cwd)],
            cwd=cwd,
            env=environment,
            text=True,
            capture_output=capture,
        )


def launch_method(repo: Path) -> str:
    """The config's launch method, which ``asv find`` ignores unless told."""
    from asv.config import Config

    return Config.load(str(repo / "asv.conf.json")).launch_method or "spawn"


def ensure_environment(repo: Path, chosen: Sequence[Release] = ()) -> list[Release]:
    """The releases' asv environments (the default release's when none are chosen), each
    built first where it is not (``asv setup`` exits with its list of environments as its
    status, so what it built is what tells)."""
    wanted = list(chosen) or [default_release(repo)]
    for release in wanted:
        if not release.built:
            asv("setup", "-E", release.env_name, cwd=repo)
    missing = [release.torch for release in wanted if not release.built]
    if missing:
        raise ExternalFailure(
            f"asv setup built no environment for torch {', '.join(missing)} (see its log above)"
        )
    return wanted
