"""Shards of one machine's night landing on one results branch (real git, a local bare
remote, three processes at once): each shard writes the same result file per commit and
environment with its own benchmarks, and the branch ends with every row of every shard
that finished, as if one run had measured them; a shard killed half-way loses only the
commits it had not landed. And the split itself: every class of the tier in exactly one
shard, whole."""

from __future__ import annotations

import json
import signal
import statistics
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from benchmarks._harness import shards, tiers
from tests.support import REPO_ROOT
from tests.support.results_world import World, push_at_once
from tools._lib.base.cli import BadInput
from tools._lib.base.git import git
from tools._lib.store.outbox import Outbox
from tools._lib.store.tree import merge_results

COLUMNS = ["result", "params", "version", "started_at", "duration"]
COMMITS = ("c" * 40, "e" * 40)
SHARDS = {
    1: ["bench_a.A.time_x", "bench_a.A.track_gbps"],
    2: ["bench_b.B.time_y"],
    3: ["bench_c.C.time_z", "bench_c.C.peakmem_z"],
}


def result_file(commit: str, benchmarks: list[str], value: float = 1.0) -> dict:
    """An asv result file of machine m1 at ``commit`` holding ``benchmarks``' rows."""
    return {
        "commit_hash": commit,
        "env_name": "env",
        "date": 1,
        "params": {"machine": "m1"},
        "result_columns": COLUMNS,
        "results": {name: [[value], [["'cpu'"]], "1", 1, 0.5] for name in benchmarks},
        "durations": {"<build>": 7.0},
        "version": 2,
    }


def name_of(commit: str) -> str:
    return f"m1/{commit[:8]}-env.json"


def on_branch(world: World, commit: str) -> dict:
    return json.loads(git("show", f"asv-results:{name_of(commit)}", cwd=world.remote))


def test_two_result_files_merge_benchmark_by_benchmark_ours_winning():
    theirs = result_file(COMMITS[0], SHARDS[1] + SHARDS[2], value=1.0)
    ours = result_file(COMMITS[0], SHARDS[2] + SHARDS[3], value=2.0)
    merged = json.loads(merge_results(json.dumps(theirs).encode(), json.dumps(ours).encode()))
    assert sorted(merged["results"]) == sorted(SHARDS[1] + SHARDS[2] + SHARDS[3])
    assert merged["results"]["bench_a.A.time_x"][0] == [1.0]
    assert merged["results"]["bench_b.B.time_y"][0] == [2.0]  # both held it: ours
    assert merged["commit_hash"] == COMMITS[0] and merged["result_columns"] == COLUMNS
    other = json.dumps(result_file(COMMITS[1], SHARDS[3])).encode()
    with pytest.raises(BadInput, match="different commit_hash"):
        merge_results(json.dumps(theirs).encode(), other)
    with pytest.raises(BadInput, match="not JSON"):
        merge_results(b"{half", other)


# Lands each commit's file of one shard in turn with the nightly's landing (check out,
# write, commit, push; on a lost race, replay onto the new tip), after a start signal;
# before a commit named in HOLD it waits until killed.
LANDING = textwrap.dedent(
    """
    import json, sys, time
    from pathlib import Path
    from tools._lib.store.branch import ResultsBranch

    start, hold, files = Path(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3])
    while not start.exists():
        time.sleep(0.01)
    branch = ResultsBranch(Path.cwd())
    branch.check_out()
    for name, data in files.items():
        if name == hold:
            print("holding", flush=True)
            time.sleep(600)
        # asv adds its rows to the file the checkout holds
        target = branch.worktree / name
        held = json.loads(target.read_text()) if target.exists() else {"results": {}}
        data["results"] = {**held["results"], **data["results"]}
        branch.write_files({name: json.dumps(data).encode()})
        branch.land(f"m1: results for {name}")
    print("landed", flush=True)
    """
)


