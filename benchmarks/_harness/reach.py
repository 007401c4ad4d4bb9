"""Which of the library's functions each row reaches: the map the PR gate selects rows by
(tools/_lib/reach/selection.py), traced in the row's own environment.

    python -m benchmarks._harness.reach      (run from the repository root by the tools,
                                              a commit's library first on PYTHONPATH)

It reads a JSON list of rows on stdin and writes one JSON object on stdout: the library's
functions that ran while the suites were imported (``at_import``: a change to one of those
acts like module-level code), and per row the functions its setup and one call ran, the
library modules it had imported, and how its setup ended (``traced``, ``skip``, ``error``).
A function is ``[path under the library folder, qualified name]``.

Like the worker (benchmarks/_harness/worker.py) it imports the suites once and forks a child
per row, so each row starts from the state asv's forkserver gives it. Tracing is
``sys.setprofile``: Python 3.11 has no ``sys.monitoring``, and a call event names the code
object called, which is the question (which functions), at less cost than coverage.py's
line tracing, which the asv environments do not have (adding it to asv's matrix would rename
every environment, and so every result file). Nothing timed runs here: the map is its own
process, never a timing one.

``torch.compile`` returns its function unchanged while tracing: dynamo inlines the library's
functions into its graph, so no call event fires for them; eagerly the same functions run
and are seen (docs/explanation/continuous.md, "What a change can reach").
"""

from __future__ import annotations

import functools
import json
import os
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .tiers import suite_modules
from .worker import Row, end_child

LIBRARY = "tensorops"


class Calls:
    """The library's functions called while it is installed as the profiler."""

    def __init__(self, folder: Path):
        self.prefix = str(folder) + os.sep
        self.cut = len(str(folder.parent)) + 1
        self.seen: set[int] = set()
        self.functions: set[tuple[str, str]] = set()

    def __call__(self, frame, event: str, _arg) -> None:
        if event != "call":
            return
        code = frame.f_code
        if id(code) in self.seen:
            return
        self.seen.add(id(code))
        if code.co_filename.startswith(self.prefix):
            self.functions.add((code.co_filename[self.cut :], code.co_qualname))

    def __enter__(self) -> Calls:
        sys.setprofile(self)
        return self

    def __exit__(self, *_exc) -> None:
        sys.setprofile(None)

    def sorted(self) -> list[list[str]]:
        return [list(function) for function in sorted(self.functions)]


def eagerly(model=None, **_options):
    """``torch.compile`` while tracing: the function itself, run eagerly."""
    return model if model is not None else (lambda function: function)


def library_folder() -> Path:
    import tensorops

    return Path(tensorops.__file__).resolve().parent


def imported_modules(folder: Path) -> list[str]:
    """The library's modules this process has imported, as paths under the library's
    parent folder (``tensorops/matmul.py``)."""
    paths = set()
    for name, module in list(sys.modules.items()):
        where = getattr(module, "__file__", None)
        if (name == LIBRARY or name.startswith(LIBRARY + ".")) and where:
            paths.add(str(Path(where).resolve().relative_to(folder.parent)))
    return sorted(paths)


def trace_row(label: str, folder: Path) -> dict[str, Any]:
    """One row's setup and one call, traced; how the setup ended."""
    status, reason = "traced", ""
    with Calls(folder) as calls:
        try:
            row = Row(label)
            row.setup()
            row.method(*row.params)
        except NotImplementedError as skip:  # asv's skip
            status, reason = "skip", str(skip) or "skipped"
        except LookupError as missing:  # a row asv runs itself (an instruction count)
            status, reason = "skip", str(missing)
        except Exception as error:
            status, reason = "error", f"{type(error).__name__}: {error}"
            traceback.print_exc()
    return {
        "status": status,
        "reason": reason[:500],
        "functions": calls.sorted(),
        "modules": imported_modules(folder),
    }


def import_traced(folder: Path) -> dict[str, Any]:
    """The library's functions that run while the suites and the library are imported
    afresh (this process imported them untraced: the harness package, which this module is
    in, imports the library before any line here runs)."""
    for name in list(sys.modules):
        if name == LIBRARY or name.startswith((LIBRARY + ".", "benchmarks.")):
            del sys.modules[name]
    with Calls(folder) as calls:
        suite_modules()
    return {"functions": calls.sorted()}


def in_child(work: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """``work`` in a forked child, so every row starts from the suites' imported state; a
    child that dies is reported as an error."""
    read, write = os.pipe()
    child = os.fork()
    if child == 0:
        os.close(read)

        def answer() -> None:
            with os.fdopen(write, "w") as out:
                json.dump(work(), out)

        end_child(answer)
    os.close(write)
    with os.fdopen(read) as answer:
        text = answer.read()
    _, status = os.waitpid(child, 0)
    if text and os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
        return json.loads(text)
    return {
        "status": "error",
        "reason": f"the tracing process died (wait status {status})",
        "functions": [],
        "modules": [],
    }


def main() -> None:
    labels = json.load(sys.stdin)
    replies = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # the benchmarks' own prints go to stderr
    import torch._dynamo

    torch._dynamo.config.disable = False
    folder = library_folder()
    suite_modules()  # imported once, before any fork, as asv's forkserver does
    at_import = in_child(lambda: import_traced(folder))
    if at_import.get("status") == "error":
        raise SystemExit(f"reach: importing the suites afresh: {at_import['reason']}")
    rows = {label: in_child(functools.partial(trace_row, label, folder)) for label in labels}
    json.dump({"at_import": at_import["functions"], "rows": rows}, replies)
    replies.write("\n")
    replies.flush()


if __name__ == "__main__":
    main()
