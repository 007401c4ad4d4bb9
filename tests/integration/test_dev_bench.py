"""The README's bench command, as a newcomer runs it: it benchmarks the current commit and
publishes the same self-contained site as the nightly, which renders in Chromium with no
network at all (asv's own page would show only "external dependencies failed to load")."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.support.project_repo import isolated_env, make_project_repo
from tests.support.site_browser import browse_site

pytestmark = pytest.mark.timeout(900)

BENCH = "bench_creation.Zeros.time_zeros"


def test_the_bench_command_publishes_a_site_that_works_offline(tmp_path, shared_asv_env, request):
    repo = make_project_repo(tmp_path / "repo", isolated_env(tmp_path / "home"), shared_asv_env)
    # The dev venv this test runs in is the one dev.sh would make: same requirements.
    (repo.path / ".venv").symlink_to(Path(sys.executable).parent.parent)
    assert (repo.path / ".venv" / ".installed").exists(), "run tools/dev.sh setup first"
    done = repo.run(
        "bash", "tools/dev.sh", "bench", "--", "--bench", f"^{BENCH}", "--quick", timeout=600
    )
    site = repo.path / ".asv" / "html"
    phases = [line for line in done.stdout.splitlines() if line.startswith("bench: [")]
    assert [line.split(":")[1].strip() for line in phases] == [
        "[1/5] environment",
        "[2/5] benchmarks",
        "[3/5] publish",
        "[4/5] counts",
        "[5/5] publish",
    ]
    lines = done.stdout.splitlines()
    (early,) = [n for n, line in enumerate(lines) if line.startswith("bench: the timed rows are")]
    assert lines.index(phases[2]) < early < lines.index(phases[3])  # before the counts
    assert lines[-1].startswith("bench: done;")
    assert lines[-1].endswith("then open http://localhost:8000/")
    assert (site / ".tensorops-site").exists()
    seen = browse_site(site, BENCH, Path(request.config.rootpath) / "test-artifacts" / "dev-bench")
    assert seen.off_host_requests == [] and seen.failed_requests == []
    assert seen.console_errors == []
    assert BENCH in seen.overview_text
    assert seen.points == [repo.git("rev-parse", "HEAD")[:8]]
    assert not os.path.exists(site / "index.legacy.html")
