#!/usr/bin/env bash
# Run a command on a loaded machine (issue 50): N busy processes compete with it for the
# cores while it runs, and stop when it ends; its exit status is the command's.
#   tests/stress_check.sh N command [args...]
set -u
n=$1
shift
pids=()
for ((i = 0; i < n; i++)); do
  (while :; do :; done) &
  pids+=($!)
done
trap 'kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null' EXIT
echo "stress_check: $n busy processes beside: $*"
"$@"
