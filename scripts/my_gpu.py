#!/usr/bin/env python3
"""Measures this machine's GPU and prints each chapter's headline row beside its prediction.

First the GPU's ceilings (`build/bin/staged_device_query`: copy and read bandwidth, FP32 rate),
then one headline run per chapter (the sizes of the GPU page's prediction table). The prediction
of a row is the fraction of its ceiling that the committed H200 run reached (docs/results),
applied to this GPU's measured ceiling:

    chapter 01  min/max of 2^28 floats      GB/s    of the read bandwidth
    chapter 02  histogram of 2^29 bytes     GB/s    of the read bandwidth
    chapter 02  scan of 2^28 words          GB/s    of the copy bandwidth
    chapter 03  sort of 64M keys            ms      the H200's time x its copy bandwidth / this one's
    chapter 04  SGEMM 4096^3                TFLOP/s of the FP32 rate

A row is "short" when its median is below the prediction by more than the run's own spread
((max - min) / median of its repetitions) and at least 5 %; "ok" otherwise. A run that does not
fit the GPU's memory says so (its program exits 2 with the memory it needs) and the others go on.
Build first (scripts/test.sh, or cmake --build --preset default).

Usage: python3 scripts/my_gpu.py [--build build] [--results docs/results] [--only 01,03]
Exit: 0 every row ran (short or not), 1 a run failed, 2 bad usage or nothing built,
77 no usable GPU.
"""
import argparse
import csv
import io
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
MIN_NOISE = 0.05

# chapter, what, command (build/bin/...), the row (variant, n, dist), the ceiling its prediction
# scales with ("read", "copy", "fp32"; "copy-time" scales a time), the figure shown.
ROWS = [
    ("01", "min/max, 2^28 floats",
     ["ch01_optimized", "--n", "2^28", "--type", "float", "--cpu-reps", "0", "--reps", "20"],
     ("optimized", "268435456", "float:uniform"), "read", "GB/s"),
    ("02", "histogram, 2^29 bytes",
     ["ch02_optimized", "--n", "2^29", "--dist", "uniform", "--cpu-reps", "0", "--skip-naive",
      "--reps", "10"],
     ("optimized:histogram", "536870912", "uniform"), "read", "GB/s"),
    ("02", "scan, 2^28 words",
     ["ch02_optimized", "--n", "2^28", "--scan-only", "--cpu-reps", "0", "--reps", "10"],
     ("optimized:scan", "268435456", None), "copy", "GB/s"),
    ("03", "sort, 64M keys",
     ["ch03_optimized", "--n", "64M", "--dist", "uniform", "--cpu-reps", "0", "--skip-naive",
      "--stages", "none", "--reps", "10"],
     ("optimized", "67108864", "uniform"), "copy-time", "ms"),
    ("04", "SGEMM, 4096^3",
     ["ch04_optimized", "--n", "4096", "--cpu-reps", "0", "--reps", "10"],
     ("optimized", "4096", "float:4096x4096x4096"), "fp32", "TFLOP/s"),
]
CEILING_COLUMN = {"read": "read_gbps", "copy": "copy_gbps", "copy-time": "copy_gbps",
                  "fp32": "fp32_gflops"}
CHAPTER_CSV = {"01": "01_minmax_reduction", "02": "02_histogram_scan_countsort",
               "03": "03_mppsort", "04": "04_matmul_global_vs_shared"}


def find_row(rows, variant, n, dist):
    """The first row of @p rows (CSV dicts) with this variant, n and dist (None: any)."""
    for r in rows:
        if r["variant"] == variant and r["n"] == n and (dist is None or r["dist"] == dist):
            return r
    return None


def shown(row, unit):
    """The figure a row is shown by: its throughput in @p unit, or its median time in ms."""
    if unit == "ms":
        return float(row["median_ms"])
    value = float(row["throughput"])
    return value / 1000 if unit == "TFLOP/s" else value


def predict(h200_row, h200_device, device, basis, unit):
    """This GPU's prediction for a row: the H200's figure scaled by the ratio of the ceilings."""
    column = CEILING_COLUMN[basis]
    ratio = float(device[column]) / float(h200_device[column])
    figure = shown(h200_row, unit)
    return figure / ratio if basis == "copy-time" else figure * ratio


