#!/usr/bin/env bash
# The GPU suite: on a machine with an NVIDIA GPU, builds with Ninja, runs every ctest label,
# compute-sanitizer (memcheck, racecheck, synccheck, initcheck) over common/sanitize.args and
# each chapter's sanitize.args (lines "<executable in build/bin> <args>", or a path relative to the
# build dir such as tests/common_gpu_tests, run with its arguments as listed; leading VAR=value
# words set the environment of that run; STAGED_SKIP_PEAKS=1 unless a line says otherwise;
# STAGED_SANITIZER_API_ERRORS=no there makes the tool leave out CUDA API errors; a leading
# "@tools=a,b" runs the line under those tools only; "@alone" runs it when no other sanitizer
# run is on the GPU), and the benchmark sweep of each chapter's bench.args. Writes logs and CSV
# under OUTDIR and prints a short pass/fail table last.
#
# Usage: scripts/gpu_suite.sh OUTDIR [chapter-folder ... | none]   (default: every chapter;
#        a list also limits the build to those chapters and what they need; none = foundation)
# Environment: ARCH (CUDA architectures, default native: the GPU of this machine; e.g.
#              ARCH=75-virtual for a PTX-only build), BUILD_DIR (default build-gpu),
#              STAGED_CTEST_JOBS (parallel tests, default 8), STAGED_SANITIZE_JOBS (parallel
#              sanitizer runs, default 8), STAGED_SANITIZE_TIMEOUT_S (limit of one sanitizer
#              run, default 300; a run past it counts as a failure, "timeout"),
#              STAGED_SKIP_BENCH=1 (tests and sanitizers only), STAGED_SKIP_SANITIZE=1,
#              STAGED_SKIP_TESTS=1, STAGED_BENCH_ONLY="<chapter> ..." (benchmark only those),
#              STAGED_UPDATE_RESULTS=1 (also copy the CSV into docs/results/),
#              STAGED_DEVICE_PROFILES="t4 rtx3060-laptop ..." or "all" (run the tests again under
#              each device profile: the launchers plan for that GPU's limits; see
#              scripts/profile_tests.sh, and its STAGED_PROFILE_JOBS, profiles tested at once).
# Output: OUTDIR/summary.txt, OUTDIR/logs/*, OUTDIR/results/<chapter>.csv and device.csv (the
#         measured peaks and the timer's empty-launch cost), OUTDIR/plots/*.svg
# Tests run STAGED_CTEST_JOBS at a time, except those that time the GPU (label timing,
# RUN_SERIAL: see scripts/check_test_labels.py), which ctest runs alone.
# A sweep line whose program refuses it for want of device memory (exit 2, "... of device memory
# but only ... is free") or of GPUs (chapter 06's "--gpus 8: this machine has 1 GPU(s); ...") is
# listed in logs/bench_<chapter>_unfit.txt, not counted as a failure.
# Long lines: a bench.args line that starts with "@long" has a GPU row past 50 ms on the H200
# (seconds on a laptop GPU). Where the GPU has a kernel time limit (a display watchdog, which
# staged_device_query reports) those lines are skipped and listed in
# logs/bench_<chapter>_watchdog.txt, unless STAGED_WATCHDOG_OK=1; a line without the tag whose
# GPU rows took more than 50 ms here is listed in logs/bench_<chapter>_long.txt.
# Exit: 0 all passed, 1 something failed, 2 bad usage, 77 no usable GPU (found before building
# where nvidia-smi, or the absence of any NVIDIA device node, says so).
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
gpu_suite_usage() {
  echo "gpu_suite: $1" >&2
  echo "usage: scripts/gpu_suite.sh OUTDIR [chapter-folder ... | none]   (--help: the details)" >&2
  exit 2
}
case "${1:-}" in
  -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
  "") gpu_suite_usage "an output folder is needed" ;;
  -*) gpu_suite_usage "unknown option '$1'" ;;
esac
out=$1
shift
for ch in "$@"; do
  [[ "$ch" == none || -d "chapters/$ch" ]] || gpu_suite_usage "no chapter folder chapters/$ch"
