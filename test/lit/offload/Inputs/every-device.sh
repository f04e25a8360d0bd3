#!/usr/bin/env bash
# Runs a rewritten program on every device selection (FPM_DEVICES gpu, all,
# cpu), with 1, 2 and 3 CPU threads, under every schedule of docs/pragma.md
# (or, with --quick, five that stand for the kinds: auto, a static split, two
# self-scheduling schemes and wdah), and compares each output with the serial
# program's: exactly, or with --tolerance REL, numbers within a relative
# tolerance (Inputs/compare-numbers.py), for programs whose math functions may
# round differently in libm and OpenCL C. A run must also exit 0 and write
# nothing on stderr: a device that fails (its kernel does not build, say)
# falls back to the CPU with a line there, and must not pass unnoticed.
# With FPM_DEVICES=all and 2 threads, FPM_STEAL=0: a static schedule's split
# then runs as planned, so that the CPU and the device each run their part of
# every call (with stealing, the CPU team often finishes a small loop before
# the device has started). The device runs chunks of 64 iterations or more,
# so the corpus's partitioned loops have more than 64 iterations (most more
# than 128): several chunks, at offsets other than 0. Compiled OpenCL
# programs are cached in FPM_CACHE_DIR, when it is not set a folder beside
# PROGRAM (in the test's %t).
# Usage: every-device.sh [--tolerance REL] [--quick] SERIAL_OUTPUT PROGRAM
#                        [ARGS...]
set -euo pipefail
usage="usage: every-device.sh [--tolerance REL] [--quick] SERIAL_OUTPUT"
usage+=" PROGRAM [ARGS...]"
tolerance=
quick=0
while [[ $# -gt 0 ]]; do
  case $1 in
  --tolerance) [[ $# -ge 2 ]] || { echo "$usage" >&2; exit 2; }
               tolerance=$2; shift 2 ;;
  --quick) quick=1; shift ;;
  -*) echo "$usage" >&2; exit 2 ;;
  *) break ;;
  esac
done
[[ $# -ge 2 ]] || { echo "$usage" >&2; exit 2; }
expected=$1
shift
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
work=$(cd "$(dirname "$1")" && pwd)
export FPM_CACHE_DIR=${FPM_CACHE_DIR:-$work/fpm-cache}
unset FPM_SCHEDULE FPM_DEVICES FPM_STEAL FPM_VERBOSE FPM_TRACE FPM_INJECT_FAULT

if [[ $quick == 1 ]]; then
  schedules=(auto equal gss "fss, 50" wdah)
else
  schedules=(auto equal cpm geometric numerical hpopta optimal wdah "wdah, 10"
             wdah_heuristic pss "css(3)" gss "gss, 80" fss "fss, 50" tss
             "tss, 30")
fi
devices=(gpu all cpu)
thread_counts=(1 2 3)
out=$work/every-device.out
err=$work/every-device.err

# Compares $out with the serial output; prints the first difference.
differ() {
  if [[ -n $tolerance ]]; then
    ! "${PYTHON:-python3}" "$here/compare-numbers.py" --tolerance "$tolerance" \
      "$expected" "$out" 2>&1
  else
    ! cmp "$expected" "$out" 2>&1
  fi
}

for selection in "${devices[@]}"; do
  for threads in "${thread_counts[@]}"; do
    for schedule in "${schedules[@]}"; do
      steal=
      [[ $selection == all && $threads == 2 ]] && steal=0
      where="FPM_DEVICES=$selection OMP_NUM_THREADS=$threads"
      where+=" FPM_SCHEDULE='$schedule'${steal:+ FPM_STEAL=0}"
      status=0
      env FPM_DEVICES="$selection" OMP_NUM_THREADS="$threads" \
        FPM_SCHEDULE="$schedule" ${steal:+FPM_STEAL=$steal} \
        "$@" >"$out" 2>"$err" || status=$?
      if [[ $status != 0 ]]; then
        echo "error: exit status $status under $where (stderr in $err)" >&2
        exit 1
      fi
      if [[ -s $err ]]; then
        echo "error: output on stderr under $where: $(head -n 1 "$err")" >&2
        exit 1
      fi
      if difference=$(differ); then
        echo "error: output differs from the serial run under $where:" \
             "$difference (output in $out)" >&2
        exit 1
      fi
    done
  done
done
rm -f "$out" "$err"
echo "every device: ${#devices[@]} devices x ${#schedules[@]} schedules x" \
     "${#thread_counts[@]} thread counts match"
