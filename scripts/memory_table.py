#!/usr/bin/env python3
"""The largest problem of each chapter that fits a GPU of 4, 6, 8, 12, 16 and 24 GB.

Measure (on a machine with a GPU, after a build): every chapter's main executable is asked, with
STAGED_MEMORY_NEED_ONLY=1, what device memory one run at a given --n needs (the program prints
`memory need: <bytes> bytes` and stops before allocating anything); a bisection over a grid of
sizes finds the largest that needs at most each budget. The rows go to docs/results/memory.csv.

Render: the table between `<!-- memory-table -->` and `<!-- /memory-table -->` in
docs/pages/gpu.md is written from that CSV; --check fails when the page and the CSV disagree
(CI runs it).

The need is what the program allocates itself (inputs, outputs, scratch, CUB's scratch as CUB
reports it); the CUDA context and a display take a few hundred MB more, so a size fits a card when
its need leaves MARGIN_GIB of the card free (the CSV's margin_bytes; 0 in a CSV without the
column). Each cell shows the size and its need.

Usage: memory_table.py --measure [--build build] [--out docs/results/memory.csv]
       memory_table.py [--check]         (render docs/pages/gpu.md from the CSV, or check it)
       memory_table.py --self-test
"""
import argparse
import csv
import io
import os
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
CSV = ROOT / "docs" / "results" / "memory.csv"
PAGE = ROOT / "docs" / "pages" / "gpu.md"
BUDGETS_GIB = (4, 6, 8, 12, 16, 24)
GIB = 1 << 30
COLUMNS = ("chapter", "executable", "args", "what", "budget_gib", "largest_n", "need_bytes",
           "limit", "gpu", "margin_bytes")
MARGIN_GIB = 0.5  # left free for the CUDA context and a display


def counts():
    """Element counts: 2^k and 3 * 2^(k-1), from 1M to 2^35."""
    grid = set()
    for k in range(20, 36):
        grid.add(1 << k)
        grid.add(3 << (k - 1))
    return sorted(grid)


def dimensions():
    """Matrix sizes: multiples of 1024 up to 64K."""
    return [1024 * i for i in range(1, 65)]


# Each chapter's main executable at its default arguments, the flag that sets its size, what a
# size counts, and the sizes tried.
PROGRAMS = [
    ("01_minmax_reduction", "ch01_optimized", [], "floats", counts),
    ("02_histogram_scan_countsort", "ch02_optimized", [], "bytes", counts),
    ("03_mppsort", "ch03_optimized", [], "32-bit keys", counts),
    ("04_matmul_global_vs_shared", "ch04_optimized", [], "n of an n x n x n float product",
     dimensions),
    ("05_grid_geometry", "ch05_optimized", [], "n of the n x n matrices", dimensions),
]


def need(build, exe, args, n):
    """Bytes the program needs at --n n; None when it refuses the size (its own limit)."""
    env = dict(os.environ, STAGED_MEMORY_NEED_ONLY="1", STAGED_SKIP_PEAKS="1")
    env.pop("STAGED_DEVICE_PROFILE", None)
    run = subprocess.run([str(build / "bin" / exe), *args, "--n", str(n)], env=env,
                         capture_output=True, text=True, timeout=600)
    m = re.search(r"^memory need: (\d+) bytes", run.stdout, re.M)
    if run.returncode == 0 and m:
        return int(m.group(1))
    if run.returncode == 2 and "usage error" in run.stderr:
        return None
    raise RuntimeError(f"{exe} --n {n}: exit {run.returncode}: {run.stderr.strip()[-400:]}")


def largest_fitting(sizes, need_of, budget):
    """The largest size whose need is at most budget, by bisection over the sorted sizes (needs
    grow with the size); (size, need, limit) with limit "program" when the program refused every
    larger size, or (None, None, "") when even the smallest does not fit."""
    lo, hi = 0, len(sizes) - 1
    best, at = (None, None, ""), -1
    while lo <= hi:
        mid = (lo + hi) // 2
        b = need_of(sizes[mid])
        if b is not None and b <= budget:
            best, at = (sizes[mid], b), mid
            lo = mid + 1
        else:
            hi = mid - 1
    if at < 0:
        return (None, None, "")
    # The next size refused by the program itself: the program's limit, not the budget, binds.
    limit = "program" if at + 1 < len(sizes) and need_of(sizes[at + 1]) is None else ""
    return (best[0], best[1], limit)


