#!/usr/bin/env bash
# The main job: build fpm; partition the shipped example profiles with every
# static partitioner and compare them under the one cost model; show how the
# self-scheduling schemes would grant the same loop's chunks; then run a
# pragma-annotated program end to end (rewritten, compiled, run) under
# several schedules, beside its serial run.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
cmake --preset default >/dev/null
cmake --build --preset default

partition=build/bin/fpm-partition
profiles=(examples/profiles/*.json)
size=${FPM_DEMO_SIZE:-6000}

echo
echo "== fpm-partition --size $size --algorithm wdah ${profiles[*]}"
"$partition" --size "$size" --algorithm wdah "${profiles[@]}"

echo
echo "== Every partitioner on the same $size iterations (cost model of docs/profiles.md)"
for algorithm in equal cpm geometric numerical hpopta wdah-heuristic wdah optimal; do
  "$partition" --size "$size" --algorithm "$algorithm" --format json "${profiles[@]}"
  echo
done | python3 scripts/compare-partitioners.py

echo
echo "== Self-scheduling: the chunks a master grants for $size iterations on ${#profiles[@]} workers"
for scheme in gss fss tss; do
  "$partition" --size "$size" --algorithm "$scheme" --workers "${#profiles[@]}"
done

echo
echo "== A loop end to end: examples/mandelbrot/mandelbrot.c, rewritten by fpm-rewrite at build time"
echo "   into build/examples/fpm/fpm-example-mandelbrot/mandelbrot.fpm.c, compiled and run against libfpmrt"
for schedule in equal gss fss "tss, 50"; do
  echo "-- FPM_SCHEDULE=\"$schedule\""
  FPM_VERBOSE=1 FPM_SCHEDULE="$schedule" build/bin/fpm-example-mandelbrot 1200 900 2>&1
done

echo
echo "== One pragma'd loop on the CPU team and an OpenCL device at once: examples/coexec/coexec.cpp"
echo "   (matrix multiply rows; fpm-rewrite generates the OpenCL C kernel from the loop's body:"
build/bin/fpm-rewrite -Rfpm examples/coexec/coexec.cpp -o build/demo-coexec.fpm.cpp -- -std=c++20 2>&1 |
  grep 'remark:' | sed 's|^.*/examples/|   examples/|'
echo "   the first call guesses, later ones split by the speeds the loop measured)"
FPM_VERBOSE=1 FPM_TRACE=build/coexec-trace.json build/bin/fpm-example-coexec 1024 5 2>&1
echo "   (a Chrome trace of every chunk and transfer: build/coexec-trace.json; open it in https://ui.perfetto.dev)"
echo "-- the same loop, the device failing at its second chunk (FPM_INJECT_FAULT=opencl0:2)"
FPM_INJECT_FAULT=opencl0:2 build/bin/fpm-example-coexec 512 2 2>&1

echo
echo "== Profiling on purpose: fpm-profile -- fpm-example-coexec"
echo "   (each named loop benchmarked on every PE over a ladder of sizes at its first call,"
echo "   its written sections saved and put back, so the program's result is unchanged)"
rm -rf build/demo-profiles
build/bin/fpm-profile --dir build/demo-profiles --points 6 --time 0.5 -- \
  build/bin/fpm-example-coexec 512 3 2>&1
build/bin/fpm-profile --show --dir build/demo-profiles
build/bin/fpm-profile --plot build/demo-profiles/speeds.svg --dir build/demo-profiles
echo "   (speed against size, one curve per PE: build/demo-profiles/speeds.svg)"
