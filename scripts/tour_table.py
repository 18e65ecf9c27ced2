#!/usr/bin/env python3
"""Prints the tour's summary table from its summary CSV.

The summary CSV (written by scripts/tour.sh) has the columns `executable,exit` followed by the
report columns every executable prints (common/report.hpp, kReportColumns), one row per
executable. Columns are looked up by name, never by position, so a report column added or
moved cannot shift the table.

Usage: tour_table.py SUMMARY.csv
       tour_table.py --self-test     (checks the table against common/report.hpp's header)
Exit: 0 printed, 1 the self-test failed, 2 the CSV lacks a column the table needs.
"""
import csv
import io
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent

# (heading, CSV column or None for throughput + unit, width, left-aligned)
COLUMNS = [
    ("executable", "executable", 28, True),
    ("variant", "variant", 24, True),
    ("n", "n", 12, False),
    ("median ms", "median_ms", 10, False),
    ("reps", "reps", 4, False),
    ("throughput", None, 18, False),
    ("% peak", "pct_peak", 6, False),
    ("x cpu", "speedup_cpu", 8, False),
    ("x naive", "speedup_naive", 8, False),
    ("vs lib", "vs_library", 6, False),
    ("verified", "verified", 9, True),
    ("exit", "exit", 4, False),
]
NEEDED = [c for _, c, _, _ in COLUMNS if c] + ["throughput", "unit"]


def cell(text, width, left):
    return f"{text:<{width}}" if left else f"{text:>{width}}"


def format_table(rows):
    lines = [" ".join(cell(h, w, left) for h, _, w, left in COLUMNS).rstrip()]
    for r in rows:
        values = []
        for _, col, w, left in COLUMNS:
            text = f"{r['throughput']} {r['unit']}".strip() if col is None else r[col]
            values.append(cell(text, w, left))
        lines.append(" ".join(values).rstrip())
    return "\n".join(lines)


def read_summary(text):
    reader = csv.DictReader(io.StringIO(text))
    missing = [c for c in NEEDED if c not in (reader.fieldnames or [])]
    if missing:
        raise KeyError(", ".join(missing))
    return list(reader)


def self_test():
    header = re.search(r'kReportColumns\s*=\s*((?:\s*"[^"]*")+)',
                       (ROOT / "common" / "report.hpp").read_text())
    columns = "".join(re.findall(r'"([^"]*)"', header.group(1))).split(",")
    sample = {c: "" for c in columns}
    sample.update(chapter="01_minmax_reduction", variant="optimized", n="16777216",
                  median_ms="0.027264", reps="20", throughput="2461.446", unit="GB/s",
                  pct_peak="54.69", speedup_cpu="2343.598", speedup_naive="3.789",
                  vs_library="1.023", verified="yes")
    text = ",".join(["executable", "exit"] + columns) + "\n"
    text += ",".join(["ch01_optimized", "0"] + [sample[c] for c in columns]) + "\n"
    table = format_table(read_summary(text)).splitlines()
    heads, row = table[0], table[1]
    expect = {"reps": "20", "throughput": "2461.446 GB/s", "% peak": "54.69", "x cpu": "2343.598",
              "x naive": "3.789", "vs lib": "1.023", "verified": "yes", "exit": "0"}
    errors = []
    start = 0
    for heading, _, width, left in COLUMNS:
        pos = heads.index(heading, start)
        begin = pos if left else pos + len(heading) - width
        got = row[begin:begin + width].strip()
        start = pos + len(heading)
        if heading in expect and got != expect[heading]:
            errors.append(f"column '{heading}' shows '{got}', expected '{expect[heading]}'")
    for e in errors:
        print("tour_table self-test:", e)
    print("tour_table self-test:", "FAILED" if errors else "passed", f"({len(columns)} report columns)")
    return 1 if errors else 0


def main(argv):
    if len(argv) != 2:
        print("usage: tour_table.py SUMMARY.csv | --self-test", file=sys.stderr)
        return 2
    if argv[1] == "--self-test":
        return self_test()
    try:
        rows = read_summary(pathlib.Path(argv[1]).read_text())
    except KeyError as e:
        print(f"tour_table: {argv[1]} lacks the column(s) {e}", file=sys.stderr)
        return 2
    print(format_table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
