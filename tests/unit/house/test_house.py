"""The house as a reader finds it: the tools' library in rooms whose imports run one way,
no two modules of one name, and every path a comment or a doc names is there."""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path

from tests.support import REPO_ROOT
from tests.unit.house.test_docs import tracked

LIB = REPO_ROOT / "tools" / "_lib"
# The rooms of tools/_lib, each on its floor: a module imports its own room and the rooms
# on lower floors only (README.md, "Layout").
FLOORS = {
    "base": 1,
    "github": 2,
    "asv": 2,
    "store": 3,
    "measure": 3,
    "reach": 3,
    "verdict": 4,
    "triage": 5,
}


def lib_imports(path: Path) -> set[str]:
    """The rooms of tools/_lib a module imports."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        modules = [a.name for a in node.names] if isinstance(node, ast.Import) else []
        if isinstance(node, ast.ImportFrom) and node.module:
            modules = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        found |= {m.split(".")[2] for m in modules if m.startswith("tools._lib.")}
    return found


def test_the_library_is_rooms_and_nothing_else():
    loose = [p.name for p in LIB.glob("*.py") if p.name != "__init__.py"]
    rooms = {p.name for p in LIB.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert loose == [] and rooms == set(FLOORS)


def test_no_module_imports_a_room_above_its_own():
    upward = []
    for path in LIB.rglob("*.py"):
        room = path.relative_to(LIB).parts[0]
        if room == "__init__.py":
            continue
        upward += [
            f"{path.relative_to(LIB)} -> {other}"
            for other in lib_imports(path)
            if other != room and FLOORS[other] >= FLOORS[room]
        ]
    assert upward == []


def test_a_rooms_face_hands_nothing_on():
    """A room's __init__.py is empty: importing a room imports no module of it (the jobs
    that hold a write token import a few modules with a bare interpreter)."""
    assert [p for p in LIB.glob("*/__init__.py") if p.read_text().strip()] == []


def test_no_two_modules_share_a_name():
    sources = [
        path
        for path in tracked("*.py")
        if path.name != "__init__.py"
        and path.relative_to(REPO_ROOT).parts[0] in ("src", "benchmarks", "tools")
    ]
    named = Counter(path.stem for path in sources)
    assert len(sources) > 80 and [name for name, count in named.items() if count > 1] == []


# A path of this repository as comments and docs name it: a file under one of its folders,
# or a module's attribute written after it (tools/_lib/measure/paired.Paired).
NAMED_PATH = re.compile(
    r"(?<![\w/.-])((?:src|benchmarks|tools|tests|docs|requirements|\.github|\.ci)/[\w./-]*?\w)"
    r"(?=\.[A-Z_a-z]\w*\b|[^\w/.*-]|$)"
)
SUFFIXES = (".py", ".md", ".yml", ".sh", ".json", ".txt", ".toml", "")
# Files a test writes into the repositories it makes, named where it writes them.
MADE_BY_TESTS = {
    "src/tensorops/_history",
    *(f"src/tensorops/{name}" for name in ("ops", "gone", "new", "data")),  # test_changes.py
}


def exists(named: str) -> bool:
    """The file or folder, or the module whose attribute the name ends with."""
    for candidate in (named, named.rsplit(".", 1)[0]):
        if any((REPO_ROOT / f"{candidate}{s}").exists() for s in SUFFIXES):
            return True
    return False


def test_every_path_a_comment_or_doc_names_is_there():
    """Dated studies are records, kept as written (they name the commit they measured)."""
    texts = [
        path
        for path in tracked("*.py", "*.md", "*.yml", "*.sh", "*.toml", ".ci/*")
        if not re.match(r"docs/studies/(20|data/)", str(path.relative_to(REPO_ROOT)))
    ]
    missing = [
        f"{path.relative_to(REPO_ROOT)}: {named}"
        for path in texts
        for named in NAMED_PATH.findall(path.read_text())
        if not exists(named) and named not in MADE_BY_TESTS
    ]
    assert len(texts) > 100 and sorted(set(missing)) == []
