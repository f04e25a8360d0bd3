#!/usr/bin/env bash
# Installs the build tree into a temporary prefix, builds a consumer project
# against it with find_package(fpm), and runs what it built: the install
# rules, the package and fpm_rewrite_sources, as a user meets them.
set -euo pipefail
build=$1 source=$2 cc=$3 cxx=$4 sanitize=${5:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cmake --install "$build" --prefix "$work/prefix" >/dev/null
cmake -S "$source/test/package/consumer" -B "$work/consumer" -G Ninja \
  -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" \
  -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DCMAKE_C_FLAGS="$sanitize" -DCMAKE_CXX_FLAGS="$sanitize" \
  -DFPM_EXAMPLES_DIR="$source/examples" >/dev/null
cmake --build "$work/consumer" >/dev/null
"$work/consumer/mandelbrot" 160 120
"$work/consumer/stencil" 64 5
"$work/consumer/quoted"
# The programs run on the installed library, not the build tree's.
# (Captured first: grep -q stops reading early, and under pipefail ldd's
# SIGPIPE would fail the check.)
libraries=$(ldd "$work/consumer/mandelbrot")
grep -q "$work/prefix/lib/libfpmrt.so" <<<"$libraries"
echo "package: installed fpm builds and runs a consumer project"
