"""Where one alternation round's time goes, row by row: from the row's request to both
sides ready (the two setups, at once on both cores), the timed blocks, the end. Run in a
clone whose HEAD~1 and HEAD are the two sides and whose .asv holds the default
environment (a gate's clone after its run), with the rows one per line in LABELS.

    PYTHONPATH=. .venv/bin/python docs/studies/data/round-cost.py LABELS OUT.json
"""

import json
import sys
import time
from pathlib import Path

from tools._lib.asv.matrix import default_python
from tools._lib.base.git import commit_library, resolve_commit
from tools._lib.measure import workers
from tools._lib.measure.alternation import PAIRS, ROW_SECONDS

rows = []
timed_blocks, hear, end = workers.alternate, workers.RowOnSides.hear, workers.RowOnSides.end


def alternate(row, number, pairs, timeout):
    begun = time.monotonic()
    found = timed_blocks(row, number, pairs, timeout)
    rows[-1].update(alternate=time.monotonic() - begun, pairs=pairs, number=number)
    return found


def heard(self, worker, timeout):
    answer = hear(self, worker, timeout)
    if answer.get("status") == "ready":
        rows[-1].setdefault("ready_at", time.monotonic() - rows[-1]["t0"])
        rows[-1]["ready_last"] = time.monotonic() - rows[-1]["t0"]
    return answer


def ended(self):
    begun = time.monotonic()
    end(self)
    rows[-1]["end"] = time.monotonic() - begun


workers.alternate, workers.RowOnSides.hear, workers.RowOnSides.end = alternate, heard, ended
repo, labels = Path.cwd(), Path(sys.argv[1]).read_text().split("\n")
labels = [label.strip() for label in labels if label.strip()]
base, head = resolve_commit("HEAD~1", repo), resolve_commit("HEAD", repo)
with commit_library(repo, base) as old, commit_library(repo, head) as new:
    python = default_python(repo)
    sides = (workers.Side(base[:12], python, old), workers.Side(head[:12], python, new))
    pair = tuple(workers.Worker(repo, s, Path(f"{sys.argv[2]}.{s.name}.log")) for s in sides)
    begun = time.monotonic()
    for worker in pair:
        worker.start()
    for label in labels:
        rows.append({"label": label, "t0": time.monotonic()})
        try:
            workers.measure_row(label, pair, workers.timing_cpus(), PAIRS, ROW_SECONDS, pair)
        except workers.SideFailed as failure:
            rows[-1]["failed"] = str(failure)
        rows[-1]["total"] = time.monotonic() - rows[-1]["t0"]
    for worker in pair:
        worker.stop()
    total = time.monotonic() - begun
Path(sys.argv[2]).write_text(json.dumps({"total": total, "rows": rows}, indent=1))
summed = {key: sum(row.get(key, 0) for row in rows) for key in ("ready_last", "alternate", "end")}
print(
    f"round {total:.1f} s, {len(rows)} rows: both sides ready {summed['ready_last']:.1f} s, "
    f"timed blocks {summed['alternate']:.1f} s, ends {summed['end']:.1f} s"
)
