from __future__ import annotations

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def shared_asv_env(tmp_path_factory) -> Path:
    """asv's env folder, shared by every temporary project repository of the session."""
    return tmp_path_factory.mktemp("asv-env")
