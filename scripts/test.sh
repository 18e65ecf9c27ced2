#!/usr/bin/env bash
# The verification suite (README command 2): installs what is missing, configures, builds, runs
# every test. Passes with or without a GPU: GPU tests report "Skipped" where there is none.
# Usage: scripts/test.sh [extra ctest arguments, e.g. -L 01_minmax_reduction]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
jobs=${STAGED_JOBS:-$(nproc)}
cmake --preset default
cmake --build --preset default -j "$jobs"
ctest --preset default -j "$jobs" "$@"
