#!/usr/bin/env bash
# A change that selects every row (a comment in the harness) through the gate's selection,
# beside the whole-tier gate it hands over to (--all), on a fresh clone of main, asv's
# environment shared; each run from empty results, in turn: selected, --all.
set -u
main=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
. "$(dirname "$0")/study-common.sh"
host_line
w=$(mktemp -d -t gate-every-XXXX)
study_clone "$main" "$w/repo" && cd "$w/repo" || exit 1
base=$(git rev-parse HEAD)
py=.venv/bin/python
echo "# a comment" >> benchmarks/_harness/prepare.py
git -c user.name=t -c user.email=t@e commit -qam harness
for run in selected all; do
    rm -rf .asv/results/pr-gate
    flag=(); [ "$run" = all ] && flag=(--all)
    s=$(date +%s.%N)
    $py -m tools.pr_gate "$base" HEAD "${flag[@]}" --summary-file "$w/$run.md" --verdict-file "$w/$run.json" > "$w/$run.log" 2>&1
    rc=$?
    echo "$run: rc $rc, $(echo "$(date +%s.%N) - $s" | bc) s, $(grep -m1 'measuring' "$w/$run.log")"
done
$py - "$w/selected.json" "$w/all.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
def calls(v):
    return {r["label"]: r["judgement"] for r in v["rows"]}
differ = sorted(k for k in calls(a).keys() | calls(b).keys() if calls(a).get(k) != calls(b).get(k))
print("status:", a["status"], b["status"], "rows:", len(a["rows"]), len(b["rows"]), "judged differently:", differ)
PY
echo "logs in $w"
