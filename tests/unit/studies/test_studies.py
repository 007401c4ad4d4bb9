"""The measurement studies' arithmetic, without measuring: the planted slowdowns, the
ratio a detection run reads, and the thresholds the noise study suggests. Their figures
come from running them on an idle machine (docs/explanation/), never from a test."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from functools import partial
from pathlib import Path

import pytest

from tests.support import REPO_ROOT
from tools._lib.base.cli import BadInput, ExternalFailure
from tools._lib.reach.changes import touched
from tools.studies import plants

SILU_ROW = "bench_activation.Silu.time_silu('cpu', 'float32', (32, 512, 768), 'functional')"
SILU_COUNT_ROW = (
    "bench_instructions.Silu.track_instructions('cpu', 'functional float32 contiguous "
    "(32, 32, 24)')"
)


def planted_repo(tmp_path, plant) -> Path:
    shutil.copytree(REPO_ROOT / "src", tmp_path / "src")
    plant(tmp_path)
    return tmp_path / "src"


def run_in(src: Path, code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "PYTHONPATH": str(src)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_time_plant_slows_each_call_by_its_own_time_and_keeps_the_variant_correct(
    tmp_path,
):
    (row,) = [r for r in plants.time_rows() if r.label == SILU_ROW]
    plant = plants.planter("time", row, 1.3)
    assert plant.keywords["fraction"] == 0.3
    src = planted_repo(tmp_path, plant)
    text = (src / "tensorops" / "activation.py").read_text()
    assert '@variant("silu", "functional")\n@_planted_slowdown(0.3)\ndef ' in text
    out = run_in(
        src,
        "import time, tensorops\n"
        "from tensorops import activation\n"
        "case = tensorops.Case('silu', (4, 8))\n"
        "print(tensorops.verify(case, 'functional'))\n"
        "print(hasattr(tensorops.get_variant('silu', 'functional').fn, '__wrapped__'))\n"
        "slowed = activation._planted_slowdown(2.0)(lambda: time.sleep(0.05))\n"
        "begun = time.perf_counter(); slowed(); print(time.perf_counter() - begun)",
    )
    error, wrapped, seconds = out.split()
    # verify passed (the plant changes no value), the registered variant is the slowed
    # one, and a call that takes 50 ms then waits twice that.
    assert float(error) < 1e-5 and wrapped == "True" and float(seconds) >= 0.15


def test_the_plant_in_the_body_changes_that_function_alone_and_waits_its_fraction(tmp_path):
    (row,) = [r for r in plants.time_rows() if r.label == SILU_ROW]
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    planted_repo(tmp_path, lambda repo: None)
    identity = ["-c", "user.name=t", "-c", "user.email=t@example.invalid"]

    def commit() -> str:
        subprocess.run(["git", "add", "-A"], cwd=tmp_path, check=True)
        subprocess.run(["git", *identity, "commit", "-qm", "c"], cwd=tmp_path, check=True)
        return subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=tmp_path, capture_output=True, text=True
        ).stdout.strip()

    base = commit()
    plant = plants.planter("time", row, 3.0, in_body=True)
    plant(tmp_path)
    head = commit()
    (changed,) = touched(tmp_path, base, head)
    assert (changed.path, changed.function) == ("src/tensorops/activation.py", "silu")
    # A clock that ticks once a call: the body's time is the ticks between the plant's
    # start and its ``finally``; the wait then spins twice that (a fraction of 2.0).
    out = run_in(
        tmp_path / "src",
        "import time, tensorops\n"
        "case = tensorops.Case('silu', (4, 8))\n"
        "print(tensorops.verify(case, 'functional'))\n"
        "fn = tensorops.get_variant('silu', 'functional').fn\n"
        "x = case.inputs()\n"
        "ticks = iter(range(10**6)); calls = []\n"
        "time.perf_counter = lambda: calls.append(1) or float(next(ticks))\n"
        "fn(*x); print(len(calls))",
    )
    error, calls = out.split()
    # Read at the start (0) and twice at the end (1, 2): it spins until 1 + 2.0 x (2 - 0),
    # three reads more.
    assert float(error) < 1e-5 and int(calls) == 3 + 3


def test_a_training_rows_time_plant_is_scaled_to_the_whole_step(monkeypatch):
    (row,) = [r for r in plants.time_rows() if r.backward][:1]
    monkeypatch.setattr(plants, "seconds_per_call", lambda row, backward: 3.0 if backward else 1.0)
    # The plant sits in the forward, a third of the step: 0.3 of the step is 0.9 of it.
    assert plants.planter("time", row, 1.3).keywords["fraction"] == pytest.approx(0.9)


def test_the_planted_instructions_are_sized_from_the_two_counts(monkeypatch):
    from benchmarks._harness import callgrind

    (row,) = [r for r in plants.count_rows() if r.label == SILU_COUNT_ROW]
    monkeypatch.setattr(callgrind, "count_cases", lambda cases: {cases[0].key: 500_000.0})
    monkeypatch.setattr(
        callgrind,
        "callgrind_instructions",
        lambda stmt, setup, number: 700.0 + 25.0 * setup.count("_planted = None"),
    )  # 25 per line, whatever the call costs
    plants.instructions_per_line.cache_clear()
    plant = plants.planter("instructions", row, 1.02)
    plants.instructions_per_line.cache_clear()
    assert plant.keywords["lines"] == "_planted = None\n" * 400  # 2% of 500,000


def test_the_rows_to_plant_in_cover_the_ops_and_leave_out_generated_variants():
    for rows in (plants.time_rows(), plants.count_rows()):
        assert len({row.op for row in rows}) >= 15
        assert not [row for row in rows if row.variant.startswith(("autocast_", "compiled"))]
        assert all(row.spec["device"] == "cpu" for row in rows)


def test_suggested_thresholds_cover_the_worst_no_op_change_with_a_margin():
    from tools.studies.noise_summary import suggested_thresholds

    runs = [
        [{"benchmark": "a.A.time_x", "ratio": 1.02}, {"benchmark": "b.B.time_y", "ratio": 0.5}],
        [{"benchmark": "a.A.time_x", "ratio": 0.97}, {"benchmark": "b.B.time_y", "ratio": 1.1}],
    ]
    # a: worst 3% -> 0.08 -> 0.10 (the floor); b: 0.5 is a 2x change -> 1.05 -> 1.05.
    assert suggested_thresholds(runs) == {"a.A.time_x": 0.10, "b.B.time_y": 1.05}


def test_noise_batches_combine_into_one_summary_each_comparison_on_its_own(tmp_path):
    from tools.studies import noise_study
    from tools.studies.noise_summary import per_row, summarize

    def run(asv_ratio, paired, track_ratio):
        row = {"benchmark": "a.A.time_x", "params": "('cpu',)", "flagged_at": []}
        track = {"benchmark": "a.A.track_gbps", "params": "('cpu',)", "flagged_at": []}
        return [{**row, "ratio": asv_ratio, "paired": paired}, {**track, "ratio": track_ratio}]

    batches = [
        ([run(1.02, 1.01, 2.0)], [{"verdict": 0}]),
        ([run(1.0 / 1.3, 0.98, 1.0)], [{"verdict": 1, "failed": ["a.A.time_x('cpu',)"]}]),
    ]
    paths = []
    for number, (runs, verdicts) in enumerate(batches):
        paths.append(tmp_path / f"batch{number}.json")
        paths[-1].write_text(json.dumps({"runs": runs, "verdicts": verdicts}))
    runs, verdicts = noise_study.combined(paths)
    summary = summarize(runs, verdicts)
    # The track's 2x is not a time row's: asv's worst time row is the 1/1.3 run; the
    # paired alternation read the same rows 1.01 and 1/0.98.
    assert summary["runs"] == 2
    assert summary["asv_interleaved_rounds"]["max"] == pytest.approx(1.3)
    assert summary["asv_interleaved_rounds"]["above_1.25"] == 1
    assert summary["paired_alternation"]["max"] == pytest.approx(1 / 0.98)
    assert summary["gate"]["false_alarms"] == 1
    assert summary["gate"]["failed_rows"] == ["a.A.time_x('cpu',)"]
    assert per_row(runs, "ratio")["a.A.track_gbps('cpu',)"] == [2.0, 1.0]
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(BadInput, match="not a noise_study --out file"):
        noise_study.combined([tmp_path / "bad.json"])


def test_each_no_op_run_keeps_the_summary_the_gate_would_post(tmp_path, monkeypatch):
    from argparse import Namespace

    from tests.support.scripted_gate import OTHER_ROW, TIME_ROW, ScriptedGate
    from tools._lib.measure.no_op_floors import read_samples
    from tools.studies import noise_study

    class NoOpGate(ScriptedGate):
        def first_pass(self, *asv_args: str, rounds: int) -> int:
            return 0

    gate = NoOpGate({TIME_ROW: 1.0, OTHER_ROW: 1.0}, floors={TIME_ROW: 1.05, OTHER_ROW: 1.30})
    monkeypatch.setattr(noise_study, "no_op_clone", lambda workdir: workdir)
    monkeypatch.setattr(noise_study, "register_machine", lambda name: None)
    monkeypatch.setattr(noise_study, "Gate", lambda *args: gate)
    samples = tmp_path / "samples.json"
    args = Namespace(
        floors=None,
        factor=1.15,
        bench="x",
        rows=None,
        runs=2,
        asv_args=[],
        noise=None,
        samples=samples,
    )
    runs, verdicts = noise_study.measure(args, tmp_path)
    assert len(runs) == len(verdicts) == 2
    # The same runs' pairs, as tools.floors writes them: they can give the host its floors.
    kept = read_samples(samples)
    assert len(kept) == 2 and all(set(run) == {TIME_ROW, OTHER_ROW} for run in kept)
    assert all(0.9 < run[TIME_ROW].slowdown < 1.1 for run in kept)
    for verdict in verdicts:
        assert verdict["verdict"] == 0 and verdict["not_judged"] == [OTHER_ROW]
        not_judged = verdict["summary"].split("### Not judged here")[1].split("<details>")[0]
        assert OTHER_ROW in not_judged and "floor 1.30 on this host" in not_judged
        assert TIME_ROW not in not_judged


def test_the_noise_study_measures_the_gates_rows_less_the_counts():
    from benchmarks._harness import tiers
    from tools._lib.verdict.gate import DEFAULT_TIERS
    from tools.studies import noise_study

    selection = re.compile(noise_study.default_selection(REPO_ROOT))
    classes = tiers.benchmark_classes(tiers.suite_modules())
    gated = [row for row, tier in tiers.rows(classes) if tier in DEFAULT_TIERS]
    counts = [row for row in gated if row.startswith("bench_instructions.")]
    timed = [row for row in gated if not row.startswith("bench_instructions.")]
    assert counts and timed
    assert not [row for row in counts if selection.search(row)]
    assert all(selection.search(row) for row in timed)
    # --rows narrows those rows from the start of name(params), and only those.
    zeros = re.compile(noise_study.default_selection(REPO_ROOT, r"bench_creation\.Zeros\."))
    narrowed = [row for row in gated if zeros.search(row)]
    assert narrowed == [row for row in timed if row.startswith("bench_creation.Zeros.")]
    assert len(narrowed) == 2


def test_the_published_regressions_see_a_2_percent_count_rise_and_not_time_noise():
    from types import SimpleNamespace

    from asv.config import Config
    from asv.plugins.regressions import _GraphDataFilter

    # asv takes the largest threshold of every pattern that matches, so the catch-all
    # must leave the counts out for their 1% to hold.
    graphs = _GraphDataFilter.__new__(_GraphDataFilter)
    graphs.conf = Config.load(str(REPO_ROOT / "asv.conf.json"))
    threshold = partial(graphs._get_threshold, SimpleNamespace(params={}), None)
    from benchmarks import bench_instructions

    twins = {row.split("(", 1)[0] for row in bench_instructions.Counted.rows}
    assert len(twins) > 30 and all(threshold(name) == 0.01 for name in twins)
    assert threshold("bench_creation.Zeros.time_zeros") == 0.15
    assert threshold("bench_new.Suite.time_op") == 0.10
    # From the no-op runs of asv's rounds: a time_ row at most 0.25, a track at 0.40.
    published = graphs.conf.regressions_thresholds
    assert max(v for k, v in published.items() if ".time_" in k) <= 0.25
    assert max(v for k, v in published.items() if ".track_" in k) <= 0.40


def test_no_unit_test_compares_timings():
    """Agreement of two timings is a measurement (tools/studies), not a pass/fail test:
    one failed on a fresh clone while another process shared the machine."""
    timing_calls = re.compile(r"\b(crosscheck|timer_seconds|asv_seconds|blocked_autorange)\(")
    offenders = [
        path.name
        for path in (REPO_ROOT / "tests").rglob("test_*.py")
        if timing_calls.search(path.read_text())
    ]
    assert offenders == []


def test_tier_time_adds_each_benchmarks_duration_and_the_setup_caches(tmp_path):
    from tools.studies import tier_time

    folder = tmp_path / ".asv" / "results" / "m"
    folder.mkdir(parents=True)
    columns = ["result", "params", "version", "started_at", "duration"]
    result = {
        "commit_hash": "abc",
        "env_name": "env",
        "result_columns": columns,
        "results": {
            "bench_a.A.time_a": [[1.0], [], "1", 0, 2.5],
            "bench_b.B.time_b": [[1.0], [], "1", 0, None],
        },
        "durations": {"<build>": 4.0, "<setup_cache _harness.twins:87>": 10.0},
    }
    (folder / "abc-env.json").write_text(json.dumps(result))
    recorded = tier_time.durations(tmp_path, "m", "abc", "env")
    assert recorded["bench_a.A.time_a"] == 2.5 and recorded["bench_b.B.time_b"] == 0.0
    assert tier_time.by_suite(recorded) == {
        "<setup_cache": 10.0,
        "<build>": 4.0,
        "bench_a": 2.5,
        "bench_b": 0.0,
    }
    with pytest.raises(ExternalFailure, match="no durations recorded for other"):
        tier_time.durations(tmp_path, "m", "other", "env")
    with pytest.raises(ExternalFailure, match="no durations recorded"):
        tier_time.durations(tmp_path, "m", "abc", "another-env")


def test_count_repeatability_needs_two_processes():
    done = subprocess.run(
        [sys.executable, "-m", "tools.studies.count_repeatability", "--processes", "1"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 4 and "at least 2" in done.stderr


def test_process_noise_records_each_process_of_each_server_under_each_malloc(tmp_path):
    """A real run: two servers, one process each, forked in turn, under jemalloc and under
    glibc's fixed setting; on jemalloc every timed call of `zeros` writes one block."""
    out = tmp_path / "processes.json"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tools.studies.process_noise",
            "--servers",
            "2",
            "--processes",
            "1",
            "--calls",
            "3",
            "--case",
            "zeros/on_device/float32",
            "--malloc",
            "jemalloc",
            "--malloc",
            "fixed",
            "--out",
            str(out),
        ],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    assert "| zeros/on_device/float32 | jemalloc |" in done.stdout
    assert "| zeros/on_device/float32 | fixed |" in done.stdout
    records = json.loads(out.read_text())
    assert [r["malloc"] for r in records] == ["jemalloc", "fixed"]
    for record in records:
        assert [p["server"] for p in record["processes"]] == [0, 1]
        for measured in record["processes"]:
            assert measured["malloc"] == record["malloc"]
            assert measured["ms"] > 0 and measured["reference_gbps"] > 0 and measured["isa"]
    assert [p["blocks"] for p in records[0]["processes"]] == [1, 1]
    bad = subprocess.run(
        [sys.executable, "-m", "tools.studies.process_noise", "--case", "rms_norm/manual"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode == 4 and "a case is OP/VARIANT/DTYPE" in bad.stderr


def test_late_faults_counts_each_timed_call_of_the_rows_it_is_given():
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tools.studies.late_faults",
            "--calls",
            "3",
            "--rows",
            r"Silu\.time_silu\('cpu', 'float32'.*'manual'",
        ],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    assert re.search(r"^late_faults: [01] of 1 rows faulted after the warm-up$", done.stdout, re.M)
    for line in done.stdout.splitlines()[:-1]:  # a row that faulted: its three calls' counts
        assert re.fullmatch(r".*time_silu\(.*\): \[\d+, \d+, \d+\]", line), line
    for args, message in (
        (["--rows", "("], "is not a valid regex"),
        (["--rows", "NoSuchRow"], "matches no CPU time row"),
        (["--calls", "0"], "must be at least 1"),
    ):
        bad = subprocess.run(
            [sys.executable, "-m", "tools.studies.late_faults", *args],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert bad.returncode == 4 and message in bad.stderr, bad.stderr


def test_process_noise_takes_a_rows_inputs_cold_where_its_class_does():
    from tools.studies.process_noise import nightly_row

    assert nightly_row("gather/flat_take/float32").cold
    assert not nightly_row("zeros/on_device/float32").cold


def test_host_speed_reads_each_window_against_the_median_of_all():
    from tools.studies.noise_summary import window_spread as spread

    figures = spread([1.0] * 17 + [1.2, 0.5, 0.95])
    assert figures["median_ms"] == 1000.0 and figures["windows"] == 20
    assert (figures["min"], figures["max"]) == (0.5, 1.2)
    assert figures["share_off"] == pytest.approx(0.1)  # 1.2 and 0.5; 0.95 is not off
    assert figures["p5"] == 0.5 and figures["p95"] == 1.0  # nearest rank: the 1st, the 19th


def test_host_speed_times_both_calls_in_windows_and_refuses_a_window_past_the_run(tmp_path):
    out = tmp_path / "speed.json"
    command = [sys.executable, "-m", "tools.studies.host_speed", "--seconds", "1"]
    done = subprocess.run(
        [*command, "--window", "0.1", "--out", str(out)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    saved = json.loads(out.read_text())
    assert set(saved["ops"]) == {"mm 512^3 float32", "copy 64 MiB"}
    for name, series in saved["series_ms"].items():
        assert len(series) == saved["ops"][name]["windows"] >= 2
        assert all(value > 0 for value in series)
    assert "windows relative to it" in done.stdout
    bad = subprocess.run([*command, "--window", "2"], cwd=REPO_ROOT, capture_output=True, text=True)
    assert bad.returncode == 4 and "the window within the run" in bad.stderr


def test_the_estimates_study_reads_both_estimates_from_the_samples_floors_wrote(
    tmp_path, monkeypatch
):
    from tools._lib.measure.no_op_floors import read_samples, samples_of
    from tools._lib.measure.paired import Paired
    from tools.studies import estimates

    def placed(label: str, place: float) -> Paired:
        """A no-op whose pairs read ``place`` and its inverse by turns (a block's place
        in the ABBA order worth that much): the plain median lands between the two."""
        after = [place if i % 2 == 0 else 1 / place for i in range(8)]
        return Paired(label, "seconds", (1.0,) * 8, tuple(after), (8,))

    row = "bench_creation.Zeros.time_zeros('cpu', (32, 512, 768), 'on_device')"
    runs = [{row: placed(row, place)} for place in (2.0, 0.5, 1.6, 0.6)]
    path = tmp_path / "samples.json"
    path.write_text(json.dumps(samples_of(runs)))
    back = read_samples(path)
    assert back[0][row] == runs[0][row]  # what tools.floors --samples wrote, read back
    found = {name: estimates.one_estimate(back, e) for name, e in estimates.ESTIMATES.items()}
    taken_out = found["place taken out"]["slowdowns"][row]
    as_taken = found["pairs as taken"]["slowdowns"][row]
    assert all(abs(s - 1) < 0.01 for s in taken_out)
    assert min(as_taken) > 1.1  # the plain median, between the two places
    assert found["place taken out"]["floors"]["median"] == 1.03  # the lowest floor there is
    path.write_text("[{}]")
    with pytest.raises(BadInput, match="fewer than two no-op runs"):
        monkeypatch.setattr(sys, "argv", ["estimates", str(path)])
        estimates.main()
    path.write_text("{not json")
    with pytest.raises(BadInput, match="is not a samples file"):
        read_samples(path)


def test_the_estimates_study_finds_rounds_whose_processes_ran_at_their_own_speed():
    from tools._lib.measure.paired import Paired
    from tools.studies import estimates

    def rounds(label: str, speeds: list[float]) -> Paired:
        """A no-op whose every round's process pair reads its own ``speed``, steadily."""
        after = tuple(speed for speed in speeds for _ in range(8))
        return Paired(label, "seconds", (1.0,) * len(after), after, (8,) * len(speeds))

    per_process = "bench_scan.Cumsum.time_cumsum('cpu', 'float32', (32, 512, 256), 'cumsum')"
    steady = "bench_scan.TopK.time_topk('cpu', 'float32', (2048, 50257), 'topk')"
    runs = [
        {
            per_process: rounds(per_process, [0.9, 1.0, 1.0, 1.0, 1.3]),
            steady: rounds(steady, [1.0] * 3),
        },
        {per_process: rounds(per_process, [1.0, 1.0, 1.4]), steady: rounds(steady, [1.0] * 3)},
    ]
    # The pooled interval of forty pairs is 1.0 to 1.0; two of the five process pairs lie
    # outside it. Three rounds of eight pairs leave the pooled interval wide enough.
    assert runs[0][per_process].slowdown_interval == (1.0, 1.0)
    assert estimates.rounds_outside(runs) == {per_process: 1}
    assert estimates.rounds_median(runs[1][per_process]) == 1.0
    found = estimates.one_estimate(runs, estimates.ESTIMATES["rounds' median"])
    assert found["slowdowns"][per_process] == [1.0, 1.0]
