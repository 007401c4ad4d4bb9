#!/usr/bin/env bash
# The publish at a year, before and after a change, side by side: one synthetic history
# of NIGHTS nights (two machines, both torch releases: tools/studies/synthetic_history.py),
# then tools._lib.store.site.publish of it by BEFORE's code and by this checkout's HEAD, each
# in a fresh process, in turns (before, after, before, after), with nothing else running;
# and whether both sides wrote the same regressions page.
# Usage: bash docs/studies/data/2026-12-07-publish-ab.sh BEFORE OUT.json [NIGHTS]
set -euo pipefail
. "$(dirname "$0")/study-common.sh"
main=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
before=${1:?usage: $0 BEFORE-COMMIT OUT.json [NIGHTS]}
out=${2:?usage: $0 BEFORE-COMMIT OUT.json [NIGHTS]}
nights=${3:-365}
w=$(mktemp -d -t publish-ab-XXXX)
for side in before after; do
  study_clone "$main" "$w/$side" "$([ "$side" = before ] && echo "$before")"
done
(cd "$w/after" && .venv/bin/python - "$w/history" "$nights" <<'PY'
import sys
from pathlib import Path

from tools.studies.synthetic_history import History

History(Path(sys.argv[1]), Path("."), int(sys.argv[2]), 2)
PY
)
declare -a runs
for turn in 1 2; do
  for side in before after; do
    rm -rf "$w/site"
    begun=$(date +%s.%N)
    (cd "$w/$side" && .venv/bin/python -c 'import sys; from pathlib import Path
from tools._lib.store.site import publish
publish(Path(sys.argv[1]), Path(sys.argv[2]))' "$w/history/project" "$w/site") > /dev/null
    seconds=$(echo "$(date +%s.%N) - $begun" | bc)
    bytes=$(du -sb "$w/site" | cut -f1)
    cp "$w/site/regressions.json" "$w/$side-regressions.json"
    echo "$side: $seconds s, site $bytes bytes"
    runs+=("{\"side\": \"$side\", \"seconds\": $seconds, \"site_bytes\": $bytes}")
  done
done
# asv lists the regressions in an order that varies from process to process: compared as sets.
same=$("$main/.venv/bin/python" - "$w/before-regressions.json" "$w/after-regressions.json" <<'PY'
import json, sys

pages = [json.load(open(path))["regressions"] for path in sys.argv[1:]]
print(str(len({json.dumps(sorted(map(json.dumps, page))) for page in pages}) == 1).lower())
PY
)
host=$(lscpu | sed -n 's/^Model name: *//p')
l3=$(lscpu | sed -n 's/^L3 cache: *//p')
avx=$({ grep -o -E 'avx512f|avx512_bf16|avx512_fp16' /proc/cpuinfo || true; } | sort -u | tr '\n' ' ')
{ echo "{\"host\": \"$host\", \"l3\": \"$l3\", \"avx512\": \"$avx\", \"nights\": $nights,"
  echo " \"before\": \"$(git -C "$w/before" rev-parse --short HEAD)\", \"after\": \"$(git -C "$w/after" rev-parse --short HEAD)\","
  echo " \"same_regressions_json\": $same,"
  echo " \"runs\": [$(IFS=,; echo "${runs[*]}")]}"
} > "$out"
cat "$out"
