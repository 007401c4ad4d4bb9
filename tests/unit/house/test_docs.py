"""The documentation against the code: the README stays a front page, every environment
variable and every command option the code has is on its reference page, every doc a
comment points to (and the section it names) exists, every relative link resolves, and no
comment carries a date, an issue number or a run's history; and no module or function
outgrows the house's sizes."""

from __future__ import annotations

import ast
import io
import re
import subprocess
import sys
import tokenize
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.support import REPO_ROOT

DOCS = REPO_ROOT / "docs"
COMMANDS = [
    "bench",
    "nightly",
    "triage",
    "file_issues",
    "push_results",
    "publish",
    "pr_gate",
    "pr_comment",
    "bisect_slowdown",
    "floors",
    "releases",
]
STUDIES = [
    "noise_study",
    "row_seconds",
    "history_scale",
    "estimates",
    "depth_power",
    "isa_cap",
    "detection_power",
    "host_speed",
    "antagonist_alone",
    "duet",
    "process_noise",
    "tier_time",
    "timer_crosscheck",
    "count_repeatability",
    "count_perturbation",
    "count_floors",
    "late_faults",
    "launch_cost",
    "commit_overhead",
    "gpu_check",
]


def tracked(*patterns: str) -> list:
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", *patterns],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return [REPO_ROOT / name for name in listed.stdout.split() if (REPO_ROOT / name).is_file()]


CODE = [
    path
    for path in tracked("*.py", "*.sh", "*.yml", "*.json", ".ci/*")
    if "docs/studies" not in str(path) and path.name != "published_benchmarks.json"
]


def test_the_readme_is_a_front_page():
    assert len((REPO_ROOT / "README.md").read_bytes()) <= 6 * 1024


def test_every_environment_variable_the_code_reads_is_on_its_reference_page():
    named = {m for path in CODE for m in re.findall(r"TENSOROPS_[A-Z_]+", path.read_text())}
    page = (DOCS / "reference" / "environment.md").read_text()
    assert len(named) >= 8 and not [name for name in sorted(named) if f"`{name}`" not in page]


def options(module: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-m", module, "--help"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    listed = done.stdout.split("\noptions:", 1)[-1].split("\n\n", 1)[0]  # not the epilog
    return set(re.findall(r"(?<![\w-])(--[a-z][\w-]*)", listed)) - {"--help"}


def test_every_command_option_is_on_the_commands_page():
    page = (DOCS / "reference" / "commands.md").read_text()
    sections = {
        title: body for title, body in re.findall(r"^## (\S+)\n(.*?)(?=^## |\Z)", page, re.M | re.S)
    }
    studies = sections["Studies"]
    modules = [f"tools.{c}" for c in COMMANDS] + [f"tools.studies.{s}" for s in STUDIES]
    with ThreadPoolExecutor(4) as pool:
        found = dict(zip(modules, pool.map(options, modules), strict=True))
    missing = []
    for module, flags in found.items():
        name = module.rsplit(".", 1)[-1]
        body = (
            sections.get(name)
            if name in COMMANDS
            else next((line for line in studies.splitlines() if line.startswith(f"| `{name}`")), "")
        )
        missing += [f"{name} {flag}" for flag in sorted(flags) if flag not in (body or "")]
    assert missing == []


def headings(path) -> set[str]:
    return {
        line.lstrip("#").strip().lower()
        for line in path.read_text().splitlines()
        if line.startswith("#")
    }


def test_every_doc_a_comment_points_to_exists_with_the_section_it_names():
    wrong = []
    for path in CODE:
        text = " ".join(path.read_text().split())
        for doc, section in re.findall(r'(docs/[\w/.-]+\.md)(?:, "([^"]+)")?', text):
            target = REPO_ROOT / doc
            if not target.exists():
                wrong.append(f"{path.name}: {doc}")
            elif section and section.lower() not in headings(target):
                wrong.append(f"{path.name}: {doc}, {section!r}")
    assert wrong == []


@pytest.mark.parametrize(
    "page",
    sorted(p.relative_to(REPO_ROOT) for p in [REPO_ROOT / "README.md", *DOCS.rglob("*.md")]),
    ids=str,
)
def test_every_relative_link_resolves(page):
    path = REPO_ROOT / page
    for target in re.findall(r"\]\((?!https?:|#|mailto:)([^)#]+)", path.read_text()):
        assert (path.parent / target).exists(), f"{page}: {target}"


def comments(path) -> list[tuple[int, str]]:
    """A file's comments (and a Python file's docstrings), with their first line."""
    text = path.read_text()
    if path.suffix == ".py":
        found = [
            (t.start[0], t.string)
            for t in tokenize.generate_tokens(io.StringIO(text).readline)
            if t.type == tokenize.COMMENT
        ]
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef)):
                doc = ast.get_docstring(node, clean=False)
                if doc and node.body:
                    found.append((node.body[0].lineno, doc))
        return found
    marker = "//" if path.suffix == ".json" else "#"
    return [
        (n, line.split(marker, 1)[1])
        for n, line in enumerate(text.splitlines(), 1)
        if marker in line
    ]


def test_no_comment_carries_a_date_an_issue_number_or_a_run():
    diary = re.compile(r"\b20\d\d-\d\d-\d\d\b|[Ii]ssue \d+|#\d{2,}\b|\bCI run\b|\bthis session\b")
    found = [
        f"{path.relative_to(REPO_ROOT)}:{number}: {' '.join(text.split())[:80]}"
        for path in CODE
        for number, text in comments(path)
        if diary.search(text)
    ]
    assert found == []


def test_no_command_imports_another():
    """The commands a workflow or a person runs (tools/*.py, tools/studies/*.py, with the
    harness's programs asv and the tools start) import the private library (and a study
    its study-only helpers), never each other."""
    programs = [
        *(REPO_ROOT / "tools").glob("*.py"),
        *(REPO_ROOT / "tools" / "studies").glob("*.py"),
    ]
    # A command runs as a program; the studies' own helpers beside them do not.
    runnable = [p for p in programs if '__name__ == "__main__"' in p.read_text()]
    commands = {f"tools.{p.stem}" for p in runnable if p.parent.name == "tools"} | {
        f"tools.studies.{p.stem}" for p in runnable if p.parent.name == "studies"
    }
    crossing = []
    for path in programs:
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            crossing += [f"{path.name}: {n}" for n in names if n in commands]
    assert len(commands) > 20 and crossing == []


# A module does one job and a function one step: beyond these, split (the house's sizes).
MODULE_LINES = 300
FUNCTION_LINES = 50


def test_no_module_or_function_outgrows_the_house():
    """No Python file outside the tests over 300 lines, and no function over 50."""
    sources = [
        path
        for path in tracked("*.py")
        if path.relative_to(REPO_ROOT).parts[0] not in ("tests", "docs")
    ]
    too_long = []
    for path in sources:
        text = path.read_text()
        name = path.relative_to(REPO_ROOT)
        if len(text.splitlines()) > MODULE_LINES:
            too_long.append(f"{name}: {len(text.splitlines())} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = node.end_lineno - node.lineno + 1
                if lines > FUNCTION_LINES:
                    too_long.append(f"{name}: {node.name} is {lines} lines")
    assert len(sources) > 50 and too_long == []
