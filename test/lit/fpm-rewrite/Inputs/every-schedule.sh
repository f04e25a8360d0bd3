#!/usr/bin/env bash
# Runs a rewritten program under every schedule of docs/pragma.md and thread
# counts 1 and 3, and compares each output with the serial program's.
# Usage: every-schedule.sh SERIAL_OUTPUT PROGRAM [ARGS...]
set -euo pipefail
expected=$1
shift
schedules=(auto equal cpm geometric numerical hpopta optimal "wdah" "wdah, 10"
           wdah_heuristic pss "css(3)" gss "gss, 80" fss "fss, 50" tss "tss, 30")
for threads in 1 3; do
  for schedule in "${schedules[@]}"; do
    if ! OMP_NUM_THREADS=$threads FPM_SCHEDULE=$schedule "$@" |
        diff -q "$expected" - >/dev/null; then
      echo "error: output differs from the serial run under" \
           "FPM_SCHEDULE='$schedule', OMP_NUM_THREADS=$threads" >&2
      exit 1
    fi
  done
done
echo "every schedule: ${#schedules[@]} schedules x 2 thread counts match"