def measure(build, out):
    query = subprocess.run([str(build / "bin" / "staged_device_query"), "--format", "csv"],
                           env=dict(os.environ, STAGED_SKIP_PEAKS="1"), capture_output=True,
                           text=True)
    if query.returncode == 77:
        print("memory_table: skipped: no usable GPU here (--measure asks the built programs, "
              "which need one)", file=sys.stderr)
        return 77
    rows = list(csv.DictReader(io.StringIO(query.stdout)))
    gpu = rows[0]["name"] if query.returncode == 0 and rows else "?"
    rows = []
    margin = int(MARGIN_GIB * GIB)
    for chapter, exe, args, what, grid in PROGRAMS:
        cache = {}

        def need_of(n):
            if n not in cache:
                cache[n] = need(build, exe, args, n)
            return cache[n]

        for budget in BUDGETS_GIB:
            n, b, limit = largest_fitting(grid(), need_of, budget * GIB - margin)
            rows.append({"chapter": chapter, "executable": exe, "args": " ".join(args),
                         "what": what, "budget_gib": budget, "largest_n": n or 0,
                         "need_bytes": b or 0, "limit": limit, "gpu": gpu,
                         "margin_bytes": margin})
            print(f"{exe} {budget} GB: n = {n} ({b} bytes){' ' + limit if limit else ''}",
                  flush=True)
    with open(out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        w.writerows(rows)
    print(f"memory_table: {len(rows)} rows in {out}")
    return 0


def size_label(n, what):
    if n == 0:
        return "—"
    if what.startswith("n of"):
        return str(n)
    for unit, shift in (("G", 30), ("M", 20), ("K", 10)):
        if n >= 1 << shift:
            v = n / (1 << shift)
            return (f"{v:.0f}" if v == int(v) else f"{v:.1f}") + unit
    return str(n)


def render(rows):
    """The Markdown table of the CSV rows."""
    if not rows:
        return ""
    gpu = rows[0]["gpu"]
    budgets = sorted({int(r["budget_gib"]) for r in rows})
    lines = ["| chapter (`--n` counts) | " + " | ".join(f"{b} GB" for b in budgets) + " |",
             "|---" * (len(budgets) + 1) + "|"]
    seen = []
    for r in rows:
        if r["executable"] not in seen:
            seen.append(r["executable"])
    for exe in seen:
        mine = {int(r["budget_gib"]): r for r in rows if r["executable"] == exe}
        first = next(iter(mine.values()))
        cells = []
        for b in budgets:
            r = mine.get(b)
            cell = size_label(int(r["largest_n"]), r["what"]) if r else "—"
            if r and int(r["largest_n"]):
                cell += f" ({int(r['need_bytes']) / GIB:.1f})"
            if r and r["limit"] == "program":
                cell += " (its limit)"
            cells.append(cell)
        lines.append(f"| `{exe}` ({first['what']}) | " + " | ".join(cells) + " |")
    lines.append("")
    margin = int(rows[0].get("margin_bytes") or 0) / GIB
    if margin > 0:
        fits = (f"needs at most the card's memory less {margin:g} GiB for the CUDA context and a "
                "display (N GB = N GiB), with that need in GiB in brackets.")
    else:
        fits = ("needs at most the card's memory (N GB = N GiB), with that need in GiB in "
                "brackets. The CUDA context and a display take a few hundred MB beyond the "
                f"need: where the need comes within {MARGIN_GIB:g} GiB of the card, take a "
                "smaller `--n`.")
    lines.append(f"Measured by `scripts/memory_table.py --measure` on the {gpu}: the largest size "
                 "on a grid of 2^k and 1.5 × 2^k (multiples of 1024 for matrices) whose run "
                 + fits)
    return "\n".join(lines)


BLOCK = re.compile(r"(<!-- memory-table -->\n)(.*?)(<!-- /memory-table -->)", re.S)


def page_with(text, table):
    return BLOCK.sub(lambda m: m.group(1) + table + "\n" + m.group(3), text)


def self_test():
    failures = 0
    sizes = [1, 2, 3, 4, 6, 8]
    cases = [
        ("fits to 4", lambda n: n * 10, 45, (4, 40, "")),
        ("nothing fits", lambda n: n * 100, 50, (None, None, "")),
        ("program refuses above 3", lambda n: n * 10 if n <= 3 else None, 1000, (3, 30, "program")),
        ("everything fits", lambda n: n, 1000, (8, 8, "")),
    ]
    for name, fn, budget, want in cases:
        got = largest_fitting(sizes, fn, budget)
        ok = got == want
        failures += not ok
        print(f"self-test: {name}: {got} ({'as it should' if ok else 'WRONG, want ' + str(want)})")
    rows = [dict(zip(COLUMNS, ("03_mppsort", "ch03_optimized", "", "32-bit keys", b, n, n * 36,
                               "", "Test GPU"))) for b, n in ((4, 96 << 20), (6, 3 << 27))]
    table = render(rows)
    ok = "| `ch03_optimized` (32-bit keys) | 96M (3.4) | 384M (13.5) |" in table
    failures += not ok
    print(f"self-test: render: {'as it should' if ok else 'WRONG: ' + table}")
    rows[0]["margin_bytes"] = rows[1]["margin_bytes"] = str(GIB // 2)
    ok = "less 0.5 GiB for the CUDA context" in render(rows)
    failures += not ok
    print(f"self-test: the caption names the margin: {'as it should' if ok else 'WRONG'}")
    return 1 if failures else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--measure", action="store_true", help="ask the built programs (needs a GPU)")
    ap.add_argument("--build", default=str(ROOT / "build"))
    ap.add_argument("--out", default=str(CSV))
    ap.add_argument("--check", action="store_true", help="fail when the page differs from the CSV")
    ap.add_argument("--self-test", action="store_true")
    a = ap.parse_args()
    if a.self_test:
        return self_test()
    if a.measure:
        return measure(pathlib.Path(a.build), a.out)
    text = PAGE.read_text()
    rows = list(csv.DictReader(CSV.open())) if CSV.exists() else []
    if not BLOCK.search(text):
        if rows:
            print(f"memory_table: {PAGE} has no <!-- memory-table --> block for {CSV}")
            return 1
        return 0
    new = page_with(text, render(rows))
    if a.check:
        if new != text:
            print(f"memory_table: {PAGE}'s memory table differs from {CSV}: run "
                  "scripts/memory_table.py")
            return 1
        return 0
    if new != text:
        PAGE.write_text(new)
        print(f"memory_table: {PAGE} rewritten")
    return 0


if __name__ == "__main__":
    sys.exit(main())
