"""tools/dev.sh's set-up of what the benchmark processes need, on a machine without jemalloc:
the system package when this user may install it, else Debian's package unpacked into the
venv, else one line naming the command to run and exit status 4. The system's commands are
stand-ins on PATH that say what they were asked."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support import REPO_ROOT

# Stand-ins: python3 finds jemalloc once "installed" is marked; apt-get installs (marks it)
# or downloads a package that dpkg-deb unpacks into a library file.
FAKES = {
    "python3": 'test -f "$FAKE/installed" && exit 0; exit 1',
    "apt-get": 'echo "apt-get $*" >>"$FAKE/log"\n'
    'case "$1" in install) touch "$FAKE/installed";; update) ;;\n'
    "download) touch libjemalloc2_5.3.0-1_amd64.deb;; esac",
    "dpkg-deb": 'mkdir -p "$3/usr/lib/x86_64-linux-gnu" && '
    'echo lib >"$3/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"',
    "valgrind": "exit 0",
}


@pytest.fixture
def project(tmp_path) -> Path:
    """A copy of the set-up's inputs, its venv already made (the stamp dev.sh checks)."""
    project = tmp_path / "project"
    (project / "tools").mkdir(parents=True)
    shutil.copy(REPO_ROOT / "tools" / "dev.sh", project / "tools" / "dev.sh")
    for name in ("requirements/dev.txt", "pyproject.toml"):
        (project / name).parent.mkdir(exist_ok=True)
        shutil.copy(REPO_ROOT / name, project / name)
    wanted = (project / "requirements" / "dev.txt").read_bytes() + (
        project / "pyproject.toml"
    ).read_bytes()
    (project / ".venv").mkdir()
    (project / ".venv" / ".installed").write_text(hashlib.sha256(wanted).hexdigest() + "\n")
    return project


def set_up(project: Path, tmp_path: Path, uid: int, commands: tuple[str, ...]):
    fake = tmp_path / "fake"
    fake.mkdir(exist_ok=True)
    for name in commands:
        (fake / name).write_text(f"#!/bin/sh\n{FAKES[name]}\n")
        (fake / name).chmod(0o755)
    (fake / "id").write_text(f"#!/bin/sh\necho {uid}\n")
    (fake / "id").chmod(0o755)
    basics = [
        "bash",
        "cat",
        "sha256sum",
        "cut",
        "mkdir",
        "mktemp",
        "find",
        "head",
        "cp",
        "rm",
        "dirname",
        "touch",
    ]
    tools = {name: shutil.which(name) for name in basics}
    base = tmp_path / "base"
    base.mkdir(exist_ok=True)
    for name, where in tools.items():
        if not (base / name).exists():
            (base / name).symlink_to(where)
    env = {"PATH": f"{fake}:{base}", "FAKE": str(fake), "HOME": str(tmp_path)}
    done = subprocess.run(
        [str(base / "bash"), "tools/dev.sh", "setup"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    log = (fake / "log").read_text() if (fake / "log").exists() else ""
    return done, log


def test_as_root_the_system_package_is_installed(project, tmp_path):
    done, log = set_up(project, tmp_path, 0, ("python3", "apt-get", "valgrind"))
    assert done.returncode == 0, done.stderr
    assert "apt-get install -y -qq libjemalloc2" in log
    assert "[set-up] jemalloc" in done.stderr


def test_without_root_debians_package_is_unpacked_into_the_venv(project, tmp_path):
    done, log = set_up(project, tmp_path, 1000, ("python3", "apt-get", "dpkg-deb", "valgrind"))
    assert done.returncode == 0, done.stderr
    assert "apt-get download libjemalloc2" in log and "apt-get install" not in log
    assert (project / ".venv" / "lib" / "jemalloc" / "libjemalloc.so.2").read_text() == "lib\n"


def test_with_no_way_to_install_it_one_line_names_the_command_and_exits_4(project, tmp_path):
    done, _ = set_up(project, tmp_path, 1000, ("python3", "valgrind"))
    assert done.returncode == 4
    (line,) = [line for line in done.stderr.splitlines() if "could not" in line]
    assert "sudo apt-get install libjemalloc2" in line
