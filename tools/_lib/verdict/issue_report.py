"""What the triage and the releases comparison hand to the filing of issues: one machine's
issues, each with its key, its state (open or resolved), its title and body, and the
comment that closes it. The filing job reads it from an artifact the benchmarked commits'
code could have written, so reading it back checks it (standard library only: that job
installs nothing)."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

VERSION = 1
KINDS = ("regression", "release")
MACHINE = re.compile(r"[A-Za-z0-9][\w.-]*")
# A key goes into a marker comment; whose it is: the triage's "MACHINE|row|good..bad", a
# release's "release|MACHINE|row|old release".
KEY = re.compile(r"[\w.()',|=: /+-]{1,300}")
KEY_MACHINE = {"regression": re.compile(r"([^|]+)\|"), "release": re.compile(r"release\|([^|]+)\|")}
STATES = ("open", "resolved")


@dataclass(frozen=True)
class Issue:
    key: str
    state: str  # open: file or update it; resolved: comment ``resolution`` and close it
    title: str
    body: str
    resolution: str = ""


@dataclass(frozen=True)
class IssueReport:
    kind: str
    machine: str
    issues: tuple[Issue, ...]

    def to_json(self) -> dict:
        return {
            "version": VERSION,
            "kind": self.kind,
            "machine": self.machine,
            "regressions": [asdict(issue) for issue in self.issues],
        }

    @classmethod
    def from_json(cls, data) -> IssueReport:
        """A report as ``to_json`` wrote it (a report without a kind is the triage's);
        ValueError, in one line, for anything else, a key of another machine included."""
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
        kind = data.get("kind", "regression")
        if kind not in KINDS:
            raise ValueError(f"unknown kind {str(kind)[:40]!r}")
        machine = data.get("machine")
        if not isinstance(machine, str) or not MACHINE.fullmatch(machine):
            raise ValueError(f"no machine name: {str(machine)[:40]!r}")
        entries = data.get("regressions")
        if not isinstance(entries, list):
            raise ValueError("no list of regressions")
        return cls(kind, machine, tuple(issue_of(entry, kind, machine) for entry in entries))


def issue_of(entry, kind: str, machine: str) -> Issue:
    if not isinstance(entry, dict):
        raise ValueError("a regression that is not an object")
    for field in ("key", "state", "title", "body"):
        if not isinstance(entry.get(field), str):
            raise ValueError(f"{field} is not text")
    if not isinstance(entry.get("resolution", ""), str):
        raise ValueError("resolution is not text")
    if entry["state"] not in STATES:
        raise ValueError(f"unknown state {entry['state'][:40]!r}")
    if not KEY.fullmatch(entry["key"]):
        raise ValueError(f"a key that cannot be a marker: {entry['key'][:80]!r}")
    owner = KEY_MACHINE[kind].match(entry["key"])
    if owner is None or owner.group(1) != machine:
        raise ValueError(f"key {entry['key'][:80]!r} is not of machine {machine}")
    fields = ("key", "state", "title", "body", "resolution")
    return Issue(**{name: entry[name] for name in fields if name in entry})
