#!/usr/bin/env bash
# The nightly tier as gha-cpu's three shards run it: `tools.nightly --shard I/3` of one
# commit (this checkout's HEAD), each shard in turn on this otherwise idle machine (three
# runners side by side take the longest shard's time), into an outbox as the workflow's
# shards do. The asv environment is built before the first shard (its minute is a night's,
# not a commit's). Each shard's wall time, and asv's recorded seconds per shard; then what
# the same recorded seconds give split by the rows' number instead of their measured cost.
# Usage: bash docs/studies/data/2026-12-06-nightly-shards.sh [OUT.json]
set -euo pipefail
main=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
out=${1:-$main/docs/studies/data/2026-12-06-nightly-shards.json}
lscpu | grep -E "Model name|L3 cache"
{ grep -o -E 'avx512f|avx512_bf16|avx512_fp16' /proc/cpuinfo || true; } | sort -u | tr '\n' ' '
echo "(avx512 flags above, if any)"
w=$(mktemp -d -t nightly-shards-XXXX)
git clone -q "$main" "$w/repo"
mkdir -p "$w/repo/.asv" && ln -s "$main/.asv/env" "$w/repo/.asv/env"
ln -s "$main/.venv" "$w/repo/.venv"
cd "$w/repo"
.venv/bin/python -c 'from pathlib import Path; from tools._lib.asv.run import ensure_environment; ensure_environment(Path("."))'
declare -A wall
for shard in 1 2 3; do
  begun=$(date +%s.%N)
  status=0
  .venv/bin/python -m tools.nightly --machine shard-cost --shard "$shard/3" --max-commits 1 \
    --no-fetch --outbox "$w/outbox-$shard" > "$w/shard-$shard.log" 2>&1 || status=$?
  wall[$shard]=$(echo "$(date +%s.%N) - $begun" | bc)
  echo "shard $shard/3: ${wall[$shard]} s of wall time, status $status, log $w/shard-$shard.log"
  # 1: some benchmarks failed and the rest are saved, as a night goes on; anything else stops
  [ "$status" -le 1 ] || exit "$status"
done
.venv/bin/python - "$w" "$out" "${wall[1]}" "${wall[2]}" "${wall[3]}" <<'PY'
import json
import sys
from pathlib import Path

from benchmarks._harness import shards, tiers

work, out, walls = Path(sys.argv[1]), Path(sys.argv[2]), [float(s) for s in sys.argv[3:6]]
TIERS = ("pr", "nightly")
recorded, caches, figures = {}, {}, {"commit": None, "shards": []}
for index, wall in enumerate(walls, 1):
    files = [
        p for p in (work / f"outbox-{index}" / "files" / "shard-cost").glob("*.json")
        if p.name != "machine.json"
    ]
    data = [json.loads(p.read_text()) for p in files]
    assert len(data) == 1, files
    column = data[0]["result_columns"].index("duration")
    mine = {n: r[column] or 0.0 for n, r in data[0]["results"].items() if len(r) > column}
    cache = sum(s for k, s in data[0].get("durations", {}).items() if k.startswith("<setup_cache"))
    recorded.update(mine)
    figures["commit"] = data[0]["commit_hash"]
    figures["shards"].append({
        "shard": f"{index}/3",
        "wall_seconds": round(wall, 1),
        "benchmarks": len(mine),
        "recorded_benchmark_seconds": round(sum(mine.values()), 1),
        "setup_cache_seconds": round(cache, 1),
    })
classes = tiers.benchmark_classes(tiers.suite_modules())
by_rows = [
    round(sum(recorded.get(n, 0.0) for n in tiers.benchmarks_of(shards.shard(classes, TIERS, i, 3, {}), TIERS)), 1)
    for i in (1, 2, 3)
]
figures["by_rows_recorded_benchmark_seconds"] = by_rows
figures["longest_shard_wall_seconds"] = max(walls)
text = json.dumps(figures, indent=1)
print(text)
out.write_text(text + "\n")
PY