done
if [[ -n "${STAGED_DEVICE_PROFILES:-}" ]]; then  # known names, before a build of minutes
  # shellcheck disable=SC2086  # a list of names
  scripts/profile_tests.sh --names $STAGED_DEVICE_PROFILES >/dev/null ||
    gpu_suite_usage "STAGED_DEVICE_PROFILES: see the line above"
fi

# No GPU, no suite: say so before a build of several minutes. nvidia-smi decides where it is
# installed; without it, a machine with no NVIDIA device node (/dev/nvidia0, or /dev/dxg under
# WSL) has none; otherwise staged_device_query decides after the build.
if command -v nvidia-smi >/dev/null 2>&1; then
  if ! nvidia-smi -L 2>/dev/null | grep -q "^GPU "; then
    echo "gpu_suite: no usable NVIDIA GPU (nvidia-smi lists none); the suite needs one" >&2
    exit 77
  fi
elif [[ ! -e /dev/nvidia0 && ! -e /dev/dxg ]]; then
  echo "gpu_suite: no NVIDIA GPU found (no nvidia-smi, no /dev/nvidia0); the suite needs one" >&2
  exit 77
fi
mkdir -p "$out/logs" "$out/results" "$out/plots"
out=$(cd "$out" && pwd)
build=${BUILD_DIR:-build-gpu}
arch=${ARCH:-native}
jobs=$(nproc)
summary="$out/summary.txt"
: >"$summary"
failures=0

note() { printf '%-34s %s\n' "$1" "$2" | tee -a "$summary"; }
elapsed() { echo "$(( $(date +%s) - $1 ))s"; }

