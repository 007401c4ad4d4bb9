"""The GitHub Actions workflows: linted by actionlint (with shellcheck) and zizmor, and
parsed to hold the rules the README promises: triggers, least privilege, concurrency,
pinned actions, no self-hosted runner on pull requests, no expressions in scripts."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.support import REPO_ROOT
from tests.support.project_repo import ProjectRepo, isolated_env

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


def test_the_workflows_exist():
    assert set(all_workflows()) == {
        "ci.yml",
        "nightly.yml",
        "benchmarks-pr.yml",
        "benchmarks-pr-comment.yml",
        "bisect.yml",
        "floors.yml",
        "weekly.yml",
        "releases.yml",
    }


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


def test_the_only_accepted_finding_is_the_comment_workflows_trigger():
    ignores = [
        (path.name, line.strip())
        for path in sorted(WORKFLOWS.glob("*.yml"))
        for line in path.read_text().splitlines()
        if "zizmor: ignore" in line
    ]
    assert len(ignores) == 1
    ((name, line),) = ignores
    assert name == "benchmarks-pr-comment.yml" and line.startswith("workflow_run:")
    assert "zizmor: ignore[dangerous-triggers] -- never checks out or runs PR code" in line


def test_the_comment_workflow_never_runs_the_pull_requests_code():
    (job,) = load("benchmarks-pr-comment.yml")["jobs"].values()
    for step in job["steps"]:
        if step.get("uses", "").startswith("actions/checkout@"):
            assert "ref" not in step.get("with", {}) and "repository" not in step.get("with", {})
    runs = [step["run"] for step in job["steps"] if "run" in step]
    assert runs == ["python3 -m tools.pr_comment gate-summary"]
    assert job["steps"][-1]["env"]["RUN_HEAD_SHA"] == "${{ github.event.workflow_run.head_sha }}"


def test_issues_are_filed_by_a_job_that_runs_no_benchmark_code():
    job = load("nightly.yml")["jobs"]["file-issues"]
    assert job["permissions"] == {"contents": "read", "issues": "write"}
    runs = [step["run"] for step in job["steps"] if "run" in step]
    assert runs and all("python3 -m tools.file_issues" in run for run in runs)
    assert not [run for run in runs if re.search(r"\.venv|dev\.sh|pip |asv ", run)]


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
    assert set(flows["nightly.yml"]["on"]) == {"schedule", "workflow_dispatch", "workflow_call"}
    assert set(flows["weekly.yml"]["on"]) == {"schedule", "workflow_dispatch"}
    assert flows["weekly.yml"]["on"]["schedule"][0]["cron"]
    assert flows["nightly.yml"]["on"]["schedule"][0]["cron"]
    assert set(flows["benchmarks-pr.yml"]["on"]) == {"pull_request", "workflow_dispatch"}
    assert "labeled" in flows["benchmarks-pr.yml"]["on"]["pull_request"]["types"]
    assert "'run-benchmarks'" in flows["benchmarks-pr.yml"]["jobs"]["gate"]["if"]
    assert set(flows["bisect.yml"]["on"]) == {"workflow_dispatch"}
    assert set(flows["releases.yml"]["on"]) == {"workflow_dispatch", "workflow_call"}
    assert flows["weekly.yml"]["jobs"]["releases"]["uses"] == "./.github/workflows/releases.yml"
    assert flows["benchmarks-pr-comment.yml"]["on"]["workflow_run"] == {
        "workflows": ["benchmarks-pr"],
        "types": ["completed"],
    }
    assert {"good", "bad", "benchmark"} <= set(
        flows["bisect.yml"]["on"]["workflow_dispatch"]["inputs"]
    )
    for name, flow in flows.items():
        assert "pull_request_target" not in flow["on"], name


def test_least_privilege():
    writers = {
        ("nightly.yml", "push"): {"contents": "write"},
        ("nightly.yml", "push-triage"): {"contents": "write"},
        ("nightly.yml", "file-issues"): {"issues": "write"},
        ("nightly.yml", "deploy"): {"pages": "write", "id-token": "write"},
        ("benchmarks-pr-comment.yml", "comment"): {"pull-requests": "write"},
        ("floors.yml", "push"): {"contents": "write"},
        ("releases.yml", "push"): {"contents": "write"},
        ("releases.yml", "file-issues"): {"issues": "write"},
        # Calls nightly.yml, floors.yml and releases.yml, whose jobs ask for their own (above).
        ("weekly.yml", "sweeps"): {
            "contents": "write",
            "issues": "write",
            "pages": "write",
            "id-token": "write",
        },
        ("weekly.yml", "floors"): {"contents": "write"},
        ("weekly.yml", "releases"): {"contents": "write", "issues": "write"},
    }
    for name, flow in all_workflows().items():
        assert flow["permissions"] == {"contents": "read"}, name
        for job_name, job in flow["jobs"].items():
            granted = job.get("permissions", {})
            expected = writers.get((name, job_name), {})
            assert {k: v for k, v in granted.items() if v != "read"} == expected, (name, job_name)


def test_no_token_is_left_in_git_config_for_later_steps():
    for name, flow in all_workflows().items():
        for step in steps(flow):
            if step.get("uses", "").startswith("actions/checkout@"):
                assert step.get("with", {}).get("persist-credentials") is False, (name, step)
    # zizmor's own check (its auditor persona, which reports even low-confidence findings).
    done = subprocess.run(
        [str(BIN / "zizmor"), "--offline", "--persona", "auditor", str(WORKFLOWS)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "artipacked" not in done.stdout + done.stderr


@pytest.mark.parametrize(
    ("name", "measuring", "pushing"),
    [
        ("nightly.yml", "benchmark", "push"),
        ("nightly.yml", "triage", "push-triage"),
        ("floors.yml", "measure", "push"),
    ],
)
def test_the_job_that_can_push_runs_no_project_code(name, measuring, pushing):
    """The measuring job runs every benchmarked commit's code with a read-only token; the
    one job that can write installs nothing and runs the standard-library push alone."""
    jobs = load(name)["jobs"]
    assert jobs[measuring]["permissions"] == {"contents": "read"}
    assert jobs[pushing]["needs"] == measuring
    push = jobs[pushing]
    runs = [step["run"] for step in push["steps"] if "run" in step]
    assert runs and all("python3 -m tools.push_results" in run for run in runs)
    assert not [run for run in runs if re.search(r"\.venv|dev\.sh|pip |asv ", run)]
    uses = [step["uses"].split("@")[0] for step in push["steps"] if "uses" in step]
    # and uploads the list of what landed (the filing reads it), which runs nothing
    assert uses[:2] == ["actions/checkout", "actions/download-artifact"]
    assert set(uses[2:]) <= {"actions/upload-artifact"}


def test_pages_are_built_in_one_job_and_deployed_in_another():
    jobs = load("nightly.yml")["jobs"]
    uses = {job: [step.get("uses", "") for step in jobs[job]["steps"]] for job in jobs}
    assert any(u.startswith("actions/upload-pages-artifact@") for u in uses["publish"])
    assert [u.split("@")[0] for u in uses["deploy"]] == ["actions/deploy-pages"]
    assert jobs["deploy"]["environment"]["name"] == "github-pages"
    assert jobs["publish"]["needs"] == "push" and jobs["deploy"]["needs"] == "publish"


def test_concurrency_is_set_and_nightlies_do_not_race():
    for name, flow in all_workflows().items():
        assert flow["concurrency"]["group"], name
    nightly = load("nightly.yml")["concurrency"]
    assert nightly == {"group": "nightly", "cancel-in-progress": False}


def test_the_weekly_workflow_runs_the_sweeps_through_the_nightly_then_the_floors():
    jobs = load("weekly.yml")["jobs"]
    job = jobs["sweeps"]
    assert jobs["floors"]["uses"] == "./.github/workflows/floors.yml"
    assert jobs["floors"]["needs"] == "sweeps"
    assert job["uses"] == "./.github/workflows/nightly.yml"
    assert job["with"]["tier"] == "weekly"
    nightly = load("nightly.yml")
    assert set(nightly["on"]["workflow_call"]["inputs"]) == {"tier", "max-commits"}
    benchmark = nightly["jobs"]["benchmark"]
    assert benchmark["env"]["TIER"] == "${{ inputs.tier || 'nightly' }}"
    runs = [
        step.get("run", "") for step in benchmark["steps"] if "tools.nightly" in step.get("run", "")
    ]
    assert len(runs) == 1 and '--tier "$TIER"' in runs[0]


def test_every_action_is_pinned_to_a_commit():
    for name, flow in all_workflows().items():
        for step in steps(flow):
            if "uses" in step:
                assert PINNED.match(step["uses"]), (name, step["uses"])


HOSTED_LABEL = re.compile(r"^(ubuntu|windows|macos)-[\w.-]+$")


def runner_labels(job: dict) -> tuple[set[str], set[str]]:
    """Every runner label ``job`` can resolve to, and what cannot be known statically (a
    variable, an input, an event field, a runner group), through its matrix and any
    expression in ``runs-on``."""
    runs_on = job.get("runs-on", "")
    unknown = set()
    if isinstance(runs_on, dict):
        unknown |= {f"group {runs_on['group']}"} if "group" in runs_on else set()
        runs_on = runs_on.get("labels", [])
    text = yaml.safe_dump(runs_on)
    for context in re.findall(r"\b(vars|inputs|github|env|secrets)\.[\w.-]+", text):
        unknown.add(f"{context}.*")
    if "matrix." in text:
        text += yaml.safe_dump(job.get("strategy", {}).get("matrix", {}))
        unknown |= {
            f"{context}.*"
            for context in re.findall(
                r"\b(inputs|github|env|secrets)\.", yaml.safe_dump(job.get("strategy", {}))
            )
        }
    labels = set()
    for literal in re.findall(r"[\w.-]+", text.replace("${{", " ").replace("}}", " ")):
        if HOSTED_LABEL.match(literal) or literal in ("self-hosted", "linux", "gpu", "x64"):
            labels.add(literal)
    if "self-hosted" in text:
        labels.add("self-hosted")
    return labels, unknown


def self_hosted_reachable(flow: dict) -> list[str]:
    """The jobs of a workflow triggered by pull requests that can land on anything but a
    GitHub-hosted runner."""
    if not {"pull_request", "pull_request_target"} & set(flow.get("on") or {}):
        return []
    reachable = []
    for job_name, job in flow["jobs"].items():
        labels, unknown = runner_labels(job)
        if unknown or not labels or any(not HOSTED_LABEL.match(label) for label in labels):
            reachable.append(job_name)
    return reachable


BAD_RUNNERS = {
    "a self-hosted label": "runs-on: [self-hosted, linux, gpu]",
    "a matrix entry": (
        "runs-on: ${{ matrix.runner }}\n    strategy:\n      matrix:\n"
        "        runner: [ubuntu-24.04, self-hosted]"
    ),
    "a fromJSON matrix": (
        "runs-on: ${{ matrix.m.on }}\n    strategy:\n      matrix:\n"
        "        m: >-\n"
        '          ${{ fromJSON(\'[{"on": ["self-hosted", "gpu"]}]\') }}'
    ),
    "an expression": (
        "runs-on: ${{ github.event_name == 'push' && 'self-hosted' || 'ubuntu-24.04' }}"
    ),
    "a repository variable": "runs-on: ${{ vars.RUNNER }}",
    "a runner group": "runs-on:\n      group: gpu-runners",
}


@pytest.mark.parametrize("how", sorted(BAD_RUNNERS))
def test_the_rule_catches_a_pull_request_job_that_can_reach_a_self_hosted_runner(how):
    flow = yaml.safe_load(
        "on: [pull_request]\njobs:\n  j:\n    " + BAD_RUNNERS[how] + "\n    steps: []\n"
    )
    flow["on"] = flow.pop(True)
    assert self_hosted_reachable(flow) == ["j"]
    hosted = yaml.safe_load("on: [pull_request]\njobs:\n  j:\n    runs-on: ubuntu-24.04\n")
    hosted["on"] = hosted.pop(True)
    assert self_hosted_reachable(hosted) == []


def test_no_pull_request_workflow_can_reach_a_self_hosted_runner():
    for name, flow in all_workflows().items():
        assert self_hosted_reachable(flow) == [], name


def test_self_hosted_rule_sees_the_gpu_jobs():
    """The rule is not vacuous here: the nightly and bisect jobs can reach the GPU runner."""
    assert "self-hosted" in runner_labels(load("nightly.yml")["jobs"]["benchmark"])[0]
    assert "self-hosted" in runner_labels(load("bisect.yml")["jobs"]["bisect"])[0]


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


@pytest.mark.parametrize(
    "tool",
    [
        "nightly",
        "push_results",
        "publish",
        "pr_gate",
        "bisect_slowdown",
        "triage",
        "file_issues",
        "pr_comment",
        "floors",
    ],
)
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


@pytest.mark.parametrize("name", ["nightly.yml", "benchmarks-pr.yml", "bisect.yml"])
def test_benchmark_jobs_install_jemalloc_on_every_machine_before_benchmarking(name):
    """The tools refuse to start asv without jemalloc, the benchmark processes' allocator:
    on the GPU machines as well, so the step has no condition."""
    flow_steps = list(steps(load(name)))
    installs = [
        i
        for i, step in enumerate(flow_steps)
        if re.search(r"apt-get install .*libjemalloc2", step.get("run", ""))
    ]
    benchmarks = [i for i, step in enumerate(flow_steps) if "-m tools." in step.get("run", "")]
    assert installs and installs[0] < benchmarks[0]
    assert "if" not in flow_steps[installs[0]]


def test_the_pr_gate_compares_with_the_merge_commits_first_parent(tmp_path):
    """On a pull_request run HEAD is the PR's merge commit; its first parent is the base
    branch as it is now, while pull_request.base.sha can lag far behind it."""
    (gate,) = [s for s in steps(load("benchmarks-pr.yml")) if "tools.pr_gate" in s.get("run", "")]
    repo = ProjectRepo(tmp_path / "repo", isolated_env(tmp_path / "home"))
    repo.path.mkdir()
    repo.git("init", "-q", "-b", "main")
    stale_base = repo.commit("main, when the PR was opened")
    repo.git("checkout", "-q", "-b", "pr")
    repo.commit("the PR's change")
    repo.git("checkout", "-q", "main")
    main_now = repo.commit("main's own later change")
    repo.git("merge", "-q", "--no-ff", "-m", "GitHub's test merge", "pr")
    stub = repo.path / ".venv" / "bin" / "python"
    stub.parent.mkdir(parents=True)
    stub.write_text('#!/bin/sh\ngit rev-parse "$3" > resolved-base\n')  # -m tools.pr_gate BASE
    stub.chmod(0o755)
    for event, base, expected in (
        ("pull_request", "", main_now),
        ("workflow_dispatch", stale_base, stale_base),
    ):
        env = {**repo.env, "EVENT": event, "DISPATCHED_BASE": base}
        subprocess.run(["bash", "-e", "-c", gate["run"]], cwd=repo.path, env=env, check=True)
        assert (repo.path / "resolved-base").read_text().strip() == expected, event


@pytest.mark.parametrize("name", ["nightly.yml", "releases.yml"])
def test_issues_are_filed_only_for_machines_whose_results_landed(name):
    """Each report stays in its own job's folder, bound to that machine on the command
    line, and only the machines the push landed are filed."""
    jobs = load(name)["jobs"]
    push = jobs["push"]
    uploads = [s for s in push["steps"] if s.get("uses", "").startswith("actions/upload-artifact")]
    assert uploads and uploads[0]["with"]["name"] == "landed" and uploads[0]["if"] == "always()"
    assert "--landed landed/landed.txt" in " ".join(s.get("run", "") for s in push["steps"])
    filing = jobs["file-issues"]
    downloads = [s for s in filing["steps"] if "download-artifact" in s.get("uses", "")]
    assert not any(s["with"].get("merge-multiple") for s in downloads)
    script = " ".join(s.get("run", "") for s in filing["steps"])
    assert "--landed landed/landed.txt" in script and re.search(r'"\$\w+=', script)
    assert "push" in ([filing["needs"]] if isinstance(filing["needs"], str) else filing["needs"])


def test_a_sharded_machine_triages_once_every_shard_has_landed():
    """A whole machine triages in its own job; the sharded one in a job after the push, so
    its history holds every shard's rows of the night, and its issues wait for it."""
    jobs = load("nightly.yml")["jobs"]
    matrix = jobs["benchmark"]["strategy"]["matrix"]["machine"]
    machines = [
        m for listed in re.findall(r"'(\[.*?\])'", matrix, re.S) for m in json.loads(listed)
    ]
    assert machines and all(m["triage"] == (m["shard"] == "") for m in machines)
    sharded = {m["name"] for m in machines if m["shard"]}
    triage = jobs["triage"]
    assert sharded == {triage["env"]["MACHINE"]}
    assert triage["needs"] == "push" and triage["permissions"] == {"contents": "read"}
    (run,) = [s["run"] for s in triage["steps"] if "tools.triage" in s.get("run", "")]
    assert '--machine "$MACHINE"' in run and '--outbox "outbox/$MACHINE-$PART"' in run
    uploads = {
        s["with"]["name"]: s["with"]["path"]
        for s in triage["steps"]
        if "with" in s and "name" in s["with"]
    }
    assert (
        uploads["triage-outbox-gha-cpu"]
        == "outbox/gha-cpu-triage"
        == f"outbox/gha-cpu-{triage['env']['PART']}"
    )
    assert uploads["triage-report-gha-cpu"] == "reports"
    pushed = " ".join(s.get("with", {}).get("pattern", "") for s in jobs["push-triage"]["steps"])
    assert "triage-outbox-*" in pushed
    assert set(jobs["file-issues"]["needs"]) == {"push", "triage"}


def test_no_push_waits_in_a_concurrency_group():
    """GitHub keeps one pending job per group and cancels it for the next: a third push
    queued behind a running one would never land its outbox. Pushes race instead, each
    replaying its files onto the tip another landed (tools/_lib/store/branch.py)."""
    for name, flow in all_workflows().items():
        for job_name, job in flow["jobs"].items():
            if "push_results" in " ".join(s.get("run", "") for s in job.get("steps", [])):
                assert "concurrency" not in job, f"{name}: {job_name}"
