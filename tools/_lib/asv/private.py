"""asv's private functions this project relies on, in one place: ``asv compare``'s rule for
whether one result is better than another (the rule of ``asv continuous`` too), and the
threshold asv's regressions plugin detects a row's steps at. Both are private in asv 0.6.6
(a leading underscore), so they may change in any release: tests/unit/asv/test_private.py
pins what they do, and an asv upgrade that changes them fails there first, not in a
verdict."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace


def is_result_better(a: float, b: float, a_stats, b_stats, factor: float) -> bool:
    """Whether ``a`` is better (lower) than ``b`` by more than ``factor`` and, where both
    carry asv's stats, significantly (asv/commands/compare.py)."""
    from asv.commands.compare import _is_result_better

    return _is_result_better(a, b, a_stats, b_stats, factor)


def regressions_threshold(thresholds: dict[str, float], entry: str) -> float:
    """The relative step asv's regressions plugin calls a row's step at: the largest of
    asv.conf.json's ``regressions_thresholds`` whose pattern matches ``name(params)``, 0.05
    where none does (asv/plugins/regressions.py)."""
    from asv.plugins.regressions import _GraphDataFilter

    conf = SimpleNamespace(regressions_thresholds=thresholds)
    graph = SimpleNamespace(params={})  # no branch: the results branch's series are one
    return _GraphDataFilter(conf, None, {})._get_threshold(graph, None, entry)


def config_thresholds(repo: Path) -> dict[str, float]:
    """asv.conf.json's ``regressions_thresholds``, as asv reads them."""
    from asv.config import Config

    return Config.load(str(repo / "asv.conf.json")).regressions_thresholds