chapters=("$@")
chapter_filter="-DSTAGED_CHAPTERS="  # always explicit: a reused build dir caches the last list
if (( ${#chapters[@]} == 0 )); then
  mapfile -t chapters < <(cd chapters 2>/dev/null && ls -d [0-9][0-9]_*/ 2>/dev/null | tr -d /)
elif [[ "${chapters[0]}" == none ]]; then  # the foundation alone
  chapters=()
  chapter_filter="-DSTAGED_CHAPTERS=none"
else
  chapter_filter="-DSTAGED_CHAPTERS=$(IFS=';'; echo "${chapters[*]}")"
fi

# --- configure and build ----------------------------------------------------------------------
t0=$(date +%s)
if ! cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$arch" \
     "$chapter_filter" >"$out/logs/configure.log" 2>&1; then
  note configure "FAIL (logs/configure.log)"; cat "$summary"; exit 1
fi
if ! cmake --build "$build" -j "$jobs" >"$out/logs/build.log" 2>&1; then
  note build "FAIL (logs/build.log)"
  grep -m 20 -E 'error' "$out/logs/build.log"
  cat "$summary"; exit 1
fi
note build "ok ($(elapsed "$t0"), arch $arch)"

if ! "$build/bin/staged_device_query" >"$out/logs/device.txt" 2>&1; then
  cat "$out/logs/device.txt"
  note device "no usable GPU"; exit 77
fi
note device "$(head -n1 "$out/logs/device.txt" | cut -c9-)"
watchdog=0
if grep -q "^kernel time limit: yes" "$out/logs/device.txt"; then
  watchdog=1
  note "kernel time limit" "yes: @long sweep lines skipped (STAGED_WATCHDOG_OK=1 runs them)"
fi
# The measured peaks and the timer's cost of an empty launch, as one CSV row (the ceilings every
# page quotes come from this file).
"$build/bin/staged_device_query" --format csv >"$out/results/device.csv" 2>"$out/logs/device_csv.err"
note "empty launch (timer)" "$(awk -F, 'NR == 2 { print $NF " us" }' "$out/results/device.csv")"

# --- all tests -------------------------------------------------------------------------------
if [[ "${STAGED_SKIP_TESTS:-0}" != 1 ]]; then
  t0=$(date +%s)
  ctest --test-dir "$build" -j "${STAGED_CTEST_JOBS:-8}" --output-on-failure --timeout 900 \
        --no-tests=error --output-junit "$out/logs/ctest.xml" >"$out/logs/ctest.log" 2>&1
  ctest_rc=$?
  python3 scripts/ctest_summary.py --build "$build" --junit "$out/logs/ctest.xml" \
    --skip-log "$out/logs/skipped.txt" --name-skips --times-log "$out/logs/test-times.txt" \
    >"$out/logs/ctest_summary.txt" 2>&1
  tests_line=$(tail -n1 "$out/logs/ctest_summary.txt")
  if (( ctest_rc != 0 )); then
    failures=$((failures + 1))
    note ctest "FAIL: $tests_line ($(elapsed "$t0"))"
    sed -n '/^failed tests:/,/^$/p' "$out/logs/ctest_summary.txt" | head -n 25 | tee -a "$summary"
  else
    note ctest "ok: $tests_line ($(elapsed "$t0"))"
  fi
  if ! python3 scripts/check_test_labels.py --build "$build" >"$out/logs/labels.txt" 2>&1; then
    failures=$((failures + 1))
    note labels "FAIL (logs/labels.txt)"
  fi
  # The same tests again with the launchers planning for each profiled GPU's limits.
  if [[ -n "${STAGED_DEVICE_PROFILES:-}" ]]; then
    # shellcheck disable=SC2086  # a list of names
    scripts/profile_tests.sh "$build" "$out" $STAGED_DEVICE_PROFILES >"$out/logs/profiles.txt" 2>&1
    profiles_rc=$?
    tee -a "$summary" <"$out/logs/profiles.txt"
    (( profiles_rc != 0 )) && failures=$((failures + 1))
  fi
fi

# --- compute-sanitizer ------------------------------------------------------------------------
sanitize_one() {  # tool chapter index exe args...
  local tool=$1 chapter=$2 idx=$3; shift 3
  # The sanitizers check correctness, not time: the timer's stream gate is off (instrumented
  # launches are slow to queue, and a tool that waits for the stream would wait for the gate).
  local vars=(STAGED_SKIP_PEAKS=1 STAGED_GATE_TIMEOUT_S=0)
  local limit=(timeout --kill-after=10 "${STAGED_SANITIZE_TIMEOUT_S:-300}")
  while [[ "$1" =~ ^[A-Z_][A-Z0-9_]*= ]]; do vars+=("$1"); shift; done  # VAR=value prefixes
  local exe=$1; shift
  local log="$out/logs/sanitize_${chapter}_${idx}_${tool}.log"
  local options=()
  # A line's STAGED_SANITIZER_API_ERRORS=no: the tool leaves out CUDA API errors (a library that
  # probes the GPU, as NCCL does for kernels it has no image for, returns errors it handles).
  local v
  for v in "${vars[@]}"; do
    [[ "$v" == STAGED_SANITIZER_API_ERRORS=no ]] && options+=(--report-api-errors no)
  done
  local args=() input=/dev/null
  while (( $# )); do  # "< file" in an args line feeds that file (relative to the repo) to stdin
    if [[ "$1" == "<" ]]; then input="$root/$2"; shift 2; else args+=("$1"); shift; fi
  done
  if [[ "$exe" == */* ]]; then  # a test binary, relative to the build dir: run as listed
    env "${vars[@]}" "${limit[@]}" compute-sanitizer --tool "$tool" --error-exitcode 99 \
      "${options[@]}" --print-limit 20 "$root/$build/$exe" "${args[@]}" <"$input" >"$log" 2>&1
  else
    env "${vars[@]}" "${limit[@]}" compute-sanitizer --tool "$tool" --error-exitcode 99 \
      "${options[@]}" --print-limit 20 "$root/$build/bin/$exe" "${args[@]}" --reps 1 --warmup 0 --cpu-reps 0 \
      <"$input" >"$log" 2>&1
  fi
  local rc=$?
  echo "$rc $tool $chapter $idx $exe" >>"$out/logs/sanitize_results.txt"
}
export -f sanitize_one
export out root build
if [[ "${STAGED_SKIP_SANITIZE:-0}" != 1 ]] && command -v compute-sanitizer >/dev/null; then
  t0=$(date +%s)
  : >"$out/logs/sanitize_results.txt"
  jobs_file="$out/logs/sanitize_jobs.txt"
  : >"$jobs_file"
  : >"$jobs_file.alone"
  for ch in common "${chapters[@]}"; do
    args_file="chapters/$ch/sanitize.args"
    [[ "$ch" == common ]] && args_file=common/sanitize.args
    [[ -f "$args_file" ]] || continue
    i=0
    while read -r line; do
      [[ -z "$line" || "$line" == \#* ]] && continue
      i=$((i + 1))
      # "@tools=memcheck,synccheck <line>" runs the line under those tools only (the file says
      # why the others are left out, e.g. a tool that does not support a CUDA feature);
      # "@alone <line>" runs it with no other sanitizer run on the GPU (the file says why).
      tools="memcheck racecheck synccheck initcheck"
      target=$jobs_file
      while [[ "$line" =~ ^@([a-z]+)(=[a-z,]+)?[[:space:]]+(.*)$ ]]; do
        case ${BASH_REMATCH[1]} in
          tools) tools=${BASH_REMATCH[2]#=}; tools=${tools//,/ } ;;
          alone) target=$jobs_file.alone ;;
          *) echo "gpu_suite: $args_file: unknown tag @${BASH_REMATCH[1]}" >&2; exit 2 ;;
        esac
        line=${BASH_REMATCH[3]}
      done
      for tool in $tools; do
        echo "$tool $ch $i $line" >>"$target"
      done
    done <"$args_file"
  done
  # One tool at a time across all chapters (initcheck, the slowest, last), so a slow tool cannot
  # hold every slot while other chapters wait.
  awk '{ print index("memcheck synccheck racecheck initcheck", $1) "\t" $0 }' "$jobs_file" \
    | sort -s -n -k1,1 | cut -f2- >"$jobs_file.sorted" && mv "$jobs_file.sorted" "$jobs_file"
  xargs -r -P "${STAGED_SANITIZE_JOBS:-8}" -L 1 bash -c 'sanitize_one "$@"' _ <"$jobs_file"
  xargs -r -P 1 -L 1 bash -c 'sanitize_one "$@"' _ <"$jobs_file.alone"
  for ch in common "${chapters[@]}"; do
    total=$(awk -v c="$ch" '$3 == c' "$out/logs/sanitize_results.txt" | wc -l)
    (( total == 0 )) && { note "sanitize $ch" "no sanitize.args"; continue; }
    bad=$(awk -v c="$ch" '$3 == c && $1 != 0 {
            print $2 "#" $4 ($1 == 124 || $1 == 137 ? "(timeout)" : "(exit " $1 ")") }' \
            "$out/logs/sanitize_results.txt" | sort | tr '\n' ' ')
    if [[ -n "$bad" ]]; then
      failures=$((failures + 1))
      note "sanitize $ch" "FAIL: $bad"
    else
      note "sanitize $ch" "clean ($total runs)"
    fi
  done
  note "sanitize time" "$(elapsed "$t0")"
fi

# --- benchmark sweep --------------------------------------------------------------------------
if [[ "${STAGED_SKIP_BENCH:-0}" != 1 ]]; then
  for ch in "${chapters[@]}"; do
    if [[ -n "${STAGED_BENCH_ONLY:-}" && " $STAGED_BENCH_ONLY " != *" $ch "* ]]; then continue; fi
    args_file="chapters/$ch/bench.args"
    [[ -f "$args_file" ]] || { note "bench $ch" "no bench.args"; continue; }
    t0=$(date +%s)
    csv="$out/results/$ch.csv"
    : >"$csv"
    ok=0; bad=0; unfit=0; skipped=0; long=0; i=0
    while read -r line; do
      [[ -z "$line" || "$line" == \#* ]] && continue
      i=$((i + 1))
      tagged=0
      if [[ "$line" == "@long "* ]]; then tagged=1; line=${line#@long }; fi
      if (( tagged && watchdog )) && [[ "${STAGED_WATCHDOG_OK:-0}" != 1 ]]; then
        skipped=$((skipped + 1))
        echo "$line: a launch may outlast the display watchdog" >>"$out/logs/bench_${ch}_watchdog.txt"
        continue
      fi
      read -r -a words <<<"$line"
      exe=${words[0]}
      "$build/bin/$exe" "${words[@]:1}" --format csv >"$out/logs/bench_${ch}_$i.csv" \
        2>"$out/logs/bench_${ch}_$i.err" </dev/null
      # stderr notes (crossover sizes, per-kernel breakdowns) are kept next to the CSV.
      rc=$?
      if (( rc == 0 )); then
        ok=$((ok + 1))
      elif (( rc == 2 )) && grep -qE "of device memory but only|GPU\(s\); a sort spans" \
          "$out/logs/bench_${ch}_$i.err"; then
        # A line this machine cannot hold (its GPUs' memory, or more GPUs than it has): said,
        # not failed; the sweep goes on.
        unfit=$((unfit + 1))
        echo "$line: $(tail -n1 "$out/logs/bench_${ch}_$i.err")" >>"$out/logs/bench_${ch}_unfit.txt"
      else
        bad=$((bad + 1)); echo "exit $rc: $line" >>"$out/logs/bench_${ch}_failed.txt"
      fi
      # The longest GPU row (median_ms, column 6) of an untagged line: past 50 ms it is listed.
      if (( !tagged )); then
        slowest=$(awk -F, 'NR > 1 && $2 !~ /^cpu/ && $6 + 0 > m { m = $6 + 0 } END { print m + 0 }' \
          "$out/logs/bench_${ch}_$i.csv")
        if awk -v m="$slowest" 'BEGIN { exit !(m > 50) }'; then
          long=$((long + 1)); echo "$line: a GPU row of $slowest ms" >>"$out/logs/bench_${ch}_long.txt"
        fi
      fi
      if [[ ! -s "$csv" ]]; then head -n1 "$out/logs/bench_${ch}_$i.csv" >"$csv"; fi
      tail -n +2 "$out/logs/bench_${ch}_$i.csv" >>"$csv"
    done <"$args_file"
    rows=$(( $(wc -l <"$csv") - 1 ))
    unfit_note=""
    (( unfit > 0 )) && unfit_note=", $unfit too large for this machine (logs/bench_${ch}_unfit.txt)"
    (( skipped > 0 )) && unfit_note+=", $skipped skipped for the kernel time limit (logs/bench_${ch}_watchdog.txt)"
    (( long > 0 )) && unfit_note+=", $long untagged with a GPU row past 50 ms (logs/bench_${ch}_long.txt)"
    if (( bad > 0 )); then
      failures=$((failures + 1))
      note "bench $ch" "FAIL: $bad of $i runs failed, $rows rows$unfit_note ($(elapsed "$t0"))"
    else
      note "bench $ch" "ok: $i runs, $rows rows$unfit_note ($(elapsed "$t0"))"
    fi
    if [[ "${STAGED_UPDATE_RESULTS:-0}" == 1 ]]; then cp "$csv" "docs/results/$ch.csv"; fi
  done
  if [[ "${STAGED_UPDATE_RESULTS:-0}" == 1 ]]; then cp "$out/results/device.csv" docs/results/device.csv; fi
  if python3 -c 'import matplotlib' 2>/dev/null && [[ -f scripts/plot_results.py ]]; then
    # The ceilings drawn on the plots come from $out/results/device.csv (this run's peaks).
    python3 scripts/plot_results.py --results "$out/results" --out "$out/plots" \
      >"$out/logs/plots.log" 2>&1 \
      && note plots "ok ($(ls "$out/plots" | wc -l) files)" || note plots "FAIL (logs/plots.log)"
  fi
fi

echo
echo "==== GPU suite summary ($(date -u +%Y-%m-%dT%H:%MZ)) ===="
cat "$summary"
if (( failures > 0 )); then
  echo "RESULT: FAIL ($failures failing steps)"
  exit 1
fi
echo "RESULT: PASS"
