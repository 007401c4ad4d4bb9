"""What a change touches: lines placed in the function whose body holds them, or at module
level; files classed by what they can reach; the whole read from a real git diff."""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

import pytest

from tools._lib.reach.changes import Reach, changed_lines, of_path, placed, touched

SOURCE = textwrap.dedent(
    '''\
    """A module."""
    import torch

    SCALE = 2.0  # a constant


    def helper(x):
        """Shared."""
        return x * SCALE


    @register("op", "a")
    def variant_a(x,
                  y=SCALE):
        # a comment in a body
        return helper(x) + y


    class Holder:
        size = 3

        def method(self):
            def inner():
                return 1
            return inner()


    def one_liner(x): return x + 1
    square = lambda x: x * x
    '''
)


def line_of(text: str) -> int:
    return next(n for n, line in enumerate(SOURCE.splitlines(), 1) if text in line)


@pytest.mark.parametrize(
    "text, scopes",
    [
        ('"""Shared."""', {"helper"}),
        ("return x * SCALE", {"helper"}),
        ("# a comment in a body", {"variant_a"}),
        ("return helper(x) + y", {"variant_a"}),
        ('@register("op", "a")', {""}),  # a decorator runs at import
        ("y=SCALE):", {""}),  # a default too
        ("size = 3", {""}),  # a class body
        ("return 1", {"Holder.method.<locals>.inner"}),
        ("def inner():", {"Holder.method"}),
        ("return inner()", {"Holder.method"}),
        ("def one_liner", {"one_liner", ""}),
        ("square = lambda", {"<lambda>", ""}),
        ("SCALE = 2.0", {""}),
        ("import torch", {""}),
    ],
)
def test_a_line_is_placed_in_the_function_whose_body_holds_it(text, scopes):
    assert placed(SOURCE, {line_of(text)}) == scopes


def test_a_comment_or_blank_line_at_module_level_changes_no_code():
    blank = line_of("import torch") + 1
    assert placed(SOURCE, {blank}) == set()
    assert placed("# only a comment\nX = 1\n", {1}) == set()
    assert placed("# only a comment\nX = 1\n", {1, 2}) == {""}


def test_a_string_over_several_lines_is_code_on_each():
    source = 'TEXT = """one\n# not a comment\n"""\n'
    assert placed(source, {2}) == {""}


def test_the_lines_a_diff_takes_out_and_puts_in():
    diff = "@@ -3,2 +3 @@\n-a\n-b\n+c\n@@ -10,0 +10,2 @@\n+d\n+e\n@@ -20 +21,0 @@\n-f\n"
    assert changed_lines(diff) == ({3, 4, 20}, {3, 10, 11})


@pytest.mark.parametrize(
    "path, reach",
    [
        ("README.md", Reach.NO_ROW),
        ("docs/explanation/continuous.md", Reach.NO_ROW),
        ("tests/unit/reach/test_changes.py", Reach.NO_ROW),
        (".github/workflows/nightly.yml", Reach.NO_ROW),
        ("tools/studies/plants.py", Reach.NO_ROW),
        ("benchmarks/_harness/prepare.py", Reach.EVERY_ROW),
        ("benchmarks/bench_matmul.py", Reach.EVERY_ROW),
        ("asv.conf.json", Reach.EVERY_ROW),
        ("requirements/dev.txt", Reach.EVERY_ROW),
        ("pyproject.toml", Reach.EVERY_ROW),
        ("src/tensorops/data.json", Reach.EVERY_ROW),
        ("tools/_lib/asv/run.py", Reach.EVERY_ROW),
        ("setup.cfg", Reach.EVERY_ROW),
    ],
)
def test_a_file_outside_the_librarys_source_reaches_no_row_or_every_row(path, reach):
    assert of_path(path)[0] == reach
    assert of_path("src/tensorops/matmul.py") is None


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True)
    return done.stdout.strip()


@pytest.fixture
def repo(tmp_path) -> Path:
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "config", "user.email", "t@example.com")
    git(tmp_path, "config", "user.name", "t")
    library = tmp_path / "src" / "tensorops"
    library.mkdir(parents=True)
    (library / "ops.py").write_text(SOURCE)
    (library / "gone.py").write_text("def f():\n    return 1\n")
    (tmp_path / "README.md").write_text("hello\n")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "base")
    return tmp_path


def commit(repo: Path) -> tuple[str, str]:
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "head")
    return git(repo, "rev-parse", "HEAD~1"), git(repo, "rev-parse", "HEAD")


def test_a_change_read_from_git_file_by_file(repo):
    ops = repo / "src" / "tensorops" / "ops.py"
    ops.write_text(
        SOURCE.replace("return x * SCALE", "return x * SCALE * 1.0")
        .replace("# a comment in a body\n", "")
        .replace("SCALE = 2.0  # a constant", "SCALE = 2.0  # a constant, said again")
    )
    (repo / "src" / "tensorops" / "gone.py").unlink()
    (repo / "src" / "tensorops" / "new.py").write_text("def g():\n    return 2\n")
    (repo / "README.md").write_text("hello again\n")
    found = {(t.name, t.reach) for t in touched(repo, *commit(repo))}
    assert found == {
        ("README.md", Reach.NO_ROW),
        ("src/tensorops/gone.py", Reach.MODULE),
        ("src/tensorops/new.py", Reach.NO_ROW),
        ("src/tensorops/ops.py: helper", Reach.FUNCTION),
        ("src/tensorops/ops.py: variant_a", Reach.FUNCTION),
        ("src/tensorops/ops.py", Reach.MODULE),  # the constant's line holds code
    }


def test_a_comment_added_above_a_function_touches_nothing_of_the_library(repo):
    ops = repo / "src" / "tensorops" / "ops.py"
    ops.write_text(SOURCE.replace("def helper(x):", "# says what helper does\ndef helper(x):"))
    (found,) = touched(repo, *commit(repo))
    assert (found.name, found.reach) == ("src/tensorops/ops.py", Reach.NO_ROW)


def test_a_file_that_is_not_python_at_the_head_touches_its_whole_module(repo):
    (repo / "src" / "tensorops" / "ops.py").write_text(SOURCE + "def broken(:\n")
    (found,) = touched(repo, *commit(repo))
    assert found.reach == Reach.MODULE and "not Python" in found.why


def test_a_renamed_or_deleted_variant_touches_its_module_where_its_rows_are_selected(repo):
    # A variant's def and decorator lines run at import: a rename (or a deleted variant)
    # selects every row that imported the module, whichever name the map knows it by.
    ops = repo / "src" / "tensorops" / "ops.py"
    ops.write_text(SOURCE.replace("def variant_a(x,", "def variant_renamed(x,"))
    found = {(t.name, t.reach) for t in touched(repo, *commit(repo))}
    assert found == {("src/tensorops/ops.py", Reach.MODULE)}

    start = SOURCE.index('@register("op", "a")')
    deleted = SOURCE[:start] + SOURCE[SOURCE.index("class Holder:") :]
    ops.write_text(deleted)  # from the renamed one: the variant deleted
    found = {(t.name, t.reach) for t in touched(repo, *commit(repo))}
    assert found == {
        ("src/tensorops/ops.py", Reach.MODULE),
        ("src/tensorops/ops.py: variant_renamed", Reach.FUNCTION),  # its body, at the base
    }
