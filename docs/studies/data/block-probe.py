"""Per row, in one round of one process pair: the ready call's seconds (both sides), the
calls a block got from it, and the seconds a call its kept blocks read. Run in a clone
whose HEAD~1 and HEAD are the sides and whose .asv holds the default environment, with the
rows one per line in LABELS. Evidence for docs/studies/2026-12-06-block-sizing-epyc.md.

    PYTHONPATH=. .venv/bin/python docs/studies/data/block-probe.py LABELS OUT.json
"""

import json
import statistics
import sys
from pathlib import Path

from tools._lib.asv.matrix import default_python
from tools._lib.base.git import commit_library, resolve_commit
from tools._lib.measure import workers
from tools._lib.measure.alternation import PAIRS, ROW_SECONDS

rows = []
timed_blocks, hear = workers.alternate, workers.RowOnSides.hear


def alternate(row, number, pairs, timeout):
    found = timed_blocks(row, number, pairs, timeout)
    rows[-1].update(number=number, pairs=pairs, before=found[0], after=found[1])
    return found


def heard(self, worker, timeout):
    answer = hear(self, worker, timeout)
    if answer.get("status") == "ready":
        rows[-1].setdefault("ready", []).append(answer["seconds"])
    return answer


workers.alternate, workers.RowOnSides.hear = alternate, heard
repo = Path.cwd()
labels = [line.strip() for line in Path(sys.argv[1]).read_text().split("\n") if line.strip()]
base, head = resolve_commit("HEAD~1", repo), resolve_commit("HEAD", repo)
with commit_library(repo, base) as old, commit_library(repo, head) as new:
    python = default_python(repo)
    sides = (workers.Side(base[:12], python, old), workers.Side(head[:12], python, new))
    pair = tuple(workers.Worker(repo, s, Path(f"{sys.argv[2]}.{s.name}.log")) for s in sides)
    for w in pair:
        w.start()
    for label in labels:
        rows.append({"label": label})
        try:
            workers.measure_row(label, pair, workers.timing_cpus(), PAIRS, ROW_SECONDS, pair)
        except workers.SideFailed as failure:
            rows[-1]["failed"] = str(failure)
    for w in pair:
        w.stop()
Path(sys.argv[2]).write_text(json.dumps(rows, indent=1))
short = []
for r in rows:
    if "number" not in r:
        continue
    warm = statistics.median(r["before"] + r["after"])
    ms = r["number"] * warm * 1e3
    short.append((ms, r["label"], max(r["ready"]) / warm, r["number"]))
short.sort()
median = statistics.median(s[0] for s in short)
print(f"{len(short)} rows timed; block ms (number x warm per call): median {median:.1f}")
for ms, label, cold_over_warm, n in short[:25]:
    print(f"{ms:6.1f} ms  ready/warm {cold_over_warm:5.2f}  n={n:4d}  {label}")
print("under 15 ms:", sum(s[0] < 15 for s in short), "over 25 ms:", sum(s[0] > 25 for s in short))
