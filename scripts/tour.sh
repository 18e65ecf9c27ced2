#!/usr/bin/env bash
# The tour (README command 1): installs what is missing, configures, builds every chapter, runs
# each chapter's executables at their default size and prints one summary table.
# Without a GPU it builds everything, says that the kernels need an NVIDIA GPU, and exits 77.
# Exit: 0 every run verified, 1 a run failed verification or errored, 2 set-up failed, 77 no GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
jobs=${STAGED_JOBS:-$(nproc)}
log_dir=build/tour
cmake --preset default >/dev/null
cmake --build --preset default -j "$jobs"
mkdir -p "$log_dir"

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
  echo "tour: built ${#exes[@]} executables in build/bin, but this machine has no usable NVIDIA GPU."
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
: >"$summary"
for exe in "${exes[@]}"; do
  name=$(basename "$exe")
  variant=${name#ch[0-9][0-9]_}
  printf 'running %-32s' "$name" >&2
  set +e
  "$exe" --format csv >"$log_dir/$name.csv" 2>"$log_dir/$name.err"
  rc=$?
  set -e
  echo " exit $rc" >&2
  # This executable's own row (variant = its name without chNN_), else its first row.
  row=$(awk -F, -v v="$variant" 'NR > 1 && $2 == v { print; exit }' "$log_dir/$name.csv")
  [[ -z "$row" ]] && row=$(awk 'NR == 2 { print; exit }' "$log_dir/$name.csv")
  if [[ -z "$row" ]]; then
    row="?,$variant,,,,,,,,,,,,,error"
  fi
  echo "$name,$rc,$row" >>"$summary"
  (( rc != 0 )) && status=1
done

echo
awk -F, 'BEGIN {
    printf "%-28s %-24s %12s %10s %18s %7s %8s %8s %7s %-9s %4s\n", "executable", "variant", "n",
           "median ms", "throughput", "% peak", "x cpu", "x naive", "vs lib", "verified", "exit"
  }
  {
    printf "%-28s %-24s %12s %10s %18s %7s %8s %8s %7s %-9s %4s\n", $1, $4, $5, $8,
           $11 " " $12, $13, $14, $15, $16, $17, $2
  }' "$summary"
echo
if (( status == 0 )); then
  echo "tour: every run verified. Logs and CSV in $log_dir/."
else
  echo "tour: some runs failed (exit != 0); see $log_dir/<executable>.err."
fi
exit $status
