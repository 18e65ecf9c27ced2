#!/usr/bin/env bash
# The tests of a built tree again under device profiles: with STAGED_DEVICE_PROFILE set, every
# launcher plans for that GPU's published limits (common/device_limits.cpp), so a large GPU runs
# the configurations a smaller one would get. Called by scripts/gpu_suite.sh
# (STAGED_DEVICE_PROFILES); runs alone on a tree that gpu_suite.sh or scripts/test.sh built.
#
# Usage: scripts/profile_tests.sh BUILD_DIR OUTDIR PROFILE... | all   (all: every profile)
#        scripts/profile_tests.sh --names PROFILE... | all   (prints the names, or exits 2)
# Environment: STAGED_PROFILE_JOBS (profiles tested at once, default 1), STAGED_CTEST_JOBS
#              (parallel tests, default 8, shared among the profiles tested at once).
# Tests run in two rounds. First every test but those that must run alone (the timing suites,
# label timing, and the *Largest suites, which decide from the GPU's free memory), one ctest per
# profile, STAGED_PROFILE_JOBS of them at once: other processes on the GPU slow a test but do not
# change what it checks. Then, one profile after another with nothing else on the GPU, the tests
# that must run alone.
# Output: OUTDIR/logs/ctest_<profile>.{log,xml} and ctest_<profile>_alone.{log,xml} (the two
# rounds), OUTDIR/logs/ctest_summary_<profile>.txt; on stdout one line per profile:
#   ctest, profile t4                  ok: tests: P passed, 0 failed, S skipped (As + Bs)
# (A and B: the two rounds' wall times).
# Exit: 0 every profile passed, 1 a profile failed, 2 bad usage.
set -uo pipefail
cd "$(dirname "$0")/.."
profile_usage() {
  echo "profile_tests: $1" >&2
  echo "usage: scripts/profile_tests.sh BUILD_DIR OUTDIR PROFILE... | all" \
       "  (--help: the details)" >&2
  exit 2
}
[[ "${1:-}" == -h || "${1:-}" == --help ]] && {
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0; }
names_only=0
if [[ "${1:-}" == --names ]]; then
  names_only=1; shift
  (( $# >= 1 )) || profile_usage "--names needs a profile"
else
  (( $# >= 3 )) || profile_usage "a build folder, an output folder and a profile are needed"
  build=$1 out=$2
  shift 2
  [[ -f "$build/CTestTestfile.cmake" ]] || profile_usage "$build holds no tests (build it first)"
fi
# The profiles, from the table every launcher reads: its lines {"name", cc, ...}.
mapfile -t known < <(sed -nE 's/^ *\{"([a-z0-9-]+)", [0-9]+, [0-9]+,.*/\1/p' \
                       common/device_limits.cpp)
(( ${#known[@]} > 0 )) || profile_usage "no profile found in common/device_limits.cpp"
profiles=()
for p in "$@"; do
  if [[ "$p" == all ]]; then profiles+=("${known[@]}"); continue; fi
  [[ " ${known[*]} " == *" $p "* ]] || profile_usage "no profile '$p' (${known[*]})"
  profiles+=("$p")
done
if (( names_only )); then printf '%s\n' "${profiles[@]}"; exit 0; fi
at_once=${STAGED_PROFILE_JOBS:-1}
[[ "$at_once" =~ ^[1-9][0-9]*$ ]] ||
  profile_usage "STAGED_PROFILE_JOBS must be a count, not '$at_once'"
each_jobs=$(( (${STAGED_CTEST_JOBS:-8} + at_once - 1) / at_once ))
mkdir -p "$out/logs"
out=$(cd "$out" && pwd)
# The suites that run alone: scripts/check_test_labels.py checks that this selects exactly the
# tests with RUN_SERIAL.
alone='^([A-Za-z0-9_]+/)?[A-Za-z0-9_]*(Timing|Largest)\.'

# round: profile suffix ctest-arguments...; writes the round's seconds to logs/ctest_<p><s>.s
round() {
  local p=$1 suffix=$2 t0=$SECONDS; shift 2
  STAGED_DEVICE_PROFILE=$p ctest --test-dir "$build" --output-on-failure --timeout 900 \
    --no-tests=error --output-junit "$out/logs/ctest_$p$suffix.xml" "$@" \
    >"$out/logs/ctest_$p$suffix.log" 2>&1
  echo $(( SECONDS - t0 )) >"$out/logs/ctest_$p$suffix.s"
}
export -f round
export build out
printf '%s\n' "${profiles[@]}" |
  xargs -r -P "$at_once" -I{} bash -c 'round "$1" "" -j "$2" -LE timing -E "$3"' _ {} \
    "$each_jobs" "$alone"
for p in "${profiles[@]}"; do round "$p" _alone -R "$alone"; done

failed=0
for p in "${profiles[@]}"; do
  python3 scripts/ctest_summary.py --build "$build" --junit "$out/logs/ctest_$p.xml" \
    --junit "$out/logs/ctest_${p}_alone.xml" >"$out/logs/ctest_summary_$p.txt" 2>&1
  rc=$?
  line="$(tail -n1 "$out/logs/ctest_summary_$p.txt")"
  line+=" ($(cat "$out/logs/ctest_$p.s")s + $(cat "$out/logs/ctest_${p}_alone.s")s)"
  if (( rc != 0 )); then
    failed=$((failed + 1))
    printf '%-34s %s\n' "ctest, profile $p" "FAIL: $line"
    sed -n '/^failed tests:/,/^$/p' "$out/logs/ctest_summary_$p.txt" | head -n 25
  else
    printf '%-34s %s\n' "ctest, profile $p" "ok: $line"
  fi
done
(( failed == 0 ))