def test_three_shards_landing_at_once_one_killed_half_way_keep_one_history(tmp_path):
    world = World(tmp_path)
    start = tmp_path / "start"
    racing = {}
    for shard, benchmarks in SHARDS.items():
        clone = world.clone(f"shard-{shard}")
        files = {name_of(c): result_file(c, benchmarks) for c in COMMITS}
        hold = name_of(COMMITS[1]) if shard == 3 else ""
        racing[shard] = subprocess.Popen(
            [sys.executable, "-c", LANDING, str(start), hold, json.dumps(files)],
            cwd=clone.path,
            env={**clone.env, "PYTHONPATH": str(REPO_ROOT)},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
    start.touch()
    for shard in (1, 2):
        out, err = racing[shard].communicate(timeout=120)
        assert racing[shard].returncode == 0 and "landed" in out, out + err
    killed = racing[3]
    assert killed.stdout.readline().strip() == "holding"  # its first commit landed
    killed.send_signal(signal.SIGKILL)
    killed.communicate(timeout=30)

    unsharded = {**result_file(COMMITS[1], SHARDS[1] + SHARDS[2])}
    assert on_branch(world, COMMITS[1])["results"] == unsharded["results"]
    everything = result_file(COMMITS[0], SHARDS[1] + SHARDS[2] + SHARDS[3])
    assert on_branch(world, COMMITS[0])["results"] == everything["results"]


def test_the_shards_outboxes_pushed_at_once_all_land_in_one_file(tmp_path):
    """The workflow's way: each shard's outbox to the push job, pushed together."""
    world = World(tmp_path)
    pushes = []
    for shard, benchmarks in SHARDS.items():
        box = Outbox(tmp_path / f"outbox-m1-{shard}")
        box.start("m1", world.tip())
        landed = COMMITS[:1] if shard == 3 else COMMITS  # the third was cut after one
        box.add({name_of(c): json.dumps(result_file(c, benchmarks)).encode() for c in landed})
        pushes.append((world.clone(f"push-{shard}"), box.path))
    push_at_once(pushes)
    assert sorted(on_branch(world, COMMITS[1])["results"]) == sorted(SHARDS[1] + SHARDS[2])
    assert sorted(on_branch(world, COMMITS[0])["results"]) == sorted(
        SHARDS[1] + SHARDS[2] + SHARDS[3]
    )


@pytest.mark.parametrize("table", ["committed", "none"])
def test_every_class_of_the_tier_is_in_exactly_one_shard_whole_and_balanced(table):
    classes = tiers.benchmark_classes(tiers.suite_modules())
    chosen = ("pr", "nightly")
    seconds = shards.row_seconds() if table == "committed" else {}
    with_rows = {c for c in classes if any(t in chosen for _, t in tiers.rows([c]))}
    split = [shards.shard(classes, chosen, index, 3, seconds) for index in (1, 2, 3)]
    assert all(split)
    flat = [c for part in split for c in part]
    assert len(flat) == len(set(flat)) and set(flat) == with_rows
    cost = shards.weights(classes, chosen, seconds)
    loads = [sum(cost[c] for c in part) for part in split]
    assert max(loads) - min(loads) <= max(cost.values())  # each class to the lightest
    assert split == [shards.shard(classes, chosen, index, 3, seconds) for index in (1, 2, 3)]
    assert set(shards.shard(classes, chosen, 1, 1, seconds)) == with_rows
    union = {r for part in split for r in tiers.benchmarks_of(part, chosen)}
    assert union == tiers.benchmarks_of(classes, chosen)


def test_the_committed_table_times_the_nightly_tier_and_weighs_the_rest_at_its_median():
    """The committed table is of the nightly tier's benchmarks; a row it lacks weighs its
    median, and without a table every row weighs one."""
    seconds = shards.row_seconds()
    classes = tiers.benchmark_classes(tiers.suite_modules())
    nightly = tiers.benchmarks_of(classes, ("pr", "nightly"))
    assert len(set(seconds) & nightly) > 0.9 * len(nightly)
    weekly = [c for c in classes if tiers.benchmarks_of([c], ("weekly",)) - set(seconds)]
    cls = weekly[0]
    rows = sum(t == "weekly" for _, t in tiers.rows([cls]))
    median = statistics.median(seconds.values())
    assert shards.weights([cls], ("weekly",), seconds)[cls] == pytest.approx(rows * median)
    assert shards.weights([cls], ("weekly",), {})[cls] == rows
    assert shards.row_seconds(Path("no-such-table.json")) == {}


@pytest.mark.parametrize("spec", ["0/3", "4/3", "2", "a/b"])
def test_a_shard_that_is_not_one_of_k_is_refused(tmp_path, spec):
    done = subprocess.run(
        [sys.executable, "-m", "tools.nightly", "--machine", "m1", "--shard", spec],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 4 and "I/K" in done.stderr  # bad input, one line
