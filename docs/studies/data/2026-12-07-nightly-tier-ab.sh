#!/usr/bin/env bash
# The nightly tier's benchmark time before and after the throughput tracks read their
# time_ row, on one host, one after the other: the pr and nightly tiers as the nightly runs
# them (tools.studies.tier_time: asv's own rounds through the tools' asv, jemalloc and a run
# folder), at BEFORE (a commit whose tracks time their call) and at this checkout's HEAD,
# each in a clone of its own (asv's environment shared). Each side's figures (wall time,
# asv's recorded seconds by suite) and the benchmark names each side's result file holds.
# Usage: bash docs/studies/data/2026-12-07-nightly-tier-ab.sh BEFORE OUT-DIR
set -euo pipefail
main=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
before=${1:?usage: $0 BEFORE-COMMIT OUT-DIR}
out=${2:?usage: $0 BEFORE-COMMIT OUT-DIR}
mkdir -p "$out"
. "$(dirname "$0")/study-common.sh"
host_line | tee "$out/host.txt"
w=$(mktemp -d -t nightly-tier-ab-XXXX)
for side in before after; do
  study_clone "$main" "$w/$side" "$([ "$side" = before ] && echo "$before")"
done
for side in before after; do
  (cd "$w/$side" && .venv/bin/python -m tools.studies.tier_time --tier pr --tier nightly \
      --machine nightly-ab --out "$out/$side.json") > "$w/$side.log" 2>&1
  tail -1 "$w/$side.log"
  "$main/.venv/bin/python" - "$w/$side/.asv/results/nightly-ab" "$out/$side-names.txt" <<'PY'
import json, sys
from pathlib import Path

folder, out = Path(sys.argv[1]), Path(sys.argv[2])
names = set()
for path in folder.glob("*.json"):
    if path.name != "machine.json":
        names |= set(json.loads(path.read_text())["results"])
out.write_text("".join(f"{name}\n" for name in sorted(names)))
PY
done
"$main/.venv/bin/python" - "$out" <<'PY'
import json, sys
from pathlib import Path

out = Path(sys.argv[1])
sides = {side: json.loads((out / f"{side}.json").read_text()) for side in ("before", "after")}
names = {side: set((out / f"{side}-names.txt").read_text().split("\n")) - {""} for side in sides}
for side, figures in sides.items():
    print(f"{side} {figures['commit'][:8]}: wall {figures['wall_seconds']} s, asv recorded "
          f"{figures['asv_recorded_seconds']} s, {len(names[side])} benchmarks")
b, a = (sides[s]["asv_recorded_seconds"] for s in ("before", "after"))
print(f"benchmark time fell {1 - a / b:.1%}; names only before: "
      f"{sorted(names['before'] - names['after'])}")
PY
