"""The map of what rows reach, traced for real: the harness's tracer in an environment with
torch (this interpreter's: the asv environments are the slow lane's, where the gate's
planted history traces its map in one), a commit's library first on the path."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.support import REPO_ROOT
from tools._lib.base.cli import BadInput
from tools._lib.reach.reach_map import (
    CACHE,
    ReachMap,
    branch_map_path,
    reach_at,
    read_map,
    refresh_branch_map,
)
from tools._lib.store.tree import check_path

EXACT = "bench_activation.Gelu.time_gelu('cpu', 'float32', (32, 512, 768), 'exact')"
TANH = "bench_activation.Gelu.time_gelu('cpu', 'float32', (32, 512, 768), 'tanh')"
CUDA = "bench_activation.Gelu.time_gelu('cuda', 'float32', (32, 512, 768), 'exact')"


@pytest.fixture(scope="module")
def clone(tmp_path_factory):
    path = tmp_path_factory.mktemp("reach") / "repo"
    subprocess.run(["git", "clone", "-q", str(REPO_ROOT), str(path)], check=True)
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=path, capture_output=True, text=True, check=True
    ).stdout.strip()
    return path, head


@pytest.fixture(scope="module")
def mapped(clone):
    repo, head = clone
    return reach_at(repo, head, [EXACT, TANH], sys.executable)


def test_each_row_reaches_its_own_variant_and_the_helpers_it_shares(mapped):
    exact, tanh = mapped.reach.rows[EXACT], mapped.reach.rows[TANH]
    assert exact.status == tanh.status == "traced"
    assert ("tensorops/activation.py", "gelu_exact") in exact.functions
    assert ("tensorops/activation.py", "gelu_exact") not in tanh.functions
    assert ("tensorops/activation.py", "gelu_tanh") in tanh.functions
    shared = ("tensorops/cases.py", "random_inputs")
    assert shared in exact.functions and shared in tanh.functions
    assert "tensorops/activation.py" in exact.modules
    assert mapped.source.startswith("traced now: no map of")


def test_what_the_library_runs_at_import_is_apart_from_the_rows(mapped):
    at_import = {name for path, name in mapped.reach.at_import}
    assert "<module>" in at_import and "define_op" in at_import
    assert ("tensorops/activation.py", "gelu_exact") not in mapped.reach.at_import


def test_the_map_is_kept_by_commit_and_only_missing_rows_are_traced_again(clone, mapped):
    repo, head = clone
    cached = repo / CACHE / f"{head}.json"
    assert read_map(cached) == mapped.reach
    again = reach_at(repo, head, [EXACT], sys.executable)
    assert again.source == f"read from {CACHE / f'{head}.json'}"
    more = reach_at(repo, head, [EXACT, CUDA], sys.executable)
    assert more.source == "read, and 1 rows it lacked traced now"
    assert (
        more.reach.rows[CUDA].status == "skip"
        and more.reach.rows[EXACT] == mapped.reach.rows[EXACT]
    )


def test_a_map_of_another_commit_is_left_aside_and_said_so(clone, mapped, tmp_path):
    repo, head = clone
    other = tmp_path / "other.json"
    other.write_text(json.dumps(ReachMap("a" * 40, frozenset(), {}).to_json()))
    found = reach_at(repo, head, [EXACT], sys.executable, other)
    assert found.source.startswith(f"{other} is of aaaaaaaaaaaa, not {head[:12]}; read from")
    assert found.reach.rows[EXACT] == mapped.reach.rows[EXACT]


def test_a_file_that_is_no_map_is_refused_in_one_line(clone, tmp_path):
    repo, head = clone
    other = tmp_path / "other.json"
    other.write_text('{"version": 1, "rows": 3}')
    with pytest.raises(BadInput, match="is not a reach map"):
        reach_at(repo, head, [EXACT], sys.executable, other)


def test_the_nightly_keeps_the_newest_commits_map_beside_the_results(clone, tmp_path):
    repo, head = clone
    results = tmp_path / "results"
    assert refresh_branch_map(results, "gha-cpu", repo, head, [TANH], sys.executable)
    path = branch_map_path(results, "gha-cpu")
    check_path(str(path.relative_to(results)))  # the results branch takes it
    assert read_map(path).commit == head and TANH in read_map(path).rows
    assert not refresh_branch_map(results, "gha-cpu", repo, head, [TANH], sys.executable)
