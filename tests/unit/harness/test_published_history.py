"""The published history continues: every recorded benchmark keeps its name, params (text
form), param names, unit and version, and a new benchmark is recorded on purpose."""

from __future__ import annotations

import json

from tests.support import REPO_ROOT
from tests.support.published_benchmarks import RECORD, discovered


def test_every_published_benchmark_keeps_its_name_params_and_version():
    published = json.loads(RECORD.read_text())
    current = discovered(REPO_ROOT)
    missing = sorted(set(published) - set(current))
    assert not missing, f"benchmarks gone from the suites (their history stops): {missing}"
    changed = {
        name: [key for key in published[name] if published[name][key] != current[name].get(key)]
        for name in published
        if published[name] != current[name]
    }
    assert not changed, f"changed keys would start a new history: {changed}"


def test_new_benchmarks_are_recorded():
    unrecorded = sorted(set(discovered(REPO_ROOT)) - set(json.loads(RECORD.read_text())))
    assert not unrecorded, (
        f"record the new benchmarks with `python -m tests.published_benchmarks`: {unrecorded}"
    )
