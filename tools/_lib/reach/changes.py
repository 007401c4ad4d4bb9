"""What a change touches: the diff from the base to the head, read file by file as what a
benchmark row could reach of it (docs/explanation/continuous.md, "What a change can reach").

- A file no row runs (docs, tests, workflows, the studies): reaches no row.
- A file of the library (``src/tensorops/*.py``): each changed line is placed in the
  function whose body holds it (its qualified name, as CPython names the code object) or,
  outside every function body (definitions, decorators, defaults, class bodies, constants,
  imports), at module level; a line that is only a comment or blank at module level changes
  no code. Lines taken out are placed in the base's source, lines put in in the head's.
- Anything else (the harness, the suites, asv.conf.json, requirements, the build, the tools
  that run asv): shapes every row.
"""

from __future__ import annotations

import ast
import enum
import io
import re
import subprocess
import tokenize
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path

from tools._lib.base.git import git

LIBRARY = "src/tensorops/"
# Files no benchmark row runs or reads, and why: what a pull request changing only these
# measures is nothing.
REACHES_NO_ROW = (
    ("docs/*", "documentation"),
    ("tests/*", "the tests: no benchmark row runs them"),
    (".github/*", "a workflow: no benchmark row runs it"),
    (".ci/*", "the CI script: no benchmark row runs it"),
    ("tools/studies/*", "a study script: no benchmark row runs it"),
    ("*.md", "documentation"),
    ("LICENSE*", "the licence"),
    (".gitignore", "git's ignore list"),
)
# Anything else shapes every row, each with its reason; the first match wins.
EVERY_ROW = (
    ("benchmarks/*", "the suites and their harness shape every row"),
    ("asv.conf.json", "asv's configuration shapes every row"),
    ("requirements/*", "the requirements install what every row runs"),
    ("pyproject.toml", "how the library is built and installed"),
    ("src/*", "a file of the library that is not its Python source (read by any row)"),
    ("tools/*", "the tools run asv and the measurements of every row"),
    ("*", "not a file whose reach is known: every row, to be safe"),
)
HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", re.M)


class Reach(enum.StrEnum):
    NO_ROW = "no row"
    FUNCTION = "function"  # the rows that ran this function
    MODULE = "module"  # the rows that imported this module
    EVERY_ROW = "every row"


@dataclass(frozen=True)
class Touched:
    """One thing a change touched: a file, or a function of a library file (``function``,
    its qualified name), and what it can reach, with why."""

    path: str
    reach: Reach
    why: str
    function: str = ""

    @property
    def name(self) -> str:
        return f"{self.path}: {self.function}" if self.function else self.path

    @property
    def module(self) -> str:
        """The path as the reach map names the library's files (``tensorops/x.py``)."""
        return self.path.removeprefix("src/")


def of_path(path: str) -> tuple[Reach, str] | None:
    """What a file that is not library source reaches; None for library source."""
    if path.startswith(LIBRARY) and path.endswith(".py"):
        return None
    for pattern, why in REACHES_NO_ROW:
        if fnmatch(path, pattern):
            return Reach.NO_ROW, why
    for pattern, why in EVERY_ROW:
        if fnmatch(path, pattern):
            return Reach.EVERY_ROW, why
    raise AssertionError("the last pattern matches every path")


def code_lines(source: str) -> set[int]:
    """The lines that hold code: any token but a comment or a line break (a string over
    several lines holds all of them)."""
    lines: set[int] = set()
    quiet = (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT)
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type not in quiet and token.type != tokenize.ENDMARKER:
            lines.update(range(token.start[0], token.end[0] + 1))
    return lines


@dataclass(frozen=True)
class Scope:
    """A function's body, or a lambda, by lines, and its qualified name."""

    first: int
    last: int
    qualname: str


