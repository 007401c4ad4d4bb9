#!/usr/bin/env bash
# What the throughput tracks cost the nightly, before and after they read their time_ row:
# the nightly's CPU rows of every class with throughput tracks (its time_ row and its
# GFLOP/s, GB/s and % of peak tracks, the pr and nightly tiers), run as the nightly runs
# them (asv's own rounds, through the tools' asv, jemalloc and a run folder), at BEFORE (a
# commit whose tracks time their call) and at this checkout's HEAD, one after the other.
# asv's duration of each benchmark (every param and round, its result file's "duration"
# column) is summed by kind.
# Usage: bash docs/studies/data/2026-12-06-track-cost.sh BEFORE [OUT.json]
set -euo pipefail
main=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
before=${1:?usage: $0 BEFORE-COMMIT [OUT.json]}
out=${2:-$main/docs/studies/data/2026-12-06-track-cost.json}
. "$(dirname "$0")/study-common.sh"
host_line
w=$(mktemp -d -t track-cost-XXXX)
for side in before after; do
  study_clone "$main" "$w/$side" "$([ "$side" = before ] && echo "$before")"
done
for side in before after; do
  (cd "$w/$side" && .venv/bin/asv machine --machine track-cost --yes > /dev/null)
  begun=$(date +%s.%N)
  (cd "$w/$side" && .venv/bin/python - <<'PY'
from pathlib import Path

from benchmarks._harness import tiers
from benchmarks._harness.tracks import DeviceTracks, _Tracks
from tools._lib.asv.run import asv

DERIVED = ("track_gflops", "track_gbps", "track_percent_of_peak")
classes = [
    cls
    for cls in tiers.benchmark_classes(tiers.suite_modules())
    if issubclass(cls, _Tracks) and not issubclass(cls, DeviceTracks)
]
rows = [
    row
    for row, tier in tiers.rows(classes)
    if tier in ("pr", "nightly")
    and "('cpu'" in row
    and row.split("(", 1)[0].rsplit(".", 1)[1].startswith(("time_", *DERIVED))
]
print(f"{len(rows)} rows", flush=True)
regex = "^(" + "|".join(__import__("re").escape(r) + "$" for r in rows) + ")"
done = asv("run", "--machine", "track-cost", "--bench", regex, "HEAD^!", cwd=Path("."))
raise SystemExit(done.returncode if done.returncode != 2 else 0)
PY
  ) > "$w/$side.log" 2>&1
  echo "$side: $(echo "$(date +%s.%N) - $begun" | bc) s of wall time, log $w/$side.log"
done
"$main/.venv/bin/python" - "$w" "$out" <<'PY'
import json, subprocess, sys
from pathlib import Path

work, out = Path(sys.argv[1]), Path(sys.argv[2])
DERIVED = ("track_gflops", "track_gbps", "track_percent_of_peak")
figures = {}
for side in ("before", "after"):
    (result,) = [
        p for p in (work / side / ".asv" / "results" / "track-cost").glob("*.json")
        if p.name != "machine.json"
    ]
    data = json.loads(result.read_text())
    column = data["result_columns"].index("duration")
    durations = {
        name: row[column] for name, row in data["results"].items() if len(row) > column
    }
    timed = sum(s for n, s in durations.items() if n.rsplit(".", 1)[1].startswith("time_"))
    tracks = sum(s for n, s in durations.items() if n.rsplit(".", 1)[1] in DERIVED)
    figures[side] = {
        "commit": data["commit_hash"],
        "time_rows_seconds": round(timed, 1),
        "track_rows_seconds": round(tracks, 1),
        "benchmark_seconds": round(timed + tracks, 1),
        "per_benchmark": {n: round(s, 2) for n, s in sorted(durations.items())},
    }
lscpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
figures["host"] = {
    line.split(":", 1)[0].strip(): line.split(":", 1)[1].strip()
    for line in lscpu.splitlines()
    if line.startswith(("Model name", "L3 cache"))
}
flags = set(open("/proc/cpuinfo").read().split())
figures["host"]["avx512"] = sorted(flags & {"avx512f", "avx512_bf16", "avx512_fp16"})
b, a = figures["before"]["benchmark_seconds"], figures["after"]["benchmark_seconds"]
figures["fall"] = round(1 - a / b, 3)
out.write_text(json.dumps(figures, indent=1) + "\n")
for side in ("before", "after"):
    f = figures[side]
    print(f"{side}: time_ rows {f['time_rows_seconds']} s, tracks {f['track_rows_seconds']} s, "
          f"together {f['benchmark_seconds']} s")
print(f"fall: {figures['fall']:.1%}; written to {out}")
PY