def verdict(measured_row, predicted, unit):
    """("ok" | "short", the shortfall as a fraction, the run's noise) of a measured row."""
    median = float(measured_row["median_ms"])
    spread = (float(measured_row["max_ms"]) - float(measured_row["min_ms"])) / median
    noise = max(MIN_NOISE, spread)
    value = shown(measured_row, unit)
    shortfall = (value - predicted) / predicted if unit == "ms" else (predicted - value) / predicted
    return ("short" if shortfall > noise else "ok"), shortfall, noise


def read_csv(text):
    return list(csv.DictReader(io.StringIO(text)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build", help="the build folder (default build)")
    ap.add_argument("--results", default="docs/results", help="the committed H200 results")
    ap.add_argument("--only", help="chapters to run, e.g. 01,03 (default: all)")
    args = ap.parse_args()
    bin_dir = ROOT / args.build / "bin"
    results = ROOT / args.results
    only = set(args.only.split(",")) if args.only else set(CHAPTER_CSV)
    unknown = only - set(CHAPTER_CSV)
    if unknown:
        ap.error(f"no headline row for chapter {', '.join(sorted(unknown))} (01, 02, 03, 04)")
    query = bin_dir / "staged_device_query"
    if not query.exists():
        print(f"my_gpu: {query} is not built; build first (scripts/test.sh, or cmake --build "
              "--preset default)", file=sys.stderr)
        return 2
    done = subprocess.run([str(query), "--format", "csv"], capture_output=True, text=True)
    if done.returncode == 77:
        print("my_gpu: no usable NVIDIA GPU here: " + done.stderr.strip(), file=sys.stderr)
        return 77
    if done.returncode != 0:
        print(done.stdout + done.stderr, file=sys.stderr)
        return 1
    device = read_csv(done.stdout)[0]
    h200_device = read_csv((results / "device.csv").read_text())[0]
    print(f"{device['name']}: {float(device['read_gbps']):.0f} GB/s read, "
          f"{float(device['copy_gbps']):.0f} GB/s copy, "
          f"{float(device['fp32_gflops']) / 1000:.1f} TFLOP/s FP32 (measured); the predictions "
          f"scale the {h200_device['name']} rows of {args.results} by these")
    print(f"{'chapter':<8}{'row':<24}{'measured':>12}{'predicted':>12}  {'unit':<8} verdict")
    failed = 0
    for chapter, what, command, (variant, n, dist), basis, unit in ROWS:
        if chapter not in only:
            continue
        committed = read_csv((results / f"{CHAPTER_CSV[chapter]}.csv").read_text())
        h200_row = find_row(committed, variant, n, dist)
        run = subprocess.run([str(bin_dir / command[0]), *command[1:], "--format", "csv"],
                             capture_output=True, text=True)
        if run.returncode == 2 and "memory" in run.stderr:
            print(f"{chapter:<8}{what:<24}{'-':>12}{'-':>12}  {unit:<8} does not fit: "
                  f"{run.stderr.strip().splitlines()[-1]}")
            continue
        row = find_row(read_csv(run.stdout), variant, n, dist) if run.returncode == 0 else None
        if row is None or h200_row is None:
            failed += 1
            reason = (f"exit {run.returncode}: {run.stderr.strip()[-200:]}" if run.returncode
                      else "no such row in the committed results" if h200_row is None
                      else "no such row in its output")
            print(f"{chapter:<8}{what:<24}{'-':>12}{'-':>12}  {unit:<8} FAILED ({reason})")
            continue
        predicted = predict(h200_row, h200_device, device, basis, unit)
        result, shortfall, noise = verdict(row, predicted, unit)
        note = (f"{shortfall * 100:.0f} % short, more than the run's {noise * 100:.0f} % noise"
                if result == "short" else f"within {noise * 100:.0f} % or better")
        print(f"{chapter:<8}{what:<24}{shown(row, unit):>12.2f}{predicted:>12.2f}  {unit:<8} "
              f"{result}: {note}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
