#!/usr/bin/env bash
# The gate's wall time on three changes, on a fresh clone of main (asv's environment shared).
set -u
main=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
. "$(dirname "$0")/study-common.sh"
host_line
w=$(mktemp -d -t gate-times-XXXX)
study_clone "$main" "$w/repo" && cd "$w/repo" || exit 1
base=$(git rev-parse HEAD)
py=.venv/bin/python
# A: one variant's function: logsumexp's functional variant does the reduction twice.
python3 - <<'PY'
p='src/tensorops/reduction.py'; s=open(p).read()
s=s.replace('    return torch.logsumexp(x, dim=-1)\n','    torch.logsumexp(x, dim=-1)\n    return torch.logsumexp(x, dim=-1)\n',1); open(p,'w').write(s)
PY
git -c user.name=t -c user.email=t@e commit -qam "logsumexp twice"
s=$(date +%s.%N); $py -m tools.pr_gate "$base" HEAD --summary-file "$w/a1.md" > "$w/a1.log" 2>&1; rc=$?
echo "A, map traced now: rc $rc, $(echo "$(date +%s.%N) - $s" | bc) s"
rm -rf .asv/results/pr-gate
cp ".asv/reach/$base.json" "$w/map.json"; rm -rf .asv/reach
s=$(date +%s.%N); $py -m tools.pr_gate "$base" HEAD --reach-map "$w/map.json" --summary-file "$w/a2.md" > "$w/a2.log" 2>&1; rc=$?
echo "A, the nightly's map given: rc $rc, $(echo "$(date +%s.%N) - $s" | bc) s"
# B: the harness: what selecting costs before the whole-tier gate runs as --all does.
git checkout -q "$base" && echo "# a comment" >> benchmarks/_harness/prepare.py && git -c user.name=t -c user.email=t@e commit -qam harness
s=$(date +%s.%N); $py -c "
from pathlib import Path
from tools._lib.verdict.gate_rows import gate_selection
sel = gate_selection(Path('.'), '$base', 'HEAD', [], False, None)
print(len(sel.rows), len(sel.candidates), sel.everything)"
echo "B, selecting every row: $(echo "$(date +%s.%N) - $s" | bc) s"
# C: docs only.
git checkout -q "$base" && echo "A line." >> README.md && git -c user.name=t -c user.email=t@e commit -qam docs
s=$(date +%s.%N); $py -m tools.pr_gate "$base" HEAD --summary-file "$w/c.md" > "$w/c.log" 2>&1; rc=$?
echo "C, docs only: rc $rc, $(echo "$(date +%s.%N) - $s" | bc) s"
echo "logs in $w"
