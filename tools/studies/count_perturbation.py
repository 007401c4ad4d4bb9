#!/usr/bin/env python
"""What a commit's instruction counts cost, phase by phase, and how far they move when the
counting process changes in a way that leaves the counted calls alone: every count twin's
case counted once per variant of the working tree, each variant in a copy of its own.

    python -m tools.studies.count_perturbation [--variant NAME]... [--cases N] [--out FILE]

The variants (``VARIANTS``): ``as-is`` (the tree unchanged: the counts the others are
compared with), ``as-is-again`` (the same, counted again: the control), ``longer-path``
(the same tree in a folder whose path is longer: a checkout elsewhere), ``phases`` (each
counting child also writes the seconds of its phases), ``unused-import`` (an import
nothing uses, in the harness package: a plausible harness change), ``library-docstring``
(a sentence more in the library's docstring: a commit of documentation), ``parent-gc-freeze``
(the counting parent collects and freezes its objects before it forks, so no child's
collection walks them) and ``parent-keeps-translations`` (the counting parent forks
holding valgrind's translations of torch's import, which every child's switch to
instrumented code then drops: the harness as it was before it dropped them once). Each
counts in a valgrind process of its own, one after another: run it on an otherwise idle
machine for the times; the counts do not depend on the load.
Evidence and reading: docs/explanation/measurement.md, "Instruction counts".
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tools._lib.asv.machines import last_level_cache, this_host
from tools._lib.asv.suites import REPO_ROOT
from tools._lib.base.cli import ArgumentParser, ExternalFailure, number_above, run_main
from tools._lib.measure.comparison import COUNT_FACTOR

COUNTER = "benchmarks/_harness/counter.py"
HARNESS = "benchmarks/_harness/__init__.py"
# Where the ``phases`` variant's children append their phase seconds.
PHASES_ENV = "TENSOROPS_STUDY_PHASES"


@dataclass(frozen=True)
class Edit:
    """``anchor``, found exactly once in ``path``, replaced by ``replacement``."""

    path: str
    anchor: str
    replacement: str


PHASES = (
    Edit(
        COUNTER,
        '        namespace = {"call": prepared.call}\n',
        '        prepared_at = time.perf_counter()\n        namespace = {"call": prepared.call}\n',
    ),
    Edit(
        COUNTER,
        "        gc.disable()  #",
        "        collected_at = time.perf_counter()\n        gc.disable()  #",
    ),
    Edit(
        COUNTER,
        "        bindings._valgrind_toggle()\n",
        "        switched_at = time.perf_counter()\n        bindings._valgrind_toggle()\n",
    ),
    Edit(
        COUNTER,
        '    return {"pid": os.getpid(), "seconds": time.perf_counter() - begun}\n',
        "    ended_at = time.perf_counter()\n"
        f"    with open(os.environ[{PHASES_ENV!r}], 'a') as f:\n"
        "        f.write(json.dumps({'prepare': prepared_at - begun,"
        " 'collect': collected_at - prepared_at, 'switch': switched_at - collected_at,"
        " 'counted': ended_at - switched_at}) + '\\n')\n"
        '    return {"pid": os.getpid(), "seconds": ended_at - begun}\n',
    ),
)
UNUSED_IMPORT = (
    Edit(
        HARNESS,
        "from . import allocator  #",
        "import fractions  # noqa: F401\nfrom . import allocator  #",
    ),
)
LIBRARY_DOCSTRING = (
    Edit(
        "src/tensorops/__init__.py",
        'rather than a crash.\n"""\n',
        'rather than a crash.\n\nA sentence of documentation, and nothing else.\n"""\n',
    ),
)
FORK_LOOP = "    running = 0\n    for index, case in enumerate(cases):\n"
PARENT_GC_FREEZE = (Edit(COUNTER, FORK_LOOP, "    gc.collect()\n    gc.freeze()\n" + FORK_LOOP),)
PARENT_KEEPS = (Edit(COUNTER, "        switch.discard_translations()\n", "        pass\n"),)
VARIANTS = {
    "as-is": (),
    "as-is-again": (),
    "longer-path": (),
    "phases": PHASES,
    "unused-import": UNUSED_IMPORT,
    "library-docstring": LIBRARY_DOCSTRING,
    "parent-gc-freeze": PARENT_GC_FREEZE,
    "parent-keeps-translations": PARENT_KEEPS,
}

# The copy's folder under a scratch folder: the same length for every variant (a longer
# path to the code alone moved counts), one level deeper for ``longer-path``.
CHECKOUT = {"longer-path": "a/longer/checkout"}

# Run in a copy's folder: every count twin's case (the first N with a number), counted in
# one valgrind process as the suites count them; the counts and the seconds, as JSON.
COUNT_ALL = """
import json, sys, time
from benchmarks import bench_instructions
from benchmarks._harness.callgrind import count_cases
from benchmarks._harness.twins import selected_cases
cases = selected_cases(bench_instructions.Counted.rows, None)[: int(sys.argv[1]) or None]
begun = time.monotonic()
counted = count_cases(cases)
seconds = time.monotonic() - begun
print(json.dumps({"seconds": seconds, "cases": len(cases),
                  "counts": {k: v for k, v in counted.items() if isinstance(v, float)}}))
"""


