"""The push of outboxes to the results branch (tools/push_results.py) against a real bare
remote: what an outbox may land, and that one refused outbox leaves the others landing."""

from __future__ import annotations

import json

import pytest

from tests.support.results_world import World, make_outbox, new_result, push_at_once, refused
from tools._lib.base.git import git
from tools._lib.store.outbox import Outbox

ROW = "bench_a.A.time_x('cpu',)"


def landed(world: World) -> list[str]:
    return git("ls-tree", "-r", "--name-only", "asv-results", cwd=world.remote).splitlines()


def good_outbox(world: World) -> Outbox:
    good = Outbox(world.root / "good")
    good.start("m1", world.tip())
    good.add({"m1/ffffffff-env.json": json.dumps({"commit_hash": "f" * 40}).encode()})
    return good


def test_a_floors_file_with_a_zero_a_negative_and_a_nan_floor_is_refused_at_push(tmp_path):
    world = World(tmp_path)
    floors = {ROW: 0, "bench_a.A.time_y('cpu',)": -1, "bench_a.A.time_z('cpu',)": float("nan")}
    hosts = {"EPYC": {"runs": 4, "estimator": 3, "floors": floors}}
    bad = make_outbox(world, world.tip(), {"m1/floors.json": json.dumps({"hosts": hosts})})
    good = good_outbox(world)
    done = world.repo.tool("push_results", str(bad), str(good.path))
    refused(done, "m1/floors.json", ROW, "time_y", "time_z", "above 1.0 and at most 10")
    assert "m1/floors.json" not in landed(world)
    assert "m1/ffffffff-env.json" in landed(world)  # the next outbox still lands


@pytest.mark.parametrize("name", ["benchmarks.json", "m1/machine.json"])
@pytest.mark.parametrize("text", ["[1, 2]", '"text"', "null"])
def test_a_benchmarks_or_machine_file_that_is_no_object_is_refused_and_the_next_lands(
    tmp_path, name, text
):
    """Valid JSON but no object: refused in one line (exit 4), and the next outbox lands."""
    world = World(tmp_path)
    bad = make_outbox(world, world.tip(), {**new_result(), name: text})
    good = good_outbox(world)
    done = world.repo.tool("push_results", str(bad), str(good.path))
    refused(done, name, "not a JSON object")
    assert "m1/ffffffff-env.json" in landed(world)
    assert "m1/cccccccc-env.json" not in landed(world)  # nothing of the refused outbox


@pytest.mark.parametrize(
    "comparison", [{"rows": []}, {"rows": [{"label": "x"}]}, {"machine": "m1", "rows": "none"}]
)
def test_a_releases_comparison_the_site_cannot_show_is_refused_at_push(tmp_path, comparison):
    """``{"rows": []}`` once landed, then every machine's publish failed on it."""
    world = World(tmp_path)
    bad = make_outbox(world, world.tip(), {"releases/m1.json": json.dumps(comparison)})
    good = good_outbox(world)
    done = world.repo.tool("push_results", str(bad), str(good.path))
    refused(done, "releases/m1.json", "not a releases comparison")
    assert "releases/m1.json" not in landed(world)
    assert "m1/ffffffff-env.json" in landed(world)


def test_the_push_names_the_machines_whose_outboxes_landed(tmp_path):
    """What the filing of issues reads: a refused outbox's machine is not among them."""
    world = World(tmp_path)
    bad = make_outbox(world, world.tip(), {**new_result(), "m1/machine.json": "[1]"})
    (bad / "machine").write_text("m2\n")
    good = good_outbox(world)
    landed = tmp_path / "landed.txt"
    done = world.repo.tool("push_results", str(bad), str(good.path), "--landed", str(landed))
    assert done.returncode == 4
    assert landed.read_text().split() == ["m1"]


def test_three_pushes_racing_to_one_remote_all_land(tmp_path):
    """No queue keeps them apart (GitHub's concurrency group keeps one pending job, and a
    third cancels it): each push replays its files onto the tip another landed."""
    world = World(tmp_path)
    clones, boxes = [], []
    for machine in ("m1", "m2", "m3"):
        clone = world.clone(f"repo-{machine}")
        box = Outbox(tmp_path / f"outbox-{machine}")
        box.start(machine, world.tip())
        described = {**json.loads(world.seed.path.joinpath("m1/machine.json").read_text())}
        box.add(
            {
                f"{machine}/machine.json": json.dumps({**described, "machine": machine}).encode(),
                f"{machine}/dddddddd-env.json": json.dumps({"commit_hash": "d" * 40}).encode(),
            }
        )
        clones.append(clone)
        boxes.append(box)
    push_at_once([(clone, box.path) for clone, box in zip(clones, boxes, strict=True)])
    names = landed(world)
    assert all(f"{m}/dddddddd-env.json" in names for m in ("m1", "m2", "m3"))
