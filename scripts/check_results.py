#!/usr/bin/env python3
"""Checks the committed results against the rules of "How we measure".

- Every row is verified (`yes`) or a reference; none says `no` or `skipped`.
- Every GPU row is a median of at least --min-reps repetitions. CPU rows (variants starting with
  `cpu`) may have fewer.
- `vs_library` of every row equals a library reference row's median (same n and dist) divided by
  its own median, to the CSV's rounding: in chapter 03 the reference is `library:cub`
  (DeviceRadixSort), in chapter 04 `library:cublas`.
- docs/results/device.csv holds one row with the measured copy, read and FP32 ceilings.

Exit 0 when every rule holds, 1 otherwise. Usage: check_results.py [--results docs/results]
"""
import argparse
import csv
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
LIBRARY_REF = {"03_mppsort": "library:cub", "04_matmul_global_vs_shared": "library:cublas"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", default=str(ROOT / "docs" / "results"))
    ap.add_argument("--min-reps", type=int, default=10)
    args = ap.parse_args()
    results = pathlib.Path(args.results)
    problems = []
    for path in sorted(results.glob("[0-9][0-9]_*.csv")):
        rows = list(csv.DictReader(path.open()))
        chapter = path.stem
        for line, r in enumerate(rows, start=2):
            where = f"{path.name}:{line}: {r['variant']} n={r['n']} {r['dist']}"
            if r["verified"] not in ("yes", "reference"):
                problems.append(f"{where}: verified={r['verified']}")
            if r["variant"].startswith("cpu"):
                continue
            if int(r["reps"]) < args.min_reps:
                problems.append(f"{where}: {r['reps']} reps (< {args.min_reps})")
        ref = LIBRARY_REF.get(chapter)
        if ref:
            for line, r in enumerate(rows, start=2):
                if not r["vs_library"]:
                    continue
                own = float(r["median_ms"])
                refs = [float(o["median_ms"]) for o in rows if o["variant"] == ref
                        and o["n"] == r["n"] and o["dist"] == r["dist"]]
                if not any(abs(m / own - float(r["vs_library"])) <= 0.0006 + 1e-9 for m in refs):
                    problems.append(f"{path.name}:{line}: {r['variant']} n={r['n']} {r['dist']}: "
                                    f"vs_library {r['vs_library']} is not {ref}'s median over its "
                                    "own")
    device = results / "device.csv"
    rows = list(csv.DictReader(device.open())) if device.exists() else []
    if len(rows) != 1 or not all(float(rows[0].get(c) or 0) > 0
                                 for c in ("copy_gbps", "read_gbps", "fp32_gflops")):
        problems.append(f"{device}: expected one row with copy_gbps, read_gbps and fp32_gflops")
    for p in problems:
        print(p)
    print(f"check_results: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