def edited_copy(folder: Path, edits: tuple[Edit, ...]) -> Path:
    """The working tree's ``benchmarks`` and ``src`` copied under ``folder``, ``edits``
    applied; an anchor not found exactly once is this study's fault, and says where."""
    for part in ("benchmarks", "src"):
        shutil.copytree(
            REPO_ROOT / part, folder / part, ignore=shutil.ignore_patterns("__pycache__")
        )
    for edit in edits:
        target = folder / edit.path
        text = target.read_text()
        if text.count(edit.anchor) != 1:
            raise ExternalFailure(
                f"{edit.path} holds {text.count(edit.anchor)} of the study's anchor "
                f"{edit.anchor.strip()[:60]!r}: update tools/studies/count_perturbation.py"
            )
        target.write_text(text.replace(edit.anchor, edit.replacement))
    return folder


def count_variant(name: str, cases: int) -> dict:
    """Every case counted in a copy of the tree edited as ``name`` says: its seconds and
    counts, and for ``phases`` each child's phase seconds."""
    with tempfile.TemporaryDirectory(prefix="count-perturbation-") as scratch:
        copy = edited_copy(Path(scratch) / CHECKOUT.get(name, "tree"), VARIANTS[name])
        phases = Path(scratch) / "phases.jsonl"
        done = subprocess.run(
            [sys.executable, "-c", COUNT_ALL, str(cases)],
            cwd=copy,
            env={**os.environ, "PYTHONPATH": f"{copy}:{copy / 'src'}", PHASES_ENV: str(phases)},
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            raise ExternalFailure(f"counting {name} failed: {done.stderr.strip()[-300:]}")
        counted = json.loads(done.stdout.splitlines()[-1])
        if phases.exists():
            counted["phases"] = phase_sums(phases.read_text())
        return counted


def phase_sums(lines: str) -> dict:
    """Each phase's seconds summed over the children, from their JSON lines."""
    rows = [json.loads(line) for line in lines.splitlines()]
    return {key: round(sum(row[key] for row in rows), 1) for key in rows[0]} if rows else {}


def shifts(base: dict[str, float], other: dict[str, float]) -> dict:
    """How ``other``'s counts differ from ``base``'s, row by row: the median size of the
    change, the largest rise and fall, and how many rose past the gate's count factor or
    fell as far."""
    ratios = {key: other[key] / base[key] for key in base if key in other}
    if not ratios:
        return {"rows": 0}
    rise, fall = max(ratios, key=ratios.get), min(ratios, key=ratios.get)
    return {
        "rows": len(ratios),
        "unchanged": sum(ratio == 1 for ratio in ratios.values()),
        "median_abs_percent": round(
            100 * statistics.median(abs(r - 1) for r in ratios.values()), 3
        ),
        "largest_rise_percent": round(100 * (ratios[rise] - 1), 3),
        "largest_rise_row": rise,
        "largest_fall_percent": round(100 * (ratios[fall] - 1), 3),
        "largest_fall_row": fall,
        "risen_past_count_factor": sum(r > COUNT_FACTOR for r in ratios.values()),
        "fallen_as_far": sum(r < 2 - COUNT_FACTOR for r in ratios.values()),
    }


def figures(counted: dict[str, dict]) -> dict:
    """The variants counted so far, each against ``as-is`` (counted first), and their
    counts, with the host they were counted on."""
    base = counted["as-is"]["counts"]
    return {
        "host": this_host(),
        "l3": last_level_cache(),
        "variants": {
            name: {
                "seconds": round(found["seconds"], 1),
                "cases": found["cases"],
                **({"phases": found["phases"]} if "phases" in found else {}),
                "against_as_is": shifts(base, found["counts"]),
            }
            for name, found in counted.items()
        },
        "counts": {name: found["counts"] for name, found in counted.items()},
    }


def main() -> int:
    parser = ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--variant",
        action="append",
        choices=list(VARIANTS),
        help="a variant to count beside as-is (default: all)",
    )
    parser.add_argument(
        "--cases",
        type=number_above(0, "--cases"),
        default=0,
        help="count only the first N cases (default: all)",
    )
    parser.add_argument("--out", type=Path, help="write the figures here as JSON")
    args = parser.parse_args()
    chosen = ["as-is", *[v for v in (args.variant or VARIANTS) if v != "as-is"]]
    counted = {}
    for name in chosen:
        counted[name] = count_variant(name, int(args.cases))
        print(f"count_perturbation: {name}: {counted[name]['seconds']:.1f} s", file=sys.stderr)
        if args.out:  # after each variant: a later one that fails loses none of these
            args.out.write_text(json.dumps(figures(counted), indent=1) + "\n")
    print(json.dumps(figures(counted)["variants"], indent=1))
    return 0


if __name__ == "__main__":
    run_main("count_perturbation", main)
