"""Which rows a change selects, against a map of what each row ran at the base."""

from __future__ import annotations

import re

from tools._lib.reach.changes import Reach, Touched
from tools._lib.reach.reach_map import ReachMap, RowReach
from tools._lib.reach.selection import (
    NOT_MAPPED,
    bench_regex,
    candidates_of,
    everything,
    needs_map,
    select,
)
from tools._lib.verdict.gate_rows import ROUND_SECONDS, depth_for, is_timed_label

MATMUL = "bench_matmul.MatMul.time_matmul('cpu', 'float32', 'mm')"
EINSUM = "bench_matmul.MatMul.time_matmul('cpu', 'float32', 'einsum')"
SOFTMAX = "bench_reduction.Softmax.time_softmax('cpu', 'float32', 'functional')"
COUNT = "bench_instructions.Matmul.track_instructions('cpu', 'mm float32')"
CANDIDATES = [MATMUL, EINSUM, SOFTMAX, COUNT]
TWINS = {COUNT: MATMUL}
SHARED = ("tensorops/cases.py", "random_inputs")


def ran(*functions: tuple[str, str], modules=("tensorops/matmul.py", "tensorops/cases.py")):
    return RowReach("traced", frozenset((*functions, SHARED)), frozenset(modules))


MAP = ReachMap(
    "b" * 40,
    frozenset({("tensorops/_registry.py", "variant")}),
    {
        MATMUL: ran(("tensorops/matmul.py", "mm")),
        EINSUM: ran(("tensorops/matmul.py", "einsum")),
        SOFTMAX: ran(
            ("tensorops/reduction.py", "softmax"),
            modules=("tensorops/reduction.py", "tensorops/cases.py"),
        ),
    },
)


def function(path: str, name: str) -> Touched:
    return Touched(path, Reach.FUNCTION, "a changed line in its body", function=name)


def chosen(*touched: Touched, reach=MAP):
    return select(touched, CANDIDATES, TWINS, reach)


def test_a_changed_function_selects_exactly_the_rows_that_ran_it_and_their_count_twins():
    selection = chosen(function("src/tensorops/matmul.py", "mm"))
    assert selection.rows == (MATMUL, COUNT)
    assert not selection.everything and selection.not_selected == 2


def test_a_helper_the_ops_share_selects_every_row_that_ran_it():
    selection = chosen(function("src/tensorops/cases.py", "random_inputs"))
    assert selection.rows == (MATMUL, EINSUM, SOFTMAX, COUNT)


def test_a_function_no_row_ran_selects_none():
    assert chosen(function("src/tensorops/matmul.py", "unused")).rows == ()


def test_module_level_code_selects_the_rows_that_imported_the_module():
    touched = Touched("src/tensorops/reduction.py", Reach.MODULE, "module level")
    assert chosen(touched).rows == (SOFTMAX,)


def test_a_function_the_library_runs_at_import_acts_as_module_level_code():
    selection = chosen(function("src/tensorops/_registry.py", "variant"))
    assert selection.rows == ()  # no row imported _registry.py in this map
    (reason,) = selection.chosen
    assert "imported" in reason.why


def test_the_harness_or_the_config_selects_every_row_without_a_map():
    touched = [
        Touched("benchmarks/_harness/prepare.py", Reach.EVERY_ROW, "the harness"),
        function("src/tensorops/matmul.py", "mm"),
    ]
    assert not needs_map(touched)
    selection = select(touched, CANDIDATES, TWINS, None)
    assert selection.everything and selection.rows == tuple(CANDIDATES)
    assert selection.chosen[1].rows == () and "every row" in selection.chosen[1].why


def test_a_change_no_row_can_reach_selects_nothing_and_needs_no_map():
    touched = [
        Touched("README.md", Reach.NO_ROW, "documentation"),
        Touched(".github/workflows/ci.yml", Reach.NO_ROW, "a workflow"),
    ]
    assert not needs_map(touched)
    selection = select(touched, CANDIDATES, TWINS, None)
    assert selection.rows == () and [c.why for c in selection.chosen] == [
        "documentation",
        "a workflow",
    ]


def test_a_row_the_map_lacks_is_selected_with_the_reason():
    partial = ReachMap(MAP.commit, MAP.at_import, {MATMUL: MAP.rows[MATMUL]})
    selection = chosen(function("src/tensorops/matmul.py", "mm"), reach=partial)
    assert selection.rows == (MATMUL, EINSUM, SOFTMAX, COUNT)
    assert selection.unmapped == (EINSUM, SOFTMAX)
    assert NOT_MAPPED.startswith("not in the map")


def test_all_selects_every_row():
    selection = everything(CANDIDATES, "--all")
    assert selection.everything and selection.rows == tuple(CANDIDATES)


def test_the_bench_regex_matches_exactly_the_rows_as_asv_matches():
    regex = bench_regex([MATMUL, COUNT])
    assert candidates_of(CANDIDATES, [regex]) == [MATMUL, COUNT]
    assert [row for row in CANDIDATES if re.search(regex, row)] == [MATMUL, COUNT]
    assert candidates_of(CANDIDATES, ["MatMul", "softmax"]) == [MATMUL, EINSUM, SOFTMAX]


def test_a_map_written_reads_back_the_same():
    assert ReachMap.from_json(MAP.to_json()) == MAP


def test_the_depth_budget_gives_a_small_selection_a_checked_depth_and_a_large_one_none():
    assert is_timed_label(MATMUL) and not is_timed_label(COUNT)
    assert depth_for([MATMUL, COUNT], 3.0) == 16  # one timed row: 72 s of 180
    two = 2 * 16 * ROUND_SECONDS / 60
    assert depth_for([MATMUL, EINSUM], two) == 16
    assert depth_for([MATMUL, EINSUM], two - 0.01) is None
    assert depth_for([COUNT], 3.0) is None  # nothing the alternation measures
    assert depth_for(CANDIDATES * 10, 3.0) is None
