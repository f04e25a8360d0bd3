#!/usr/bin/env bash
# Installs the build tree into a temporary prefix, builds a consumer project
# against it with find_package(fpm), and runs what it built: the install
# rules, the package and fpm_rewrite_sources, as a user meets them. Where
# fpm was built with MPI, also an MPI consumer of fpm::fpmrt-mpi, run on 2
# ranks; where it cannot be, a SKIP line says why (never a silent pass).
#   check-install.sh BUILD SOURCE CC CXX [SANITIZER_FLAGS [MPIEXEC]]
set -euo pipefail
build=$1 source=$2 cc=$3 cxx=$4 sanitize=${5:-} mpiexec=${6:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cmake --install "$build" --prefix "$work/prefix" >/dev/null
cmake -S "$source/test/package/consumer" -B "$work/consumer" -G Ninja \
  -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" \
  -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DCMAKE_C_FLAGS="$sanitize" -DCMAKE_CXX_FLAGS="$sanitize" \
  -DFPM_EXAMPLES_DIR="$source/examples" >/dev/null
cmake --build "$work/consumer" >"$work/build.log" 2>&1 ||
  { cat "$work/build.log"; exit 1; }
# FPM_REMARKS on old_c: the rewriter's remark is in the build's output.
grep -q "old_c.c:.*remark: loop 'old_c.main.0' is offloaded" "$work/build.log" ||
  { cat "$work/build.log"; echo "package: no remark of old_c's loop"; exit 1; }
"$work/consumer/mandelbrot" 160 120
"$work/consumer/stencil" 64 5
"$work/consumer/quoted"
"$work/consumer/omp_calls"
"$work/consumer/old_c"
"$work/consumer/implicit_c"
# The silenced warning stays silent in the rewrite too.
if grep -q "implicit-function-declaration" "$work/build.log"; then
  cat "$work/build.log"; echo "package: a silenced warning was printed"; exit 1
fi
# The programs run on the installed library, not the build tree's.
# (Captured first: grep -q stops reading early, and under pipefail ldd's
# SIGPIPE would fail the check.)
libraries=$(ldd "$work/consumer/mandelbrot")
grep -q "$work/prefix/lib/libfpmrt.so" <<<"$libraries"
# ... under the soname of the ABI its headers declare.
abi=$(sed -n 's/^#define FPM_ABI_VERSION \([0-9]*\)$/\1/p' \
  "$work/prefix/include/fpm/version.h")
grep -q "libfpmrt.so.$abi => $work/prefix/lib/libfpmrt.so.$abi" \
  <<<"$libraries" || {
  echo "$libraries"
  echo "package: the program does not load libfpmrt.so.$abi (FPM_ABI_VERSION)"
  exit 1
}
echo "package: installed fpm builds and runs a consumer project"

# A Makefile project, unchanged, built with CC=fpm-cc: it runs, its
# dependency files name its sources (a second make has nothing to do), and
# the wrapper leaves no temporary folder behind.
cp -r "$source/test/package/make-consumer" "$work/make"
mkdir "$work/wrapper-tmp"
TMPDIR="$work/wrapper-tmp" make -s -C "$work/make" CC="$work/prefix/bin/fpm-cc"
[ -z "$(ls -A "$work/wrapper-tmp")" ] ||
  { ls -la "$work/wrapper-tmp"; echo "package: fpm-cc left files"; exit 1; }
"$work/make/app"
# (Captured first, as ldd's above: grep -q stops reading early.)
symbols=$(nm "$work/make/app")
grep -q fpm_parallel_for <<<"$symbols" ||
  { echo "package: the Makefile project's app calls no fpm_parallel_for"; exit 1; }
again=$(TMPDIR="$work/wrapper-tmp" make -C "$work/make" \
  CC="$work/prefix/bin/fpm-cc")
grep -q "up to date" <<<"$again" ||
  { echo "$again"; echo "package: a second make did something"; exit 1; }
echo "package: a Makefile project builds with CC=fpm-cc"
help=$("$work/prefix/bin/fpm-c++" --fpm-help)
grep -q "^usage: fpm-c++ \[-Rfpm\]" <<<"$help" ||
  { echo "$help"; echo "package: fpm-c++ --fpm-help gives no usage"; exit 1; }

# pkg-config: the rewritten file compiled and linked with fpm.pc's flags.
export PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig"
"$work/prefix/bin/fpm-rewrite" "$source/test/package/make-consumer/main.c" \
  -o "$work/pc-main.c" -- -DSCALE=3
# shellcheck disable=SC2046 # pkg-config's output is words
"$cc" -DSCALE=3 -iquote "$source/test/package/make-consumer" \
  $(pkg-config --cflags fpm) "$work/pc-main.c" -o "$work/pc-app" \
  $(pkg-config --libs fpm)
"$work/pc-app"
unset PKG_CONFIG_PATH
echo "package: pkg-config --cflags --libs fpm builds a rewritten file"

# libfpmrt-mpi: installed (its export set) exactly where fpm found MPI.
if [ ! -f "$work/prefix/lib/cmake/fpm/fpmMpiTargets.cmake" ]; then
  echo "package: SKIP fpm::fpmrt-mpi: fpm was built without MPI" \
    "(install libopenmpi-dev: scripts/setup.sh)"
  exit 0
fi
[ -n "$mpiexec" ] || mpiexec=$(command -v mpirun || true)
# find_package(fpm COMPONENTS mpi) must find MPI through C where the
# project enables it and through C++ alone (fpmConfig.cmake), so both.
for languages in "C;CXX" CXX; do
  consumer="$work/mpi-consumer-${languages/;/-}"
  cmake -S "$source/test/package/mpi-consumer" -B "$consumer" -G Ninja \
    --no-warn-unused-cli \
    -DFPM_CONSUMER_LANGUAGES="$languages" \
    -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" \
    -DCMAKE_PREFIX_PATH="$work/prefix" \
    -DCMAKE_C_FLAGS="$sanitize" -DCMAKE_CXX_FLAGS="$sanitize" >/dev/null
  # Its output only when it fails (a link error goes to stdout).
  if ! cmake --build "$consumer" >"$work/mpi-build.log" 2>&1; then
    cat "$work/mpi-build.log"
    echo "package: the fpm::fpmrt-mpi consumer ($languages) does not build"
    exit 1
  fi
  libraries=$(ldd "$consumer/mpi_consumer")
  grep -q "$work/prefix/lib/libfpmrt-mpi.so" <<<"$libraries"
  # run-mpi.sh: test/mpi's settings (run as root, one machine's shared
  # memory, oversubscribed); 77 and a SKIP line where there is no mpirun.
  status=0
  "$source/test/mpi/run-mpi.sh" "$mpiexec" "$work/mpi-profiles" \
    --expect "^mpi_consumer: ok on 2 ranks$" \
    -np 2 "$consumer/mpi_consumer" || status=$?
  if [ "$status" -eq 77 ]; then
    echo "package: SKIP running the fpm::fpmrt-mpi consumer: no mpirun" \
      "($languages: it builds)"
    exit 0
  fi
  if [ "$status" -ne 0 ]; then
    echo "package: the fpm::fpmrt-mpi consumer ($languages) failed"
    exit 1
  fi
done
echo "package: installed fpm::fpmrt-mpi builds (C and C++, C++ alone) and" \
  "runs a consumer on 2 ranks"
