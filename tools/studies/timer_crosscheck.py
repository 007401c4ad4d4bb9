"""Cross-check asv against torch.utils.benchmark: the same CPU ops, threads and inputs,
timed by ``asv run`` (the harness's warm-up and timer, asv_runner's sampling) and by
``Timer(...).blocked_autorange()`` side by side in one run. The ratios should be 1 within
a few percent; a gross error in the harness (a missing division by ``number``, timing
the warm-up) shows as a ratio far from 1.

    python -m tools.studies.timer_crosscheck [--rounds 3] [--min-run-time 1.0] [--case NAME ...]

Each round times every case by asv, then by Timer; the ratio reported is the median of
the rounds' ratios, so a drift of the machine's speed between the two timings of one
round (minutes apart on a shared runner) does not pass for a disagreement.

asv measures the working tree's tensorops in this interpreter (``-E existing``); the
results it writes under machine ``timer-crosscheck`` are removed afterwards.
"""

from __future__ import annotations

import itertools
import json
import re
import shutil
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

from tools._lib.asv.machines import register_machine
from tools._lib.asv.results import RESULTS_DIR
from tools._lib.asv.run import asv
from tools._lib.base.cli import ArgumentParser, BadInput, ExternalFailure, run_main
from tools._lib.base.git import git

MACHINE = "timer-crosscheck"


@dataclass(frozen=True)
class Case:
    benchmark: str
    params: tuple  # as the suite's params, device first
    op: str
    variant: str
    shape: tuple
    dtype: str = "float32"
    layout: str = "contiguous"

    @property
    def label(self) -> str:
        return f"{self.benchmark}{self.params}"

    def selection(self) -> str:
        """asv's --bench regex for exactly this parameter combination."""
        return f"^{re.escape(self.benchmark)}\\({re.escape(', '.join(map(repr, self.params)))}\\)$"


NLP = (32, 512, 768)
# CPU ops of 100 µs or more at one thread on a 2-core machine.
CASES = {
    "matmul512": Case(
        "bench_matmul.MatMul.time_matmul",
        ("cpu", "float32", (512, 512, 512), "mm"),
        "matmul",
        "mm",
        (512, 512, 512),
    ),
    "linear": Case(
        "bench_linear.Linear.time_linear",
        ("cpu", "float32", (32, 512, 768, 768), "functional"),
        "linear",
        "functional",
        (32, 512, 768, 768),
    ),
    "conv_b1": Case(
        "bench_conv.Conv2d.time_conv2d",
        ("cpu", (1, 3, 224, 224, 64, 3), "channels_last", "functional"),
        "conv2d",
        "functional",
        (1, 3, 224, 224, 64, 3),
        layout="channels_last",
    ),
    "softmax": Case(
        "bench_reduction.Softmax.time_softmax",
        ("cpu", "float32", NLP, "functional"),
        "softmax",
        "functional",
        NLP,
    ),
    "layer_norm": Case(
        "bench_norm.LayerNorm.time_layer_norm",
        ("cpu", "float32", NLP, "functional"),
        "layer_norm",
        "functional",
        NLP,
    ),
    "gelu": Case(
        "bench_activation.Gelu.time_gelu", ("cpu", "float32", NLP, "exact"), "gelu", "exact", NLP
    ),
}


def asv_seconds(repo: Path, cases: list[Case]) -> dict[str, float]:
    """asv's reported time per case, from one ``asv run`` over all of them."""
    register_machine(MACHINE)
    commit = git("rev-parse", "HEAD", cwd=repo)
    selection = [arg for case in cases for arg in ("--bench", case.selection())]
    done = asv(
        "run",
        "--machine",
        MACHINE,
        "-E",
        f"existing:{sys.executable}",
        "--set-commit-hash",
        commit,
        *selection,
        cwd=repo,
    )
    if done.returncode != 0:
        raise ExternalFailure(f"asv run exited {done.returncode}")
    measured = {}
    machine_dir = repo / RESULTS_DIR / MACHINE
    for path in machine_dir.glob(f"{commit[:8]}-*.json"):
        data = json.loads(path.read_text())
        for case in cases:
            row = dict(zip(data["result_columns"], data["results"][case.benchmark], strict=False))
            combos = [tuple(combo) for combo in itertools.product(*row["params"])]
            measured[case.label] = row["result"][combos.index(tuple(map(repr, case.params)))]
    shutil.rmtree(machine_dir)  # a check, not history
    return measured


def timer_seconds(case: Case, min_run_time: float) -> float:
    """torch.utils.benchmark's median for the same case, threads and seeded inputs."""
    from torch.utils.benchmark import Timer

    from benchmarks._harness.controls import controlled, controls_from_env
    from benchmarks._harness.prepare import prepare

    with controlled(controls_from_env()) as controls:
        prepared = prepare(
            case.op,
            case.variant,
            device="cpu",
            shape=case.shape,
            dtype=case.dtype,
            layout=case.layout,
        )
        timer = Timer("call()", globals={"call": prepared.call}, num_threads=controls.threads)
        return timer.blocked_autorange(min_run_time=min_run_time).median


def crosscheck(repo: Path, names: list[str], min_run_time: float, rounds: int) -> list[dict]:
    cases = [CASES[name] for name in names]
    ratios: dict[str, list[float]] = {name: [] for name in names}
    for _ in range(rounds):
        by_asv = asv_seconds(repo, cases)
        for name, case in zip(names, cases, strict=True):
            ratios[name].append(by_asv[case.label] / timer_seconds(case, min_run_time))
    return [
        {
            "case": name,
            "ratio": statistics.median(ratios[name]),
            "lowest": min(ratios[name]),
            "highest": max(ratios[name]),
        }
        for name in names
    ]


def main() -> int:
    parser = ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--case", action="append", choices=sorted(CASES), help="a case to check (default: all)"
    )
    parser.add_argument(
        "--min-run-time",
        type=float,
        default=1.0,
        help="seconds of blocked_autorange per case (default 1.0)",
    )
    parser.add_argument("--rounds", type=int, default=3, help="asv-then-Timer rounds")
    args = parser.parse_args()
    if args.rounds < 1:
        raise BadInput(f"--rounds must be at least 1, got {args.rounds}")
    repo = Path(git("rev-parse", "--show-toplevel", cwd=Path.cwd()))
    rows = crosscheck(repo, args.case or list(CASES), args.min_run_time, args.rounds)
    print(f"{'case':<12} {'asv/Timer':>9}  (median of {args.rounds} rounds; lowest, highest)")
    for row in rows:
        print(f"{row['case']:<12} {row['ratio']:9.3f}  ({row['lowest']:.3f}, {row['highest']:.3f})")
    return 0


if __name__ == "__main__":
    run_main("timer_crosscheck", main)
