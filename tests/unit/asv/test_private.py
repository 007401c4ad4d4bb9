"""asv's private functions this project calls (tools/_lib/asv/private.py), pinned to what
asv 0.6.6 does with them, so an asv upgrade that changes them fails here first."""

from __future__ import annotations

import inspect

from tools._lib.asv.private import is_result_better, regressions_threshold


def stats(repeat: int, low: float, high: float) -> tuple:
    """asv's (stats, samples) of a result, as a result file keeps them."""
    return ({"ci_99_a": low, "ci_99_b": high, "q_25": low, "q_75": high, "repeat": repeat}, None)


def test_asvs_private_names_are_there_with_the_signatures_called():
    from asv.commands.compare import _is_result_better
    from asv.plugins.regressions import _GraphDataFilter

    assert list(inspect.signature(_is_result_better).parameters)[:5] == [
        "a",
        "b",
        "a_ss",
        "b_ss",
        "factor",
    ]
    assert list(inspect.signature(_GraphDataFilter._get_threshold).parameters) == [
        "self",
        "graph",
        "benchmark",
        "entry_name",
    ]


def test_a_result_is_better_beyond_the_factor_and_only_if_significantly_so():
    assert is_result_better(1.0, 2.0, None, None, 1.1)  # no stats: the factor alone
    assert not is_result_better(1.0, 1.05, None, None, 1.1)
    assert not is_result_better(2.0, 1.0, None, None, 1.1)  # worse, not better
    overlapping = stats(10, 0.5, 3.0)
    assert not is_result_better(1.0, 2.0, overlapping, overlapping, 1.1)
    assert is_result_better(1.0, 2.0, stats(10, 0.99, 1.01), stats(10, 1.99, 2.01), 1.1)
    # one sample a side: the factor alone, asv's special case
    assert is_result_better(1.0, 2.0, stats(1, 0.5, 3.0), stats(1, 0.5, 3.0), 1.1)


def test_a_rows_threshold_is_the_largest_pattern_that_matches_else_five_percent():
    thresholds = {"^a\\.": 0.10, "^a\\.B\\.time_x": 0.25, "^c": 0.5}
    assert regressions_threshold(thresholds, "a.B.time_x('cpu')") == 0.25
    assert regressions_threshold(thresholds, "a.B.time_y('cpu')") == 0.10
    assert regressions_threshold(thresholds, "b.B.time_x") == 0.05
