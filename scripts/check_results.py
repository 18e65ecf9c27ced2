#!/usr/bin/env python3
"""Checks the committed results against the rules of "How we measure".

- Every row is verified (`yes`) or a reference; none says `no` or `skipped`.
- Every GPU row is a median of at least --min-reps repetitions. CPU rows (variants starting with
  `cpu`) may have fewer.
- `vs_library` of every row equals a library reference row's median (same n and dist) divided by
  its own median, to the CSV's rounding: in chapter 04 the reference is `library:cublas`; in
  chapters 01 to 03 it is the fastest of the CUB rows the row is compared with: chapter 01's
  `library:cub*` (the two count widths); chapter 02's `library:cub-histogram` for histogram rows,
  `library:cub-scan*` for scan rows and `library:cub-pipeline` for sorts; chapter 03's
  `library:cub-keys*` (the input kept) or, for the DoubleBuffer rows (`-dbuf`),
  `library:cub-dbuf*`. So no CUB row of a group may be faster than its reference (its own
  vs_library at most 1).
- No row's `pct_peak` is above 100: a ceiling a kernel beats is not a ceiling (the probe that
  measured it, or the row's traffic model, is wrong).
- docs/results/device.csv holds one row with the measured copy, read and FP32 ceilings.

Exit 0 when every rule holds, 1 otherwise.
Usage: check_results.py [--results docs/results] | check_results.py --self-test
"""
import argparse
import csv
import pathlib
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
# A chapter's reference rows: one variant, or a function of the row that gives the prefix of the
# variants its reference is the fastest of.
def _ch02_ref(variant):
    if variant.endswith("histogram"):
        return "library:cub-histogram"
    return "library:cub-scan" if "scan" in variant else "library:cub-pipeline"


LIBRARY_REF = {
    "01_minmax_reduction": lambda variant: "library:cub",
    "02_histogram_scan_countsort": _ch02_ref,
    "03_mppsort": lambda variant: ("library:cub-dbuf" if "-dbuf" in variant
                                   else "library:cub-keys"),
    "04_matmul_global_vs_shared": "library:cublas",
}
# Results measured before CUB had a row per form name its SortKeys row `library:cub`.
LEGACY_REF = {"library:cub-keys": "library:cub"}


HEADER = ("chapter,variant,n,dist,seed,median_ms,min_ms,max_ms,reps,throughput,unit,pct_peak,"
          "speedup_cpu,speedup_naive,vs_library,verified")
DEVICE = ("name,cc,sms,memory_bytes,l2_bytes,copy_gbps,read_gbps,fp32_gflops,fp32_source,"
          "fp32_attributes_gflops,empty_launch_us\n"
          "Test GPU,9.0,132,1,1,4000,4500,60000,measured,66000,2.5\n")


