"""A noisy host on demand, alone: run one of the antagonist's profiles for a while, to watch
what it does to anything else on the machine (the studies take ``--noise PROFILE`` to run
under it themselves; tools/_lib/measure/antagonist.py describes the profiles).

    python -m tools.studies.antagonist_alone --profile bursty|membw|mixed [--seconds 60] [--seed 0]
"""

from __future__ import annotations

import time

from tools._lib.base.cli import ArgumentParser, BadInput, run_main
from tools._lib.measure.antagonist import PROFILES, noise


def main() -> int:
    parser = ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", choices=sorted(PROFILES), required=True)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if not 0 < args.seconds <= 24 * 3600:
        raise BadInput("--seconds must be positive, and at most a day")
    print(f"antagonist: {args.profile} for {args.seconds:g} s, seed {args.seed}", flush=True)
    with noise(args.profile, args.seed, args.seconds):
        time.sleep(args.seconds)
    return 0


if __name__ == "__main__":
    run_main("antagonist_alone", main)
