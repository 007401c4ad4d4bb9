#!/usr/bin/env bash
# Every count twin's case counted twice in one asv environment: tensorops installed as a
# wheel (asv's build and install before), then from the commit's source through a path
# file (tools/_lib/asv/source_install.py); the figures in count_perturbation's form, for
# `python -m tools.studies.count_floors ... --check OUT.json`.
#   bash docs/studies/data/2026-12-07-source-install-counts.sh ENV_DIR OUT.json
# ENV_DIR: an asv environment of this repository (.asv/env/HASH), built by asv run.
set -euo pipefail
cd "$(dirname "$0")/../../.."
source docs/studies/data/study-common.sh
env_dir=$(cd "$1" && pwd) out=$2
python=$env_dir/bin/python
site=$("$python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
git archive HEAD src pyproject.toml README.md | tar -x -C "$scratch"
count_all() {  # the library as installed now; the suites from this tree
  PYTHONPATH=$PWD "$python" -c "$("$PWD/.venv/bin/python" -c \
    'from tools.studies.count_perturbation import COUNT_ALL; print(COUNT_ALL)')" 0
}
rm -f "$site/tensorops-source.pth"
"$python" -m pip wheel -q --no-deps --no-build-isolation -w "$scratch/wheel" "$scratch"
"$python" -m pip install -q --no-deps --force-reinstall "$scratch"/wheel/*.whl
"$python" -c 'import tensorops; print("wheel:", tensorops.__file__)'
count_all > "$scratch/wheel.json"
"$python" "$PWD/tools/_lib/asv/source_install.py" uninstall
"$python" "$PWD/tools/_lib/asv/source_install.py" install "$scratch"
"$python" -c 'import tensorops; print("source:", tensorops.__file__)'
count_all > "$scratch/source.json"
"$python" "$PWD/tools/_lib/asv/source_install.py" uninstall
HOST="$(host_line)" "$PWD/.venv/bin/python" - "$scratch/wheel.json" "$scratch/source.json" "$out" <<'PY'
import json, os, sys
wheel, source = (json.load(open(path)) for path in sys.argv[1:3])
lines = dict(line.split(":", 1) for line in os.environ["HOST"].splitlines())
figures = {
    "host": lines["Model name"].strip(),
    "l3": lines["L3 cache"].strip(),
    "avx512": lines["avx512"].strip(),
    "variants": {"as-is": "a wheel in site-packages", "source-install": "a path file"},
    "seconds": {"as-is": wheel["seconds"], "source-install": source["seconds"]},
    "counts": {"as-is": wheel["counts"], "source-install": source["counts"]},
}
json.dump(figures, open(sys.argv[3], "w"), indent=1, sort_keys=True)
print(f"{len(wheel['counts'])} counts; seconds {wheel['seconds']:.1f} and {source['seconds']:.1f}")
PY
