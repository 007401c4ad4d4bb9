"""An outbox: results waiting to be pushed by a job that holds the write token. It holds the
files to land, the machine they are of, and the remote tip the run started from (the push
refuses a branch that no longer contains it). Written by the benchmarking job, read by the
push job: to the push, its content is untrusted data."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from tools._lib.base.cli import BadInput
from tools._lib.store.tree import check_path


def write_atomically(target: Path, content: bytes) -> None:
    """``content`` at ``target``, whole or not at all: written beside it, then renamed (a
    full disk leaves the old file, or none, never half of the new one)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        with open(temporary, "wb") as out:
            out.write(content)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, target)
    finally:
        temporary.unlink(missing_ok=True)


@dataclass(frozen=True)
class Outbox:
    path: Path

    def start(self, machine: str, base: str) -> None:
        (self.path / "files").mkdir(parents=True, exist_ok=True)
        write_atomically(self.path / "machine", f"{machine}\n".encode())
        write_atomically(self.path / "base", f"{base}\n".encode())

    def add(self, files: dict[str, bytes]) -> None:
        for name, content in files.items():
            check_path(name)
            write_atomically(self.path / "files" / name, content)

    @property
    def machine(self) -> str:
        return self._field("machine")

    @property
    def base(self) -> str:
        return self._field("base")

    def files(self) -> dict[str, bytes]:
        """Every file the outbox holds, by results-tree path; bad input for a link or a
        path that does not belong on a results branch."""
        folder = self.path / "files"
        found = {}
        for path in sorted(folder.rglob("*")):
            name = path.relative_to(folder).as_posix()
            if path.is_symlink():
                raise BadInput(f"{self.path}: {name} is a link; an outbox holds files only")
            if path.is_file():
                check_path(name)
                found[name] = path.read_bytes()
        return found

    def _field(self, name: str) -> str:
        try:
            value = (self.path / name).read_text().strip()
        except (OSError, UnicodeDecodeError):
            raise BadInput(f"{self.path} is not an outbox of tools.nightly (no {name})") from None
        if name == "base" and value and not re.fullmatch(r"[0-9a-f]{40}", value):
            raise BadInput(f"{self.path / name} holds no commit hash: {value[:40]!r}")
        if name == "machine" and not re.fullmatch(r"[\w.-]+", value):
            raise BadInput(f"{self.path / name} holds no machine name: {value[:40]!r}")
        return value