def scopes(source: str) -> tuple[list[Scope], dict[int, list[str]]]:
    """Every function body and lambda of ``source``, and the lines each shares with its
    enclosing scope (a one-line ``def``'s, a lambda's), with that scope's qualified name
    ("" for module level). A ``def``'s decorators and defaults lie outside its body, so
    they fall to the enclosing scope by their place alone."""
    found: list[Scope] = []
    shared: dict[int, list[str]] = {}

    def visit(node: ast.AST, prefix: str, enclosing: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                last = child.end_lineno or child.lineno
                if isinstance(child, ast.Lambda):
                    qualname, first, sharing = prefix + "<lambda>", child.lineno, last
                else:
                    qualname = prefix + child.name
                    parts = [child.args, child.returns] if child.returns else [child.args]
                    signature = max(
                        [child.lineno]
                        + [
                            getattr(n, "end_lineno", None) or child.lineno
                            for part in parts
                            for n in ast.walk(part)
                        ]
                    )
                    # The body starts after the signature (comments before its first
                    # statement included); a one-line def shares its line.
                    shares = child.body[0].lineno == signature
                    first, sharing = (signature, signature) if shares else (signature + 1, 0)
                for line in range(first, sharing + 1):
                    shared.setdefault(line, []).append(enclosing)
                found.append(Scope(first, last, qualname))
                visit(child, qualname + ".<locals>.", qualname)
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".", enclosing)
            else:
                visit(child, prefix, enclosing)

    visit(ast.parse(source), "", "")
    return found, shared


def placed(source: str, lines: set[int]) -> set[str]:
    """The scopes the ``lines`` of ``source`` are in: qualified names of functions, ""
    for module level (a line that is only a comment or blank there changes no code)."""
    if not lines:
        return set()
    found, shared = scopes(source)
    code = code_lines(source)
    where: set[str] = set()
    for line in lines:
        inner = [s for s in found if s.first <= line <= s.last]
        if inner:
            where.add(max(inner, key=lambda s: (s.first, -s.last)).qualname)
        for name in shared.get(line, []) if inner else [""]:
            if name or line in code:
                where.add(name)
    return where


def changed_lines(diff: str) -> tuple[set[int], set[int]]:
    """The lines a unified diff (``-U0``) takes out of the old file and puts in the new."""
    old, new = set(), set()
    for match in HUNK.finditer(diff):
        start, count = int(match[1]), int(match[2] if match[2] is not None else 1)
        old.update(range(start, start + count))
        start, count = int(match[3]), int(match[4] if match[4] is not None else 1)
        new.update(range(start, start + count))
    return old, new


def source_at(repo: Path, commit: str, path: str) -> str | None:
    """The file as it is at ``commit``, byte for byte (lines counted as the diff counts
    them); None where it is not there."""
    done = subprocess.run(
        ["git", "show", f"{commit}:{path}"], cwd=repo, capture_output=True, check=False
    )
    return done.stdout.decode("utf-8", errors="replace") if done.returncode == 0 else None


def library_file(repo: Path, base: str, head: str, path: str) -> list[Touched]:
    """What a change to one library source file touches."""
    before, after = source_at(repo, base, path), source_at(repo, head, path)
    if after is None:
        return [Touched(path, Reach.MODULE, "a module deleted at the head")]
    if before is None:
        return [
            Touched(
                path,
                Reach.NO_ROW,
                "a module new at the head: reached only through changed code that uses it",
            )
        ]
    try:
        old, new = changed_lines(
            git("diff", "-U0", "--no-renames", base, head, "--", path, cwd=repo)
        )
        where = placed(before, old) | placed(after, new)
    except SyntaxError as error:
        return [
            Touched(path, Reach.MODULE, f"not Python at one side ({error.msg}): its whole module")
        ]
    touched = [
        Touched(path, Reach.FUNCTION, "a changed line in its body", function=name)
        for name in sorted(where - {""})
    ]
    if "" in where:
        touched.append(
            Touched(
                path,
                Reach.MODULE,
                "code outside any function body (a definition, decorator, default, class "
                "body, constant or import) runs when the module is imported",
            )
        )
    if not touched:
        touched.append(
            Touched(path, Reach.NO_ROW, "only comments or blank lines outside functions")
        )
    return touched


def touched(repo: Path, base: str, head: str) -> list[Touched]:
    """Everything the change from ``base`` to ``head`` touches, file by file."""
    listed = git("diff", "--name-only", "--no-renames", base, head, cwd=repo)
    found: list[Touched] = []
    for path in sorted(p for p in listed.splitlines() if p):
        kind = of_path(path)
        if kind is None:
            found += library_file(repo, base, head, path)
        else:
            found.append(Touched(path, *kind))
    return found
