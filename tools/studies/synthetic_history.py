"""A synthetic results history of N nights for the history-scale study
(tools/studies/history_scale.py): a project repository of N commits (one a night, a day
apart) whose asv results hold, for each machine and torch release of the matrix, one
result file a night with every CPU row of every benchmark valued, written by asv's own
``Results``; and a bare remote whose results branch gained each night's files in one
commit, as the nightly pushes them. The values are 1% noise around a per-row level, with a
10% step every STEP_EVERY nights in STEP_ROWS of the rows, so asv's step detection does the
work it does on a real history.
"""

from __future__ import annotations

import itertools
import json
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from tools._lib.asv.matrix import Release, releases
from tools._lib.asv.results import RESULTS_DIR
from tools._lib.base.git import git

FIRST_NIGHT = 1_700_000_000  # a fixed start, so a history is the same on every run
NIGHT = 86_400
SAMPLES = 10  # the time rows' samples a night, as the nightly's rounds record them
STEP_EVERY = 90  # nights between planted steps in a row that has them
STEP_ROWS = 0.05  # share of rows with planted steps


def discovered_benchmarks(repo: Path) -> list[dict]:
    """asv's description of every benchmark, as ``asv run`` discovers them."""
    from asv_runner.discovery import list_benchmarks

    with tempfile.TemporaryFile("w+") as listing:
        sys.path.insert(0, str(repo))
        try:
            list_benchmarks(str(repo / "benchmarks"), listing)
        finally:
            sys.path.remove(str(repo))
        listing.seek(0)
        return json.load(listing)


def cpu_combos(benchmark: dict) -> list[int | None]:
    """Per parameter combination, its index when it runs on the CPU, else None."""
    names, params = benchmark["param_names"], benchmark["params"]
    if not params:
        return [0]
    device = names.index("device") if "device" in names else None
    return [
        index if device is None or combo[device] == "'cpu'" else None
        for index, combo in enumerate(itertools.product(*params))
    ]


def machine_description(name: str) -> dict:
    return {
        "arch": "x86_64",
        "cpu": "synthetic",
        "machine": name,
        "num_cpu": "2",
        "os": "Linux",
        "ram": "24000000",
        "version": 1,
    }


