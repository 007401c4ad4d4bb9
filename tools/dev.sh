#!/usr/bin/env bash
# The project's entry points on a fresh machine (Python 3.11 with pip, and git):
#
#   tools/dev.sh bench [--tier T] [--rounds N] [-- asv run options]
#                        set up, benchmark the committed HEAD (tier T: nightly by default,
#                        pr, weekly or all; N rounds a row, 1 by default) and publish the
#                        site to .asv/html (tools/bench.py)
#   tools/dev.sh test [pytest options]
#                        set up, lint, and run the tests: with no options both lanes, timed
#                        against their budgets (what CI runs); with options, pytest with
#                        them (-m "not slow": the fast lane alone)
#   tools/dev.sh setup   set up only (the workflows, before tools/*.py)
#
# Set-up is a virtualenv in .venv with requirements/dev.txt and tensorops (editable),
# redone only when those files change, and what the benchmark processes need: jemalloc
# (their allocator) and valgrind (the instruction counts), from the system's packages when
# this user may install them, else jemalloc unpacked into .venv. Exit status: that of the
# command run; 4 bad input or a set-up that cannot be done here (the line says what to run).
set -euo pipefail

cd "$(dirname "$0")/.."
venv=.venv
stamp="$venv/.installed"
local_jemalloc="$venv/lib/jemalloc/libjemalloc.so.2"

say() { echo "dev.sh: $*" >&2; }
refuse() {
    say "$*"
    exit 4
}

python_for_venv() {
    for candidate in "${PYTHON:-}" python3.11 python3; do
        [ -n "$candidate" ] || continue
        if command -v "$candidate" >/dev/null &&
            "$candidate" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then
            echo "$candidate"
            return
        fi
    done
    refuse "needs Python 3.11 (the version asv.conf.json benchmarks); set PYTHON="
}

# A command as root: directly, or through sudo when it asks for no password.
as_root() {
    if [ "$(id -u)" = 0 ]; then
        "$@"
    elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
        sudo -n "$@"
    else
        return 1
    fi
}

apt_install() {
    command -v apt-get >/dev/null || return 1
    as_root apt-get install -y -qq "$@" >/dev/null 2>&1 ||
        { as_root apt-get update -qq >/dev/null 2>&1 &&
            as_root apt-get install -y -qq "$@" >/dev/null 2>&1; }
}

has_jemalloc() {
    python3 -c 'import ctypes.util, sys; sys.exit(not ctypes.util.find_library("jemalloc"))' ||
        [ -f "$local_jemalloc" ]
}

# Debian's package, downloaded and unpacked into the venv: no root needed
# (tools/_lib/asv/run.py preloads it from there).
unpack_jemalloc() {
    command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null || return 1
    local scratch
    scratch=$(mktemp -d)
    (cd "$scratch" && apt-get download libjemalloc2 >/dev/null 2>&1) || { rm -rf "$scratch"; return 1; }
    dpkg-deb -x "$scratch"/libjemalloc2_*.deb "$scratch/root"
    mkdir -p "$(dirname "$local_jemalloc")"
    cp "$(find "$scratch/root" -name 'libjemalloc.so.2*' -type f | head -n 1)" "$local_jemalloc"
    rm -rf "$scratch"
}

set_up_allocator() {
    has_jemalloc && return
    say "[set-up] jemalloc, the benchmark processes' allocator"
    apt_install libjemalloc2 || unpack_jemalloc ||
        refuse "jemalloc is needed and could not be installed here: run 'sudo apt-get install libjemalloc2' (Debian, Ubuntu) or 'sudo dnf install jemalloc' (Fedora), then this again"
    has_jemalloc || refuse "jemalloc was installed but is not found; run 'sudo ldconfig', then this again"
}

set_up_valgrind() {
    command -v valgrind >/dev/null && return
    say "[set-up] valgrind, for the instruction counts"
    apt_install valgrind ||
        say "valgrind could not be installed here ('sudo apt-get install valgrind'); the count rows will show n/a"
}

set_up() {
    local wanted
    wanted=$(cat requirements/dev.txt pyproject.toml | sha256sum | cut -d' ' -f1)
    if ! [ -f "$stamp" ] || [ "$(cat "$stamp")" != "$wanted" ]; then
        say "[set-up] the virtualenv .venv from requirements/dev.txt (first time about 40 s)"
        [ -x "$venv/bin/python" ] || "$(python_for_venv)" -m venv "$venv"
        "$venv/bin/python" -m pip install --quiet -r requirements/dev.txt
        # No build isolation: the pinned setuptools above builds it, with no index lookup.
        "$venv/bin/python" -m pip install --quiet --no-deps --no-build-isolation -e .
        echo "$wanted" >"$stamp"
    fi
    set_up_allocator
    set_up_valgrind
}

command=${1:-}
shift || true
case "$command" in
bench)
    set_up
    exec "$venv/bin/python" -m tools.bench "$@"
    ;;
setup)
    set_up
    ;;
test)
    set_up
    "$venv/bin/ruff" check .
    "$venv/bin/ruff" format --check .
    if [ $# -gt 0 ]; then
        exec "$venv/bin/python" -m pytest "$@"
    fi
    exec "$venv/bin/python" -m tests.support.lanes
    ;;
*)
    refuse "usage: tools/dev.sh bench [--tier pr|nightly|weekly|all] [--rounds N] [-- asv run options] | test [pytest options] | setup"
    ;;
esac
