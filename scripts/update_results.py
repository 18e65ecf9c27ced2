#!/usr/bin/env python3
"""Regenerates the results tables in the chapter READMEs from docs/results/<chapter>.csv.

A README marks each generated table with a pair of HTML comments; the options on the first line
choose the rows and columns:

    <!-- results:begin variants=naive,optimized,library:cub n=1048576,268435456 dist=uniform -->
    (generated table, replaced on every run)
    <!-- results:end -->

Options (all optional): variants=<comma list> (default: every variant, in CSV order),
n=<comma list> (default: every n), dist=<comma list>, columns=<comma list of CSV columns>
(default: variant,n,dist,median_ms,throughput,unit,pct_peak,speedup_cpu,speedup_naive,
vs_library,verified).

Usage: scripts/update_results.py [--results docs/results] [--check] [chapter-folder ...]
--check exits 1 when a README is out of date instead of rewriting it.
"""
import argparse
import csv
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
DEFAULT_COLUMNS = ["variant", "n", "dist", "median_ms", "throughput", "unit", "pct_peak",
                   "speedup_cpu", "speedup_naive", "vs_library", "verified"]
HEADINGS = {"median_ms": "median ms", "min_ms": "min ms", "max_ms": "max ms",
            "pct_peak": "% peak", "speedup_cpu": "× CPU", "speedup_naive": "× naive",
            "vs_library": "vs library"}
BLOCK = re.compile(r"(<!-- results:begin(?P<opts>[^>]*)-->\n)(?P<body>.*?)(<!-- results:end -->)",
                   re.S)


def fmt(column, value):
    if value in ("", None):
        return "–"
    try:
        x = float(value)
    except ValueError:
        return value
    if column == "n":
        n = int(x)
        for shift, suffix in ((30, "G"), (20, "M"), (10, "K")):
            if n >= (1 << shift) and n % (1 << shift) == 0:
                return f"{n >> shift}{suffix}"
        return str(n)
    if column in ("median_ms", "min_ms", "max_ms"):
        return f"{x:.4g}"
    if column in ("speedup_cpu", "speedup_naive", "vs_library"):
        return f"{x:.2f}"
    if column == "pct_peak":
        return f"{x:.1f}"
    return f"{x:.4g}" if abs(x) < 1000 else f"{x:.0f}"


def table(rows, opts):
    want = {k: v.split(",") for k, v in (o.split("=", 1) for o in opts.split() if "=" in o)}
    columns = want.get("columns", DEFAULT_COLUMNS)
    picked = [r for r in rows
              if ("variants" not in want or r["variant"] in want["variants"])
              and ("n" not in want or r["n"] in want["n"])
              and ("dist" not in want or r["dist"] in want["dist"])]
    seen, unique = set(), []
    for r in picked:  # a run that repeats a (variant, n, dist) row: the first one is shown
        key = (r["variant"], r["n"], r["dist"])
        if key not in seen:
            seen.add(key)
            unique.append(r)
    picked = unique
    if "variants" in want:
        order = {v: i for i, v in enumerate(want["variants"])}
        picked.sort(key=lambda r: (int(r["n"]), r["dist"], order[r["variant"]]))
    if not picked:
        return "*(no rows in the CSV match this table yet)*\n"
    out = ["| " + " | ".join(HEADINGS.get(c, c) for c in columns) + " |",
           "|" + "---|" * len(columns)]
    for r in picked:
        out.append("| " + " | ".join(fmt(c, r.get(c, "")) for c in columns) + " |")
    return "\n".join(out) + "\n"


def update(readme, rows):
    text = readme.read_text()

    def replace(m):
        return m.group(1) + table(rows, m.group("opts")) + m.group(4)

    return text, BLOCK.sub(replace, text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--results", default=str(ROOT / "docs" / "results"))
    ap.add_argument("--check", action="store_true")
    ap.add_argument("chapters", nargs="*")
    args = ap.parse_args()
    chapters = args.chapters or sorted(p.name for p in (ROOT / "chapters").glob("[0-9][0-9]_*"))
    stale = 0
    for ch in chapters:
        csv_path = pathlib.Path(args.results) / f"{ch}.csv"
        readme = ROOT / "chapters" / ch / "README.md"
        if not csv_path.exists() or not readme.exists():
            print(f"{ch}: no CSV or no README, skipped")
            continue
        with csv_path.open() as f:
            rows = list(csv.DictReader(f))
        old, new = update(readme, rows)
        if old == new:
            print(f"{ch}: up to date")
        elif args.check:
            print(f"{ch}: README results differ from {csv_path}")
            stale += 1
        else:
            readme.write_text(new)
            print(f"{ch}: tables regenerated from {csv_path.name} ({len(rows)} rows)")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
