"""The exit-status contract's logs (tools/_lib/base/cli.py): a traceback goes to a folder of this
user's own, never to one another user made or a link planted in its place."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from tools._lib.base import cli


@pytest.fixture
def shared_tmp(monkeypatch, tmp_path):
    """The temporary folder every user writes to, and this user's default log folder in it."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.delenv(cli.LOG_DIR_ENV, raising=False)
    return tmp_path / f"tensorops-logs-{os.getuid()}"


def traceback_log() -> str:
    try:
        raise RuntimeError("secret in a traceback")
    except RuntimeError:
        return cli.write_traceback_log("probe")


def planted_link(default, tmp_path):
    elsewhere = tmp_path / "attacker"
    elsewhere.mkdir()
    default.symlink_to(elsewhere)
    return elsewhere


def planted_open_folder(default, tmp_path):
    default.mkdir(mode=0o777)
    default.chmod(0o777)
    return default


def planted_by_another_user(default, tmp_path):
    if os.getuid() != 0:
        pytest.skip("only root can make a folder another user owns")
    default.mkdir(mode=0o700)
    os.chown(default, 65534, 65534)
    return default


@pytest.mark.parametrize("plant", [planted_link, planted_open_folder, planted_by_another_user])
def test_a_log_folder_someone_else_made_is_never_written(shared_tmp, tmp_path, plant):
    planted = plant(shared_tmp, tmp_path)
    said = traceback_log()
    assert list(planted.iterdir()) == []
    written = said.removeprefix("traceback in ")
    assert "secret in a traceback" in Path(written).read_text()
    status = os.lstat(os.path.dirname(written))
    assert status.st_uid == os.getuid() and status.st_mode & 0o077 == 0


def test_the_default_log_folder_is_made_private(shared_tmp):
    said = traceback_log()
    assert said.startswith(f"traceback in {shared_tmp}")
    assert shared_tmp.lstat().st_mode & 0o777 == 0o700
