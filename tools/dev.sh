#!/usr/bin/env bash
# The project's two entry points on a fresh machine (Python 3.11 with pip, and git):
#
#   tools/dev.sh bench [--tier T] [asv run options]
#                                           set up, benchmark the current commit (the rows of
#                                           tier T: pr, nightly (with pr) or weekly; default
#                                           every row), publish the site to .asv/html
#   tools/dev.sh test  [pytest options]    set up, lint, run the tests (what .ci/run runs)
#   tools/dev.sh setup                      set up only (the workflows, before tools/*.py)
#
# Set-up is a virtualenv in .venv with requirements/dev.txt and tensorops (editable);
# it is redone only when those files change.
set -euo pipefail

cd "$(dirname "$0")/.."
venv=.venv
stamp="$venv/.installed"

python_for_venv() {
    for candidate in "${PYTHON:-}" python3.11 python3; do
        [ -n "$candidate" ] || continue
        if command -v "$candidate" >/dev/null &&
            "$candidate" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then
            echo "$candidate"
            return
        fi
    done
    echo "tools/dev.sh: needs Python 3.11 (the version asv.conf.json benchmarks); set PYTHON=" >&2
    exit 2
}

set_up() {
    local wanted
    wanted=$(cat requirements/dev.txt pyproject.toml | sha256sum | cut -d' ' -f1)
    if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$wanted" ]; then
        return
    fi
    [ -x "$venv/bin/python" ] || "$(python_for_venv)" -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet -r requirements/dev.txt
    # No build isolation: the pinned setuptools above builds it, with no index lookup.
    "$venv/bin/python" -m pip install --quiet --no-deps --no-build-isolation -e .
    echo "$wanted" >"$stamp"
}

asv_machine() {
    # asv run refuses to start without a machine file when there is no terminal.
    [ -f "$HOME/.asv-machine.json" ] || "$venv/bin/asv" machine --yes >/dev/null
}

command=${1:-}
shift || true
case "$command" in
bench)
    set_up
    asv_machine
    if [ "${1:-}" = "--tier" ]; then
        case "${2:-}" in
        pr | nightly | weekly) ;;
        *)
            echo "tools/dev.sh: --tier takes pr, nightly or weekly" >&2
            exit 2
            ;;
        esac
        # The tier's --bench regex.
        regex=$("$venv/bin/python" -c 'import sys
from tools.common import REPO_ROOT, tier_selection
from tools.nightly import RUNS
print(tier_selection(REPO_ROOT, RUNS.get(sys.argv[1], (sys.argv[1],)))[0])' "$2")
        shift 2
        set -- --bench "$regex" "$@"
    fi
    # Through tools.common.asv, as every tool runs it: jemalloc preloaded for the
    # benchmark processes, and the --bench regexes passed on to the count twins.
    "$venv/bin/python" -c 'import sys
from tools.common import REPO_ROOT, asv, run_main
run_main("tools/dev.sh", lambda: asv(*sys.argv[1:], cwd=REPO_ROOT).returncode)' run "$@" HEAD^!
    # The same self-contained site the nightly publishes (asv's own page needs CDNs).
    "$venv/bin/python" -m tools.publish --no-fetch --site .asv/html
    echo "view it with: $venv/bin/python -m http.server -d .asv/html"
    ;;
setup)
    set_up
    ;;
test)
    set_up
    "$venv/bin/ruff" check .
    "$venv/bin/ruff" format --check .
    "$venv/bin/python" -m pytest "$@"
    ;;
*)
    echo "usage: tools/dev.sh bench [--tier pr|nightly|weekly] [asv run options] | test [pytest options] | setup" >&2
    exit 2
    ;;
esac
