#!/usr/bin/env bash
# Builds fpm and runs every test (GoogleTest unit tests and the lit suites)
# through CTest. Installs what is missing first.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
# The developer's checks too: fuzz targets and sanitizer builds.
cmake --preset default -DFPM_DEVELOPER_CHECKS=ON
cmake --build --preset default
ctest --preset default --parallel "$(nproc)"