def self_test():
    """The rules on made-up results: a clean set passes, and each broken row fails."""
    good = "01_minmax_reduction,optimized,1024,float:uniform,42,1,1,1,10,4480.5,GB/s,99.57,,,,yes"
    cases = {
        "a clean row": (good, 0),
        "a row at 100.71 % of its ceiling": (good.replace("99.57", "100.71"), 1),
        "a row that failed verification": (good.replace(",yes", ",no"), 1),
        "a GPU row of 3 reps": (good.replace(",10,", ",3,"), 1),
    }
    cub = ("03_mppsort,library:cub-keys32,1024,uniform,42,2,2,2,10,0.5,GE/s,,,,{},yes\n"
           "03_mppsort,library:cub-keys64,1024,uniform,42,{},2,2,10,0.5,GE/s,,,,{},yes\n"
           "03_mppsort,optimized,1024,uniform,42,1,1,1,10,1,GE/s,,,,{},yes")
    group_cases = {
        "chapter 03 against its fastest CUB row": (cub.format("1.000", 3, "0.667", "2.000"), 0),
        "chapter 03 against a CUB row that is not the fastest": (
            cub.format("1.000", 1.5, "1.333", "2.000"), 1),
    }
    widths = ("01_minmax_reduction,library:cub,1024,float:uniform,42,2,2,2,10,1,GB/s,,,,{},yes\n"
              "01_minmax_reduction,library:cub-count64,1024,float:uniform,42,{},2,2,10,1,GB/s,,,,{},"
              "yes\n"
              "01_minmax_reduction,optimized,1024,float:uniform,42,1,1,1,10,1,GB/s,,,,{},yes")
    group_cases.update({
        "chapter 01 against the faster count width": (widths.format("0.750", 1.5, "1.000", "1.500"),
                                                      0),
        "chapter 01 against the slower count width": (widths.format("1.000", 1.5, "1.333", "2.000"),
                                                      1),
    })
    failures = 0
    runs = [(name, "01_minmax_reduction.csv", row, want) for name, (row, want) in cases.items()]
    runs += [(name, ("01_minmax_reduction.csv" if "chapter 01" in name else "03_mppsort.csv"),
              rows, want) for name, (rows, want) in group_cases.items()]
    for name, csv_name, rows, want in runs:
        with tempfile.TemporaryDirectory() as tmp:
            d = pathlib.Path(tmp)
            (d / csv_name).write_text(HEADER + "\n" + rows + "\n")
            (d / "device.csv").write_text(DEVICE)
            got = 1 if check(d, 10) else 0
        print(f"self-test: {name}: {'fails' if got else 'passes'} "
              f"({'as it should' if got == want else 'WRONG'})")
        failures += got != want
    return 1 if failures else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", default=str(ROOT / "docs" / "results"))
    ap.add_argument("--min-reps", type=int, default=10)
    ap.add_argument("--self-test", action="store_true",
                    help="check the rules on made-up results (each broken row must fail)")
    args = ap.parse_args()
    if args.self_test:
        return self_test()
    problems = check(pathlib.Path(args.results), args.min_reps)
    for p in problems:
        print(p)
    print(f"check_results: {len(problems)} problem(s)")
    return 1 if problems else 0


def check(results, min_reps):
    """Every rule over the CSV in @p results; returns the problems found."""
    problems = []
    for path in sorted(results.glob("[0-9][0-9]_*.csv")):
        rows = list(csv.DictReader(path.open()))
        chapter = path.stem
        for line, r in enumerate(rows, start=2):
            where = f"{path.name}:{line}: {r['variant']} n={r['n']} {r['dist']}"
            if r["verified"] not in ("yes", "reference"):
                problems.append(f"{where}: verified={r['verified']}")
            if r.get("pct_peak") and float(r["pct_peak"]) > 100.0:
                problems.append(f"{where}: pct_peak {r['pct_peak']} is above 100 % of its "
                                "ceiling")
            if r["variant"].startswith("cpu"):
                continue
            if int(r["reps"]) < min_reps:
                problems.append(f"{where}: {r['reps']} reps (< {min_reps})")
        rule = LIBRARY_REF.get(chapter)
        if rule:
            for line, r in enumerate(rows, start=2):
                if not r["vs_library"]:
                    continue
                own = float(r["median_ms"])
                fastest_of = callable(rule)
                ref = rule(r["variant"]) if fastest_of else rule
                def matches(variant):
                    if not fastest_of:
                        return variant == ref
                    return variant.startswith(ref) or variant == LEGACY_REF.get(ref)
                refs = [float(o["median_ms"]) for o in rows if matches(o["variant"])
                        and o["n"] == r["n"] and o["dist"] == r["dist"]]
                if not any(abs(m / own - float(r["vs_library"])) <= 0.0006 + 1e-9 for m in refs):
                    problems.append(f"{path.name}:{line}: {r['variant']} n={r['n']} {r['dist']}: "
                                    f"vs_library {r['vs_library']} is not a {ref} row's median "
                                    "over its own")
                if fastest_of and r["variant"].startswith(ref) and float(r["vs_library"]) > 1.0005:
                    problems.append(f"{path.name}:{line}: {r['variant']} n={r['n']} {r['dist']}: "
                                    f"vs_library {r['vs_library']}: faster than the {ref} row it "
                                    "is compared with, so that row is not the fastest")
    device = results / "device.csv"
    rows = list(csv.DictReader(device.open())) if device.exists() else []
    if len(rows) != 1 or not all(float(rows[0].get(c) or 0) > 0
                                 for c in ("copy_gbps", "read_gbps", "fp32_gflops")):
        problems.append(f"{device}: expected one row with copy_gbps, read_gbps and fp32_gflops")
    return problems


if __name__ == "__main__":
    sys.exit(main())
