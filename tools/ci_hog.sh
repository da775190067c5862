#!/usr/bin/env bash
# CI beside a CPU hog: a clean clone of HEAD runs `bash .ci/run` (the README's `make test`) while
# stress-ng keeps both cores busy, to show that no test depends on timing or load.
#
#   bash tools/ci_hog.sh [RUNS] [WORKERS]    (default: 1 run, 2 stress-ng CPU workers)
#
# Each run is a fresh clone in a temporary folder (removed after a green run, kept after a red
# one, for its log); stress-ng (Debian's package, installed if missing) starts before the
# clone and is stopped when the run ends. Prints each run's verdict and wall time; exits 1 if
# any run failed. `make test-hog` runs it once. It takes the whole machine for seventeen to thirty-five
# minutes a run (README: 1,014-2,109 s): not part of `make test`.
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-1}"
workers="${2:-2}"
case "$runs$workers" in *[!0-9]*|"") echo "ci_hog: RUNS and WORKERS are whole numbers"; exit 2;; esac

if ! command -v stress-ng >/dev/null 2>&1; then
  echo "=== installing stress-ng from Debian's packages"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq stress-ng >/dev/null
fi

head=$(git rev-parse HEAD)
failed=0
for run in $(seq 1 "$runs"); do
  work=$(mktemp -d /tmp/ci-hog.XXXXXX)
  chmod 755 "$work"  # as a plain clone: the isolation test runs a Python as nobody in it
  stress-ng --cpu "$workers" --cpu-method matrixprod --quiet &
  hog=$!
  start=$(date +%s)
  status=0
  git clone -q . "$work/clone" && git -C "$work/clone" checkout -q "$head" \
    && (cd "$work/clone" && bash .ci/run) > "$work/ci.log" 2>&1 || status=$?
  kill "$hog" 2>/dev/null || true
  wait "$hog" 2>/dev/null || true
  seconds=$(( $(date +%s) - start ))
  grep -E '^=== (load|phase|make|CI total)' "$work/ci.log" | sed 's/^/    /' || true
  if [ "$status" -eq 0 ]; then
    echo "=== run $run of $runs beside stress-ng --cpu $workers: green in $seconds s ($head)"
    rm -rf "$work"
  else
    echo "=== run $run of $runs beside stress-ng --cpu $workers: FAILED (exit $status) after" \
         "$seconds s; log: $work/ci.log"
    failed=1
  fi
done
exit "$failed"
