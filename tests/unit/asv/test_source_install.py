"""How asv puts a commit's library into a benchmark environment (source_install.py), run
as asv runs it: by a virtual environment's own interpreter."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tools._lib.asv import source_install

SCRIPT = Path(source_install.__file__)


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    """A virtual environment without pip of its own; the base interpreter's pip serves it,
    as a copy pip installed is removed by ``python -m pip``."""
    folder = tmp_path_factory.mktemp("venv")
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(folder)],
        check=True,
    )
    return folder


def python(venv: Path) -> str:
    return str(venv / "bin" / "python")


def site_packages(venv: Path) -> Path:
    (found,) = venv.glob("lib/python3*/site-packages")
    return found


def checkout(root: Path, marker: str) -> Path:
    """A tree as asv checks a commit out: the library under ``src``."""
    package = root / "src" / "tensorops"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(f"MARKER = {marker!r}\n")
    return root


def run(venv: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [python(venv), str(SCRIPT), *args], capture_output=True, text=True, cwd=venv
    )


def imported(venv: Path) -> str:
    done = subprocess.run(
        [python(venv), "-c", "import tensorops; print(tensorops.MARKER)"],
        capture_output=True,
        text=True,
        cwd=venv,
    )
    return done.stdout.strip() if done.returncode == 0 else "not importable"


def test_each_install_points_the_environment_at_that_commits_source(venv, tmp_path):
    first, second = checkout(tmp_path / "a", "first"), checkout(tmp_path / "b", "second")
    assert run(venv, "install", str(first)).returncode == 0
    assert imported(venv) == "first"
    assert run(venv, "uninstall").returncode == 0
    assert imported(venv) == "not importable"
    assert run(venv, "install", str(second)).returncode == 0
    assert imported(venv) == "second"
    run(venv, "uninstall")


def test_uninstall_removes_a_copy_pip_installed_which_would_come_first(venv, tmp_path):
    site = site_packages(venv)
    (site / "tensorops").mkdir()
    (site / "tensorops" / "__init__.py").write_text("MARKER = 'a wheel'\n")
    info = site / "tensorops-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tensorops\nVersion: 0.1.0\n")
    (info / "RECORD").write_text(
        "".join(
            f"{name},,\n"
            for name in (
                "tensorops/__init__.py",
                *(f"tensorops-0.1.0.dist-info/{part}" for part in ("METADATA", "RECORD")),
            )
        )
    )
    assert run(venv, "install", str(checkout(tmp_path / "a", "source"))).returncode == 0
    assert imported(venv) == "a wheel"  # site-packages comes before a path file's folder
    done = run(venv, "uninstall")
    assert done.returncode == 0, done.stderr
    assert not (site / "tensorops").exists() and not info.exists()
    assert not (site / source_install.PATH_FILE).exists()
    assert imported(venv) == "not importable"


def test_a_tree_without_the_library_is_refused_with_one_line(venv, tmp_path):
    (tmp_path / "src").mkdir()
    done = run(venv, "install", str(tmp_path))
    assert done.returncode == 2
    assert (
        done.stderr.strip()
        == f"source_install: no tensorops package under {(tmp_path / 'src').resolve()}"
    )
    assert not (site_packages(venv) / source_install.PATH_FILE).exists()
    assert run(venv, "reinstall").returncode == 2


def test_a_copy_pip_cannot_remove_fails_with_one_line(tmp_path, monkeypatch, capsys):
    """In-process, with pip answering 1: the path file is gone, the status is 2."""
    (tmp_path / "tensorops-0.1.0.dist-info").mkdir()
    (tmp_path / "tensorops-0.1.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: tensorops\nVersion: 0.1.0\n"
    )
    (tmp_path / source_install.PATH_FILE).write_text("/nowhere/src\n")
    monkeypatch.setattr(source_install, "site_packages", lambda: tmp_path)
    monkeypatch.setattr(
        source_install.subprocess, "run", lambda *a, **k: subprocess.CompletedProcess(a, 1)
    )
    assert source_install.main(["uninstall"]) == 2
    said = capsys.readouterr().err.strip().splitlines()
    assert said == ["source_install: pip could not remove the installed tensorops (1)"]
    assert not (tmp_path / source_install.PATH_FILE).exists()


def test_a_site_packages_that_cannot_be_written_fails_with_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(source_install, "site_packages", lambda: tmp_path / "missing")
    assert source_install.main(["install", str(checkout(tmp_path / "a", "x"))]) == 2
    (said,) = capsys.readouterr().err.strip().splitlines()
    assert said.startswith("source_install: ") and "missing" in said
