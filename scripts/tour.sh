#!/usr/bin/env bash
# The tour (README command 1): installs what is missing, configures, builds every chapter, runs
# each chapter's executables at their default size and prints one summary table.
# Without a GPU it builds everything, says that the kernels need an NVIDIA GPU, and exits 77.
# The table (scripts/tour_table.py) shows each executable's own row; an executable exits 0 only
# when every row it printed was verified.
# Usage: scripts/tour.sh [--help]
# Exit: 0 every run verified, 1 a run failed verification or errored, 2 set-up failed or bad
# usage, 77 no GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }
if (( $# )); then
  case "$1" in
    -h|--help) usage; exit 0 ;;
    *) echo "tour: unknown argument '$1' (see scripts/tour.sh --help)" >&2; exit 2 ;;
  esac
fi
source scripts/deps.sh
jobs=${STAGED_JOBS:-$(nproc)}
log_dir=build/tour
mkdir -p "$log_dir"
cmake --preset default >"$log_dir/configure.log" 2>&1 || { cat "$log_dir/configure.log" >&2; exit 2; }
archs=$(sed -n 's/^CMAKE_CUDA_ARCHITECTURES:[A-Z]*=//p' build/CMakeCache.txt)
echo "tour: building for CUDA architectures $archs (CUDAARCHS or -DCMAKE_CUDA_ARCHITECTURES to change)"
set +e
cmake --build --preset default -j "$jobs" 2>&1 | python3 scripts/build_progress.py "$log_dir/build.log"
build_rc=${PIPESTATUS[0]}
set -e
if (( build_rc != 0 )); then
  grep -E -m 20 'error|FAILED' "$log_dir/build.log" >&2
  echo "tour: build failed (full log: $log_dir/build.log)" >&2
  exit 2
fi

mapfile -t exes < <(find build/bin -maxdepth 1 -type f -executable -name 'ch[0-9][0-9]_*' \
                      ! -name '*_study' | sort)
if (( ${#exes[@]} == 0 )); then
  echo
  echo "tour: the build is fine, but no chapter is built yet: chapters/ holds none."
  exit 0
fi

set +e
build/bin/staged_device_query >"$log_dir/device.txt" 2>&1
device_rc=$?
set -e
if (( device_rc == 77 )); then
  echo
  built=$(find build/bin -maxdepth 1 -type f -executable -name 'ch[0-9][0-9]_*' | wc -l)
  echo "tour: built $built chapter executables in build/bin (for $archs), but this machine has no usable NVIDIA GPU."
  echo "tour: the kernels need one; run scripts/tour.sh on a machine with an NVIDIA GPU to see them run."
  exit 77
elif (( device_rc != 0 )); then
  cat "$log_dir/device.txt" >&2
  exit 3
fi
head -n1 "$log_dir/device.txt"
echo

status=0
summary="$log_dir/summary.csv"
rows="$log_dir/rows.csv"
: >"$rows"
header=""
for exe in "${exes[@]}"; do
  name=$(basename "$exe")
  variant=${name#ch[0-9][0-9]_}
  printf 'running %-32s' "$name" >&2
  set +e
  "$exe" --format csv >"$log_dir/$name.csv" 2>"$log_dir/$name.err"
  rc=$?
  set -e
  echo " exit $rc" >&2
  [[ -z "$header" ]] && header=$(head -n1 "$log_dir/$name.csv")
  # This executable's own row (variant = its name without chNN_), else its first row.
  row=$(awk -F, -v v="$variant" 'NR > 1 && $2 == v { print; exit }' "$log_dir/$name.csv")
  [[ -z "$row" ]] && row=$(awk 'NR == 2 { print; exit }' "$log_dir/$name.csv")
  echo "$name,$rc,${row:-?,$variant}" >>"$rows"
  (( rc != 0 )) && status=1
done
# The report's header names the columns; tour_table.py picks them by name (a row that is missing,
# from a run that failed early, is padded with empty fields and shows its exit code).
columns=$(awk -F, '{ print NF }' <<<"$header")
{
  echo "executable,exit,$header"
  awk -F, -v n="$(( columns + 2 ))" 'BEGIN { OFS = "," } { $n = $n; print }' "$rows"
} >"$summary"

echo
if [[ -n "$header" ]]; then
  python3 scripts/tour_table.py "$summary"
else
  echo "tour: no executable printed a report (see $log_dir/<executable>.err)."
fi
echo
if (( status == 0 )); then
  echo "tour: every run verified. Logs and CSV in $log_dir/."
else
  echo "tour: some runs failed (exit != 0); see $log_dir/<executable>.err."
fi
exit $status
