#!/usr/bin/env bash
# Installs every Debian package fpm needs to build, test and benchmark, and
# nothing when all of them are already there. Safe to run again and again.
set -euo pipefail

packages=(
  # Toolchain: Clang/LLVM 19 (the rewriter links Clang; the runtime uses libomp).
  clang-19 libclang-19-dev llvm-19-dev llvm-19-tools libomp-19-dev clang-format-19
  libclang-rt-19-dev  # sanitizer and libFuzzer runtimes: the debug preset, test/fuzz, unit-asan/tsan
  cmake ninja-build python3
  # OpenCL through the ICD loader; PoCL is the OpenCL device where no GPU is.
  ocl-icd-opencl-dev opencl-headers pocl-opencl-icd clinfo
  # MINPACK's HYBRJ, JSON, tests and benchmarks.
  libcminpack-dev nlohmann-json3-dev libgtest-dev libgmock-dev libbenchmark-dev
  # MPI for libfpmrt-mpi (one loop across the ranks of a job) and mpirun
  # for its tests.
  libopenmpi-dev openmpi-bin
  # StarPU (built with OpenCL), the peer fpm-bench-starpu compares with; never
  # a dependency of fpm itself. pkg-config finds it for CMake.
  libstarpu-dev pkg-config
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

echo "setup: installing ${missing[*]}" >&2
sudo=""
[[ $(id -u) -eq 0 ]] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
