#!/usr/bin/env bash
# The verification suite (README command 2): installs what is missing, configures, builds and runs
# the tests, then prints one table per chapter and a last line such as
#   tests: P passed, 0 failed, S skipped (no GPU)
# Passes with or without a GPU: GPU tests report "skipped" where there is none.
#
# Usage: scripts/test.sh [--chapter NN|FOLDER] [--junit FILE] [-R REGEX] [-E REGEX] [-L LABEL]
#                        [-LE LABEL]
#   --chapter 03      build and run chapter 03's whole suite (its label, 03_mppsort) only
#   --junit FILE      also write JUnit XML (ctest --output-junit) for autograders and CI; each
#                     skipped test says why ("no GPU", or the memory it needs); a relative FILE
#                     goes under build/
#   -R, -E, -L, -LE   passed to ctest: run the tests whose name matches (-R) or does not (-E)
#                     REGEX, or that carry (-L) or do not carry (-LE) a label matching LABEL,
#                     e.g. -R MinMax or -L host; any other argument is a usage error
# Exit: 0 every test that ran passed, 1 a test failed (or none ran, or no test matched the
# arguments), 2 bad usage or missing tools, 77 every test selected needs a GPU and there is none.
# The build prints its progress every few seconds (the whole output goes to build/build.log).
# Tests run in parallel, one job per core (STAGED_JOBS to change), except those that time the GPU
# (label timing), which run alone. The full ctest output goes to build/test.log, the names of
# skipped tests to build/skipped.txt, where the time went (per label, slowest tests) to
# build/test-times.txt.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }
chapter=""
junit=""
ctest_args=()
bad_usage() { echo "test.sh: $1" >&2; grep -A1 "^# Usage:" "$0" | sed "s/^# //" >&2; exit 2; }
while (( $# )); do
  case "$1" in
    --chapter|--junit|-R|-E|-L|-LE)
      [[ $# -ge 2 && -n "$2" && "$2" != -* ]] || bad_usage "$1 needs a value"
      case "$1" in
        --chapter) chapter=$2 ;;
        --junit) junit=$2 ;;
        *) ctest_args+=("$1" "$2") ;;
      esac
      shift 2 ;;
    --chapter=*) chapter=${1#*=}; [[ -n "$chapter" ]] || bad_usage "--chapter needs a value"; shift ;;
    --junit=*) junit=${1#*=}; [[ -n "$junit" ]] || bad_usage "--junit needs a value"; shift ;;
    -h|--help) usage; exit 0 ;;
    *) bad_usage "unknown option '$1'" ;;
  esac
done

targets=()
if [[ -n "$chapter" ]]; then
  folder=$(cd chapters && ls -d "$chapter"*/ 2>/dev/null | head -n1 | tr -d /)
  if [[ -z "$folder" || ! -d "chapters/$folder" ]]; then
    echo "test.sh: no chapter '$chapter' (try 01 ... 05 or a folder name in chapters/)" >&2
    exit 2
  fi
  prefix="ch${folder:0:2}"
  ctest_args+=(-L "^${folder}\$")
fi

source scripts/deps.sh || exit 2
set +e  # deps.sh turns on -e; this script checks each step itself
jobs=${STAGED_JOBS:-$(nproc)}
log="$root/build/test.log"
cmake --preset default -DSTAGED_CHAPTERS= >/dev/null || { echo "test.sh: configure failed" >&2; exit 2; }
if [[ -n "$chapter" ]]; then
  # The chapter's executables and test binary (the chapters it builds on come as dependencies),
  # and staged_device_query, which tells whether a GPU is here.
  mapfile -t targets < <(ninja -C build -t targets all 2>/dev/null |
                          grep -oE "^${prefix}_[a-z0-9_]+:" | tr -d : | grep -v '_kernels$' | sort -u)
  targets+=(staged_device_query)
  echo "test.sh: building chapter $folder (${#targets[@]} targets)"
  cmake --build --preset default -j "$jobs" --target "${targets[@]}" 2>&1 |
    python3 scripts/build_progress.py "$root/build/build.log"
  build_rc=${PIPESTATUS[0]}
else
  echo "test.sh: building every chapter"
  cmake --build --preset default -j "$jobs" 2>&1 |
    python3 scripts/build_progress.py "$root/build/build.log"
  build_rc=${PIPESTATUS[0]}
fi
if (( build_rc != 0 )); then
  grep -E -m 20 'error|FAILED' "$root/build/build.log" >&2
  echo "test.sh: build failed (full log: build/build.log)" >&2
  exit 1
fi

no_gpu=()
build/bin/staged_device_query >/dev/null 2>&1
[[ $? -eq 77 ]] && no_gpu=(--no-gpu)
xml=${junit:-$root/build/test-results.xml}
[[ "$xml" == /* ]] || xml="$root/build/$xml"
echo "test.sh: running tests, $jobs at a time, those that time the GPU alone" \
     "(full output: build/test.log)"
ctest --test-dir build -j "$jobs" --output-on-failure --no-tests=error --output-junit "$xml" \
  "${ctest_args[@]}" >"$log" 2>&1
ctest_rc=$?
if grep -q "No tests were found" "$log"; then
  echo "test.sh: no tests matched ${ctest_args[*]}" >&2
  exit 1
fi
python3 scripts/ctest_summary.py --build build --junit "$xml" --skip-log build/skipped.txt \
  --name-skips --times-log build/test-times.txt "${no_gpu[@]}"
summary_rc=$?
[[ -n "$junit" ]] && echo "JUnit XML: $xml" >&2
(( summary_rc == 77 )) && exit 77
(( ctest_rc != 0 || summary_rc != 0 )) && exit 1
exit 0
