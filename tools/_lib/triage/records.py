"""The triage's records on the results branch: one file per machine (``triage/NAME.json``),
so no machine's triage can overwrite another's, saved and landed as each record is made, so
a triage cut half-way keeps what it finished."""

from __future__ import annotations

import json
from pathlib import Path

from tools._lib.asv.results import RESULTS_DIR
from tools._lib.base.cli import BadInput
from tools._lib.store.branch import ResultsBranch
from tools._lib.store.outbox import Outbox, write_atomically
from tools._lib.triage.record import Finding, Regression, from_first_format

STATE_FOLDER = "triage"
FIRST_FORMAT = "state.json"  # one file for every machine, before the files per machine
VERSION = 2


class TriageStore:
    """One machine's records, by key."""

    def __init__(self, repo: Path, machine: str, branch: ResultsBranch, outbox: Outbox | None):
        self.machine, self.branch, self.outbox = machine, branch, outbox
        self.folder = repo / RESULTS_DIR / STATE_FOLDER
        self.records: dict[str, Regression] = self.load()

    @property
    def path(self) -> Path:
        return self.folder / f"{self.machine}.json"

    def load(self) -> dict[str, Regression]:
        try:
            if self.path.exists():
                saved = json.loads(self.path.read_text())
                records = [Regression.from_json(r) for r in saved["records"]]
            elif (self.folder / FIRST_FORMAT).exists():
                saved = json.loads((self.folder / FIRST_FORMAT).read_text())["steps"].values()
                records = [from_first_format(r) for r in saved if r.get("machine") == self.machine]
            else:
                records = []
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
            raise BadInput(f"{self.path} is not a triage state: {error}") from None
        return {record.key: record for record in records}

    def settled(self) -> list[Regression]:
        """Records that need no second look: confirmed or dismissed (one that could not
        be measured again is tried again)."""
        return [r for r in self.records.values() if r.finding != Finding.UNMEASURED]

    def open(self) -> list[Regression]:
        return [r for r in self.records.values() if r.is_open]

    def keep(self, record: Regression | None, message: str) -> None:
        """``record`` kept (None: nothing new), the file written whole and landed."""
        if record is not None:
            self.records[record.key] = record
        records = [r.to_json() for _, r in sorted(self.records.items())]
        text = (
            json.dumps(
                {"version": VERSION, "machine": self.machine, "records": records},
                indent=1,
                sort_keys=True,
            )
            + "\n"
        )
        write_atomically(self.path, text.encode())
        self.branch.save(message, self.outbox)
