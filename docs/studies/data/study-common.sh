# Sourced by the study scripts beside it: the host line every figure carries, and a clone of
# this repository (at a commit, when given) that shares its asv environment and virtualenv.

host_line() {
  lscpu | grep -E "Model name|L3 cache"
  echo "avx512: $({ grep -o -E 'avx512f|avx512_bf16|avx512_fp16' /proc/cpuinfo || true; } | sort -u | tr '\n' ' ')"
}

# study_clone MAIN DEST [COMMIT]
study_clone() {
  git clone -q "$1" "$2" || return
  if [ -n "${3:-}" ]; then git -C "$2" checkout -q "$3" || return; fi
  mkdir -p "$2/.asv" && ln -s "$1/.asv/env" "$2/.asv/env" && ln -s "$1/.venv" "$2/.venv"
}
