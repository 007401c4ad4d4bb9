#!/usr/bin/env bash
# Run tools/studies/gpu_check.py on a CUDA machine whose Python has torch but not asv (the
# device tool's H200 image: Python 3.12, nothing fetchable). First, where pip works:
#
#   echo /.whl/ >> .git/info/exclude
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 \
#       --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
#       --platform manylinux2014_x86_64 -d .whl asv==0.6.6 asv_runner==0.2.5 json5==0.17.3 \
#       pympler==1.1 virtualenv==21.14.1 distlib==0.4.4 platformdirs==4.14.8 \
#       importlib_metadata==10.2.0 zipp==3.23.0
#
# then, there, with .whl carried: bash tools/gpu_check.sh "$OUT"
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: tools/gpu_check.sh OUT_DIR}
venv=/tmp/gpu-check-venv

# The image's torch (with CUDA) stays; asv and its pure-Python needs come from .whl.
python3 -m venv --system-site-packages "$venv"
"$venv/bin/python" -m pip install -q --no-index --no-deps --no-compile .whl/*.whl
# tensorops from this tree, by path: nothing to build on a machine that fetches nothing.
site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
echo "$PWD/src" >"$site/tensorops-src.pth"
PYTHONUNBUFFERED=1 exec "$venv/bin/python" -m tools.studies.gpu_check --out "$out"
