"""The paired estimate: one row of two sides measured by alternation
(tools/_lib/measure/alternation.py), the median of its pairs' ratios with a distribution-free
interval, and when that estimate calls the row slower, faster or undecided. "Slower" itself,
and the rule for a value, are tools/_lib/measure/comparison.py's.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

from tools._lib.measure.comparison import check_measurements, higher_is_better

# The confidence of the paired interval: a row is called slower only when the whole
# interval of its paired ratio lies above 1.
CONFIDENCE = 0.99
# A paired estimate this far from 1 whose interval still holds 1 is undecided: the
# alternation takes more pairs (as Pinpoint adds runs while undecided).
UNDECIDED_BEYOND = 1.02
# Rounds of a row whose own reads lie further apart than this met process pairs that ran it
# at their own speeds, not the code: the row is measured in more rounds. A no-op's rounds
# stay within it in most rows; a row such as cumsum, whose process pairs read 0.89 to 1.47
# on identical code, does not (docs/explanation/comparison.md, "Processes").
ROUNDS_AGREE_WITHIN = 1.05


def median_interval(values: list[float], confidence: float = CONFIDENCE) -> tuple[float, float]:
    """A distribution-free interval for the median of ``values``: asv's own (the order
    statistics whose binomial tail leaves at most ``1 - confidence`` outside), with every
    value where there are too few for that (asv then says minus and plus infinity)."""
    from asv_runner.statistics import quantile_ci

    low, high = quantile_ci(values, 0.5, alpha_min=1 - confidence)[1]
    return (
        low if math.isfinite(low) else min(values),
        high if math.isfinite(high) else max(values),
    )


@dataclass(frozen=True)
class Paired:
    """One row of two commits measured by alternation: the samples of each side in the
    order they were taken, pair ``i`` being ``(before[i], after[i])``, taken one right
    after the other, the order inside a pair alternating (ABBA; tools/_lib/measure/workers.py).

    The estimate is the median of the pairs' ratios, each with its place in the ABBA
    order taken out: a slowdown of the host lasting seconds slows both halves of a pair
    alike, and a burst that hits one half moves one ratio, which the median discards. The
    place: the first block of a pair follows a block of its own process, the second one
    of the other's, whose memory has just evicted its own, so a round's even pairs read
    ``s * p`` and its odd ones ``s / p``; ``p`` is estimated in each round as the square
    root of the quotient of its two halves' medians, and divided out. Where it is worth
    2x, as for a 48 MiB ``zeros`` on one host, the plain pairs read 2 and 0.5 by turns
    and their median anything between (docs/explanation/comparison.md, "The estimate and
    the verdict").
    """

    label: str
    unit: str
    before: tuple[float, ...]
    after: tuple[float, ...]
    rounds: tuple[int, ...] = ()  # pairs per round (process pair), in order; () one round

    def __post_init__(self):
        """No verdict without measurements: every value finite and positive, one per side
        in each pair, and the rounds holding exactly the pairs."""
        check_measurements(self.label, *self.before, *self.after)
        if len(self.before) != len(self.after) or (
            self.rounds and (sum(self.rounds) != len(self.before) or min(self.rounds) < 1)
        ):
            raise ValueError(
                f"{self.label}: {len(self.before)} values before, {len(self.after)} after, "
                f"rounds {self.rounds}: not pairs"
            )

    @classmethod
    def of_rounds(cls, label: str, rounds: list) -> Paired:
        """One row's rounds (each a process pair's ``before``, ``after`` and ``unit``),
        pooled."""
        before = tuple(v for timed in rounds for v in timed.before)
        after = tuple(v for timed in rounds for v in timed.after)
        return cls(label, rounds[0].unit, before, after, tuple(len(t.before) for t in rounds))

    @property
    def pair_ratios(self) -> list[float]:
        """after/before of each pair, in the order taken."""
        return [after / before for before, after in zip(self.before, self.after, strict=True)]

    @property
    def ratios(self) -> list[float]:
        """after/before of each pair, its place in the ABBA order taken out round by round
        (a round is one pair of processes, and what a place is worth differs between
        them; the pair's parity inside its round says which place it had)."""
        single, found, start = self.pair_ratios, [], 0
        for size in self.rounds or (len(single),):
            taken = single[start : start + size]
            start += size
            even, odd = taken[0::2], taken[1::2]
            place = math.sqrt(statistics.median(even) / statistics.median(odd)) if odd else 1.0
            found += [r * place if i % 2 else r / place for i, r in enumerate(taken)]
        return found

    @property
    def ratio(self) -> float:
        """after/before, the median of the pairs' (their place taken out)."""
        return statistics.median(self.ratios)

    @property
    def slowdown(self) -> float:
        return 1 / self.ratio if higher_is_better(self.unit) else self.ratio

    @property
    def slowdown_interval(self) -> tuple[float, float]:
        low, high = median_interval(self.ratios)
        return (1 / high, 1 / low) if higher_is_better(self.unit) else (low, high)

    @property
    def round_slowdowns(self) -> list[float]:
        """The slowdown each round's process pair read on its own."""
        sizes, found, start = self.rounds or (len(self.before),), [], 0
        for size in sizes:
            part = Paired(
                self.label,
                self.unit,
                self.before[start : start + size],
                self.after[start : start + size],
            )
            found.append(part.slowdown)
            start += size
        return found

    @property
    def rounds_disagree(self) -> bool:
        """Whether the rounds' own reads lie further apart than ``ROUNDS_AGREE_WITHIN``."""
        reads = self.round_slowdowns
        return max(reads) / min(reads) > ROUNDS_AGREE_WITHIN

    @property
    def rounds_interval(self) -> tuple[float, float]:
        """The interval of the median of the rounds' own reads: their lowest and highest up
        to nine rounds (too few for a narrower 99% interval), order statistics inside
        them beyond (a deep measurement: docs/explanation/comparison.md, "Depth")."""
        return median_interval(list(self.round_slowdowns))

    def slower(self, threshold: float) -> bool:
        """Slower beyond ``threshold`` and significantly: the whole interval above 1, and
        the rounds' process pairs slower: every one of up to nine (a real change shows in
        each; the chance placement of one pair's memory does not), the interval of their
        median in a deeper measurement, where one stray pair in sixteen is to be expected."""
        return (
            self.slowdown > threshold
            and self.slowdown_interval[0] > 1.0
            and self.rounds_interval[0] > 1.0
        )

    def faster(self, threshold: float) -> bool:
        """``slower``'s rules turned round: one pair's memory placement flatters a row as
        readily as it slows one, and a speed-up is reported to a person too."""
        return (
            self.slowdown < 1 / threshold
            and self.slowdown_interval[1] < 1.0
            and self.rounds_interval[1] < 1.0
        )

    @property
    def undecided(self) -> bool:
        """A change the pairs point to without agreeing on it: more pairs would tell."""
        low, high = self.slowdown_interval
        moved = max(self.slowdown, 1 / self.slowdown) >= UNDECIDED_BEYOND
        return moved and low <= 1.0 <= high

    def unsettled_at(self, threshold: float | None) -> bool:
        """Whether the row is slower than ``threshold`` is what more pairs would tell: its
        estimate has come at least halfway from 1 to the threshold and its interval still
        holds the threshold. A real change just past a floor is then read from more
        process pairs before it is missed, and a no-op that strayed towards its floor
        before it is failed (docs/explanation/comparison.md, "The estimate and the
        verdict")."""
        if threshold is None or threshold <= 1.0:
            return False
        low, high = self.slowdown_interval
        return self.slowdown >= (1 + threshold) / 2 and low <= threshold <= high

    @property
    def before_value(self) -> float:
        return statistics.median(self.before)

    @property
    def after_value(self) -> float:
        return statistics.median(self.after)