class History:
    """A project repository with ``nights`` commits and their synthetic results, and a bare
    remote whose results branch gained each night's files in one commit."""

    def __init__(self, root: Path, source: Path, nights: int, machines: int):
        self.root, self.nights = root, nights
        self.project = root / "project"
        self.remote = root / "remote.git"
        self.machines = [f"synthetic-{index}" for index in range(machines)]
        self.releases: list[Release] = releases(source)
        self.rng = random.Random(nights)
        self.project.mkdir(parents=True)
        shutil.copy(source / "asv.conf.json", self.project)
        shutil.copytree(source / "benchmarks", self.project / "benchmarks")
        self.commits = self.write_commits()
        self.benchmarks = discovered_benchmarks(source)
        self.write_results()

    def write_commits(self) -> list[str]:
        """One commit a night on main, written by ``git fast-import`` (a thousand commits
        through ``git commit`` take minutes)."""
        git("init", "-q", "-b", "main", cwd=self.project)
        stream = []
        for night in range(self.nights):
            stamp = f"{FIRST_NIGHT + night * NIGHT} +0000"
            message = f"night {night}\n"
            stream.append(
                f"commit refs/heads/main\nmark :{night + 1}\n"
                f"author tensorops <ci@tensorops.invalid> {stamp}\n"
                f"committer tensorops <ci@tensorops.invalid> {stamp}\n"
                f"data {len(message)}\n{message}"
                + (f"from :{night}\n" if night else "")
                + f"M 644 inline night.txt\ndata {len(str(night))}\n{night}\n"
            )
        subprocess.run(
            ["git", "fast-import", "--quiet"],
            input="".join(stream),
            text=True,
            cwd=self.project,
            check=True,
        )
        git("reset", "-q", "--hard", "main", cwd=self.project)
        return git("rev-list", "--reverse", "main", cwd=self.project).split()

    def levels(self) -> dict[str, list[tuple[float, bool]]]:
        """Per benchmark, per parameter combination: its level and whether it steps."""
        return {
            benchmark["name"]: [
                (self.rng.lognormvariate(-7, 2), self.rng.random() < STEP_ROWS)
                for _ in cpu_combos(benchmark)
            ]
            for benchmark in self.benchmarks
        }

    def write_results(self) -> None:
        from asv.benchmarks import Benchmarks
        from asv.config import Config

        results = self.project / RESULTS_DIR
        conf = Config.load(str(self.project / "asv.conf.json"))
        conf.results_dir = str(results)
        results.mkdir(parents=True)
        Benchmarks(conf, self.benchmarks).save()
        for machine in self.machines:
            (results / machine).mkdir()
            (results / machine / "machine.json").write_text(
                json.dumps(machine_description(machine), indent=4)
            )
        levels = {
            (machine, release.torch): self.levels()
            for machine in self.machines
            for release in self.releases
        }
        for night, commit in enumerate(self.commits):
            for machine, release in itertools.product(self.machines, self.releases):
                result = self.night_result(night, commit, machine, release)
                for benchmark in self.benchmarks:
                    rows = levels[(machine, release.torch)][benchmark["name"]]
                    self.add_rows(result, benchmark, rows, night)
                result.save(str(results))

    def night_result(self, night: int, commit: str, machine: str, release: Release):
        from asv.results import Results

        return Results(
            {"machine": machine, "python": "3.11", "torch": release.torch},
            {"torch": release.torch},
            commit,
            (FIRST_NIGHT + night * NIGHT) * 1000,
            "3.11",
            release.env_name,
            {},
        )

    def add_rows(self, result, benchmark: dict, rows: list, night: int) -> None:
        """One night's values of ``benchmark``'s rows: CUDA rows null, time rows with their
        samples (asv computes its statistics from them)."""
        from asv.runner import BenchmarkResult

        values, samples, numbers = [], [], []
        timed = benchmark["type"] == "time"
        for (level, steps), cpu in zip(rows, cpu_combos(benchmark), strict=True):
            if cpu is None:
                values.append(None), samples.append(None), numbers.append(None)
                continue
            value = level * (1.1 ** (night // STEP_EVERY) if steps else 1.0)
            value *= 1 + self.rng.gauss(0, 0.01)
            values.append(value)
            noisy = [value * (1 + self.rng.gauss(0, 0.01)) for _ in range(SAMPLES)]
            samples.append(noisy if timed else None)
            numbers.append(1 if timed else None)
        result.add_result(
            benchmark, BenchmarkResult(values, samples, numbers, 0, "", None), duration=1.0
        )

    def push_night_by_night(self) -> None:
        """The results branch on a bare remote, one commit a night holding that night's
        files, as the nightly pushes them (``git fast-import`` again, for the same reason)."""
        subprocess.run(["git", "init", "-q", "--bare", str(self.remote)], check=True)
        results = self.project / RESULTS_DIR
        files_by_night: dict[str, list[Path]] = {}
        for machine in self.machines:
            for path in (results / machine).glob("*.json"):
                if path.name != "machine.json":
                    commit = json.loads(path.read_text())["commit_hash"]
                    files_by_night.setdefault(commit, []).append(path)
        with subprocess.Popen(
            ["git", "fast-import", "--quiet"], stdin=subprocess.PIPE, cwd=self.remote
        ) as importer:
            assert importer.stdin is not None
            for night, commit in enumerate(self.commits):
                stamp = f"{FIRST_NIGHT + night * NIGHT} +0000"
                header = (
                    f"commit refs/heads/asv-results\nmark :{night + 1}\n"
                    f"committer tensorops <ci@tensorops.invalid> {stamp}\n"
                    f"data 8\nresults\n" + (f"from :{night}\n" if night else "")
                )
                importer.stdin.write(header.encode())
                fixed = ["benchmarks.json", *(f"{m}/machine.json" for m in self.machines)]
                paths = [results / name for name in fixed] if night == 0 else []
                for path in paths + files_by_night[commit]:
                    data = path.read_bytes()
                    name = path.relative_to(results).as_posix()
                    importer.stdin.write(f"M 644 inline {name}\ndata {len(data)}\n".encode())
                    importer.stdin.write(data + b"\n")
            importer.stdin.close()
        if importer.returncode:
            raise RuntimeError("git fast-import failed on the results branch")
