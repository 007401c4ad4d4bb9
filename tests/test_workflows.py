"""The GitHub Actions workflows: linted by actionlint (with shellcheck) and zizmor, and
parsed to hold the rules the README promises: triggers, least privilege, concurrency,
pinned actions, no self-hosted runner on pull requests, no expressions in scripts."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from .conftest import REPO_ROOT

WORKFLOWS = REPO_ROOT / ".github" / "workflows"
BIN = Path(sys.executable).parent
PINNED = re.compile(r"^[\w.-]+/[\w.-]+(/[\w./-]+)?@[0-9a-f]{40}$")


def load(name: str) -> dict:
    data = yaml.safe_load((WORKFLOWS / name).read_text())
    data["on"] = data.pop(True, data.get("on"))  # YAML 1.1 reads the key `on` as True
    return data


def all_workflows() -> dict[str, dict]:
    return {path.name: load(path.name) for path in sorted(WORKFLOWS.glob("*.yml"))}


def steps(workflow: dict):
    for job in workflow["jobs"].values():
        yield from job.get("steps", [])


def test_the_four_workflows_exist():
    assert set(all_workflows()) == {"ci.yml", "nightly.yml", "benchmarks-pr.yml", "bisect.yml"}


def test_actionlint_with_shellcheck_passes():
    done = subprocess.run(
        [str(BIN / "actionlint"), "-shellcheck", str(BIN / "shellcheck"), "-verbose"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    # -verbose says when a rule is off; shellcheck must have run.
    assert 'Rule "shellcheck" was disabled' not in done.stderr


def test_zizmor_finds_nothing_at_medium_or_above():
    done = subprocess.run(
        [str(BIN / "zizmor"), "--offline", "--min-severity", "medium", str(WORKFLOWS)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_shell_scripts_pass_shellcheck():
    scripts = [REPO_ROOT / "tools" / "dev.sh", REPO_ROOT / ".ci" / "run"]
    done = subprocess.run(
        [str(BIN / "shellcheck"), *map(str, scripts)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout


def test_triggers():
    flows = all_workflows()
    assert set(flows["ci.yml"]["on"]) == {"push", "pull_request"}
    assert set(flows["nightly.yml"]["on"]) == {"schedule", "workflow_dispatch"}
    assert flows["nightly.yml"]["on"]["schedule"][0]["cron"]
    assert set(flows["benchmarks-pr.yml"]["on"]) == {"pull_request", "workflow_dispatch"}
    assert "labeled" in flows["benchmarks-pr.yml"]["on"]["pull_request"]["types"]
    assert "'run-benchmarks'" in flows["benchmarks-pr.yml"]["jobs"]["gate"]["if"]
    assert set(flows["bisect.yml"]["on"]) == {"workflow_dispatch"}
    assert {"good", "bad", "benchmark"} <= set(
        flows["bisect.yml"]["on"]["workflow_dispatch"]["inputs"]
    )
    for name, flow in flows.items():
        assert "pull_request_target" not in flow["on"], name


def test_least_privilege():
    writers = {
        ("nightly.yml", "benchmark"): {"contents": "write"},
        ("nightly.yml", "deploy"): {"pages": "write", "id-token": "write"},
    }
    for name, flow in all_workflows().items():
        assert flow["permissions"] == {"contents": "read"}, name
        for job_name, job in flow["jobs"].items():
            granted = job.get("permissions", {})
            expected = writers.get((name, job_name), {})
            assert {k: v for k, v in granted.items() if v != "read"} == expected, (name, job_name)


def test_pages_are_built_in_one_job_and_deployed_in_another():
    jobs = load("nightly.yml")["jobs"]
    uses = {job: [step.get("uses", "") for step in jobs[job]["steps"]] for job in jobs}
    assert any(u.startswith("actions/upload-pages-artifact@") for u in uses["publish"])
    assert [u.split("@")[0] for u in uses["deploy"]] == ["actions/deploy-pages"]
    assert jobs["deploy"]["environment"]["name"] == "github-pages"
    assert jobs["publish"]["needs"] == "benchmark" and jobs["deploy"]["needs"] == "publish"


def test_concurrency_is_set_and_nightlies_do_not_race():
    for name, flow in all_workflows().items():
        assert flow["concurrency"]["group"], name
    nightly = load("nightly.yml")["concurrency"]
    assert nightly == {"group": "nightly", "cancel-in-progress": False}


def test_every_action_is_pinned_to_a_commit():
    for name, flow in all_workflows().items():
        for step in steps(flow):
            if "uses" in step:
                assert PINNED.match(step["uses"]), (name, step["uses"])


def test_self_hosted_runners_never_run_on_pull_requests():
    for name, flow in all_workflows().items():
        for job_name, job in flow["jobs"].items():
            if "self-hosted" in yaml.safe_dump(job):  # its runs-on or its matrix
                assert not {"pull_request", "pull_request_target"} & set(flow["on"]), (
                    name,
                    job_name,
                )
    pr_jobs = load("benchmarks-pr.yml")["jobs"]
    assert all(job["runs-on"] == "ubuntu-24.04" for job in pr_jobs.values())


def test_self_hosted_rule_sees_the_gpu_jobs():
    """The rule above is not vacuous: the nightly and bisect jobs can reach the GPU runner."""
    assert "self-hosted" in yaml.safe_dump(load("nightly.yml")["jobs"]["benchmark"])
    assert "self-hosted" in yaml.safe_dump(load("bisect.yml")["jobs"]["bisect"])


def test_the_gpu_runner_is_opt_in_by_repository_variable():
    matrix = load("nightly.yml")["jobs"]["benchmark"]["strategy"]["matrix"]["machine"]
    assert "vars.TENSOROPS_GPU_NIGHTLY == 'true'" in matrix
    default = re.search(r"\|\| '(\[.*?\])'\) }}", matrix, re.S).group(1)
    assert "self-hosted" not in default and "ubuntu-24.04" in default


def test_scripts_hold_no_expressions_or_secrets():
    """Inputs and event fields reach scripts through env, never spliced into shell."""
    for name, flow in all_workflows().items():
        for step in steps(flow):
            assert "${{" not in step.get("run", ""), (name, step.get("name"))
        assert "secrets." not in (WORKFLOWS / name).read_text(), name


@pytest.mark.parametrize("tool", ["nightly", "publish", "pr_gate", "bisect_slowdown"])
def test_each_script_is_called_by_a_workflow(tool):
    runs = [step.get("run", "") for flow in all_workflows().values() for step in steps(flow)]
    assert any(f"-m tools.{tool}" in run for run in runs)


@pytest.mark.parametrize("name", ["nightly.yml", "benchmarks-pr.yml", "bisect.yml"])
def test_benchmark_jobs_install_valgrind_before_benchmarking(name):
    """Without valgrind the instruction-count rows skip, and the history of the one
    noise-free CPU signal is silently empty."""
    runs = [step.get("run", "") for step in steps(load(name))]
    installs = [i for i, run in enumerate(runs) if re.search(r"apt-get install .*valgrind", run)]
    benchmarks = [i for i, run in enumerate(runs) if "-m tools." in run]
    assert installs and installs[0] < benchmarks[0]
