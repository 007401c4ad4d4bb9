"""The exit-status contract every command keeps, its one-line errors, and argparse set up to
keep it."""

from __future__ import annotations

import argparse
import contextlib
import datetime
import enum
import math
import os
import re
import stat
import sys
import tempfile
import traceback
from collections.abc import Callable
from pathlib import Path


class Status(enum.IntEnum):
    """Every command's exit status (docs/reference/commands.md)."""

    OK = 0
    REGRESSED = 1  # the gate: performance regressed; the nightly: a benchmark failed
    BENCHMARK_FAILED = 2  # the gate: a benchmark raised or timed out
    EXTERNAL_FAILURE = 3  # asv or git failed, or an unexpected error (traceback in a log)
    BAD_INPUT = 4  # bad input, or a state the command refuses; nothing was changed


LOG_DIR_ENV = "TENSOROPS_LOG_DIR"


class ToolError(Exception):
    """A failure the user can act on: one line on stderr, and its status."""

    status = Status.EXTERNAL_FAILURE


class BadInput(ToolError):
    """Bad input or a refused state (a rewound results branch, a corrupt file)."""

    status = Status.BAD_INPUT


class ExternalFailure(ToolError):
    """asv or git failed; their own message is in the line."""

    status = Status.EXTERNAL_FAILURE


def one_line(text: str) -> str:
    """A message on one line: its non-empty lines joined."""
    return " | ".join(line.strip() for line in text.strip().splitlines() if line.strip())


def run_main(prog: str, main: Callable[[], int]) -> None:
    """Run a command's ``main`` under the contract: an expected failure is one line and its
    status; an unexpected one is one line, the traceback in a log file, and status 3
    (never 1, which means "regressed")."""
    try:
        status = main()
    except ToolError as error:
        print(f"{prog}: {one_line(str(error))}", file=sys.stderr)
        status = error.status
    except Exception as error:
        where = write_traceback_log(prog)
        print(
            f"{prog}: unexpected error: {type(error).__name__}: {one_line(str(error))} ({where})",
            file=sys.stderr,
        )
        status = Status.EXTERNAL_FAILURE
    sys.exit(int(status))


def made_private(path: Path) -> bool:
    """Whether ``path`` is a folder, not a link, of this user's own that no one else could
    have written to; one that others could only read is made private."""
    try:
        status = path.lstat()
    except OSError:
        return False
    ours = stat.S_ISDIR(status.st_mode) and status.st_uid == os.getuid()
    if not ours or status.st_mode & 0o022:
        return False
    if status.st_mode & 0o077:
        path.chmod(0o700)
    return True


def log_folder() -> Path:
    """Where tracebacks go: ``$TENSOROPS_LOG_DIR`` (the caller's choice), else a folder of
    this user's own in the temporary folder, made private; where someone else made that
    path first (a folder another user owns or may write, a link), a new private folder
    (a traceback can hold paths and values no one else should read)."""
    chosen = os.environ.get(LOG_DIR_ENV)
    if chosen:
        return Path(chosen)
    default = Path(tempfile.gettempdir()) / f"tensorops-logs-{os.getuid()}"
    with contextlib.suppress(FileExistsError):
        default.mkdir(mode=0o700)
    if made_private(default):
        return default
    return Path(tempfile.mkdtemp(prefix=f"tensorops-logs-{os.getuid()}-"))


def write_traceback_log(prog: str) -> str:
    """The current traceback in a new log file; what to say of it (the file, or why there is
    none: a folder that cannot be written must not turn the error into another)."""
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y%m%dT%H%M%S")
    log = log_folder() / f"{prog}-{stamp}-{os.getpid()}.log"
    try:
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text(traceback.format_exc())
    except OSError as error:
        return f"no traceback log: cannot write {log}: {error.strerror or error}"
    return f"traceback in {log}"


class ArgumentParser(argparse.ArgumentParser):
    """argparse, with a usage error as bad input: one line and status 4 (argparse's own is
    two lines and status 2, which the gate uses for "a benchmark failed")."""

    def error(self, message: str):
        raise BadInput(f"{message} (see --help)")

    def parse_args(self, args=None, namespace=None):
        """Everything after a ``--`` goes, untouched, to ``asv_args`` (asv's own options),
        wherever the command's own options stand."""
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


def number_above(lowest: float, what: str):
    """An argparse type: a finite number above ``lowest`` (nan or inf would let nothing
    fail), called ``what`` in the error."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if not (math.isfinite(value) and value > lowest):
            raise argparse.ArgumentTypeError(f"must be {what}, got {text}")
        return value

    return parse


# A slowdown factor, and a time budget in minutes.
factor = number_above(1.0, "a finite number above 1.0")
minutes = number_above(0.0, "a positive number of minutes")


def regex(text: str) -> str:
    """An argparse type: a regular expression Python's ``re`` compiles."""
    try:
        re.compile(text)
    except re.error as error:
        raise argparse.ArgumentTypeError(f"not a regular expression: {text!r}: {error}") from None
    return text


def existing_file(text: str) -> Path:
    """An argparse type: a file that is there (a typo must not read as "no such input")."""
    path = Path(text)
    if not path.is_file():
        raise argparse.ArgumentTypeError(f"no such file: {text}")
    return path


def command_parser(doc: str, asv_command: str = "", example: str = "--show-stderr"):
    """A command's parser: its docstring's first paragraph, and where the arguments after
    ``--`` go (``asv_command``: they are collected in ``asv_args``)."""
    epilog = (
        f"Arguments after -- go to asv {asv_command}, e.g. -- {example}" if asv_command else None
    )
    parser = ArgumentParser(description=doc.split("\n\n")[0], epilog=epilog)
    if asv_command:
        parser.set_defaults(asv_args=[])
    return parser


def add_judging(parser: argparse.ArgumentParser, default: float) -> None:
    """The options a verdict is judged by: the largest threshold, and a machine's floors."""
    parser.add_argument(
        "--factor",
        type=factor,
        default=default,
        help=f"the largest threshold a row is judged at (default {default})",
    )
    parser.add_argument(
        "--floors", type=existing_file, help="a machine's floors.json (tools.floors)"
    )
