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

A number in prose is generated the same way, so pages and data cannot drift apart:

    ... reads 2^28 floats at <!-- num 01 variant=optimized n=2^28 dist=float:uniform
    col=throughput scale=0.001 fmt=.2f -->4.42<!-- /num --> TB/s ...

`num` takes the CSV (a chapter number such as 01, or `device` for device.csv), selectors
(`variant=`, `n=`, `dist=`, or any other column; n accepts 2^k and K/M/G), the value
(`col=<column>`, or `ratio=<variant>`: that row's median over this row's median, at the same n and
dist), an optional `scale=` factor or `divide=` numerator (the value becomes numerator / value, e.g.
a time from a rate), `agg=min|max` when the selectors match several rows (e.g.
`n=2^16,2^17,2^18`), and a Python format (`fmt=.2f`, default `.3g`). A selector that matches no
row, or several without `agg`, is an error.

A verdict is generated from the same value, so a target's "met" cannot outlive its number:

    | ≥ 0.7 × for every distribution | ... | **<!-- verdict 03 variant=optimized n=8M
    dist=sorted,skewed col=vs_library agg=min ge=0.7 -->met<!-- /verdict -->** |

`verdict` takes the options of `num` (without `fmt`) and one bound, `ge=<x>` (met when the value
is at least x) or `le=<x>` (at most x), and writes `met` or `missed`. With `agg=min` and `ge`,
every matched row must reach the bound.

Pages: every chapter README, the root README.md, docs/pages/*.md and docs/results/README.md
(whose tables name their CSV with `csv=<chapter folder>`).

Usage: scripts/update_results.py [--results docs/results] [--check] [page ...]
--check exits 1 when a page is out of date (or a marker is wrong) instead of rewriting it.
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
NUM = re.compile(r"(<!--\s*num\s+(?P<opts>.*?)-->)(?P<value>.*?)(<!--\s*/num\s*-->)", re.S)
VERDICT = re.compile(
    r"(<!--\s*verdict\s+(?P<opts>.*?)-->)(?P<value>.*?)(<!--\s*/verdict\s*-->)", re.S)


class MarkerError(Exception):
    """A `num` or `results` marker that cannot be resolved."""


def parse_size(text):
    m = re.fullmatch(r"(\d+)\^(\d+)", text)
    if m:
        return str(int(m.group(1)) ** int(m.group(2)))
    m = re.fullmatch(r"(\d+)([KMG])", text)
    if m:
        return str(int(m.group(1)) << {"K": 10, "M": 20, "G": 30}[m.group(2)])
    m = re.fullmatch(r"(\d+)e(\d+)", text)
    if m:
        return str(int(m.group(1)) * 10 ** int(m.group(2)))
    return text


def measure(opts, csvs, kind="num"):
    """The value a `num` or `verdict` marker names, and the marker's options."""
    words = opts.split()
    if not words:
        raise MarkerError(f"{kind}: empty marker")
    source, pairs = words[0], dict(w.split("=", 1) for w in words[1:] if "=" in w)
    rows = csvs(source)
    special = {"col", "ratio", "scale", "divide", "agg", "fmt", "ge", "le"}
    selectors = {k: [parse_size(x) if k == "n" else x for x in v.split(",")]
                 for k, v in pairs.items() if k not in special}
    matched = [r for r in rows if all(r.get(k) in vals for k, vals in selectors.items())]
    if not matched:
        raise MarkerError(f"{kind} {opts.strip()}: no row matches")
    values = []
    for r in matched:
        if "ratio" in pairs:
            other = [o for o in rows if o["variant"] == pairs["ratio"] and o["n"] == r["n"]
                     and o["dist"] == r["dist"]]
            if len(other) != 1:
                raise MarkerError(
                    f"{kind} {opts.strip()}: ratio row {pairs['ratio']} not unique")
            values.append(float(other[0]["median_ms"]) / float(r["median_ms"]))
        else:
            col = pairs.get("col")
            if col is None or col not in r:
                raise MarkerError(f"{kind} {opts.strip()}: col= names no column")
            values.append(float(r[col]))
    if len(values) > 1 and pairs.get("agg") not in ("min", "max"):
        raise MarkerError(f"{kind} {opts.strip()}: {len(values)} rows match; add agg=min|max")
    value = min(values) if pairs.get("agg") == "min" else max(values)
    if "divide" in pairs:
        value = float(pairs["divide"]) / value
    value *= float(pairs.get("scale", "1"))
    return value, pairs


def number(opts, csvs):
    value, pairs = measure(opts, csvs)
    spec = pairs.get("fmt", ".3g")
    return format(round(value) if spec.endswith("d") else value, spec)


def verdict(opts, csvs):
    value, pairs = measure(opts, csvs, "verdict")
    bounds = [k for k in ("ge", "le") if k in pairs]
    if len(bounds) != 1:
        raise MarkerError(f"verdict {opts.strip()}: name one bound, ge= or le=")
    bound = float(pairs[bounds[0]])
    return "met" if (value >= bound if bounds[0] == "ge" else value <= bound) else "missed"


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


def update(page, default_rows, csvs):
    text = page.read_text()

    def replace_table(m):
        opts = m.group("opts")
        source = re.search(r"\bcsv=(\S+)", opts)
        rows = csvs(source.group(1)) if source else default_rows
        if rows is None:
            raise MarkerError(f"{page}: a results table names no csv= and the page has no chapter")
        return m.group(1) + table(rows, re.sub(r"\bcsv=\S+", "", opts)) + m.group(4)

    def replace_num(m):
        return m.group(1) + number(m.group("opts"), csvs) + m.group(4)

    def replace_verdict(m):
        return m.group(1) + verdict(m.group("opts"), csvs) + m.group(4)

    # Markers shown inside fenced code blocks (documentation about the markers) are left alone.
    parts = re.split(r"(^```[^\n]*\n.*?^```[^\n]*$)", text, flags=re.S | re.M)
    out = []
    for i, part in enumerate(parts):
        out.append(part if i % 2 else VERDICT.sub(
            replace_verdict, NUM.sub(replace_num, BLOCK.sub(replace_table, part))))
    return text, "".join(out)


def pages():
    found = sorted((ROOT / "chapters").glob("[0-9][0-9]_*/README.md"))
    found += [ROOT / "README.md", ROOT / "docs" / "results" / "README.md"]
    found += sorted((ROOT / "docs" / "pages").glob("*.md"))
    return [p for p in found if p.exists()]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--results", default=str(ROOT / "docs" / "results"))
    ap.add_argument("--check", action="store_true")
    ap.add_argument("pages", nargs="*", help="pages or chapter folders (default: all pages)")
    args = ap.parse_args()
    results = pathlib.Path(args.results)
    folders = {p.name[:2]: p.name for p in (ROOT / "chapters").glob("[0-9][0-9]_*")}
    cache = {}

    def csvs(name):
        name = folders.get(name, name)
        if name not in cache:
            path = results / f"{name}.csv"
            if not path.exists():
                raise MarkerError(f"no {path}")
            with path.open() as f:
                cache[name] = list(csv.DictReader(f))
        return cache[name]

    targets = []
    for p in args.pages or pages():
        path = pathlib.Path(p)
        if (ROOT / "chapters" / p).is_dir():
            path = ROOT / "chapters" / p / "README.md"
        targets.append(path.resolve())
    stale = 0
    for page in targets:
        chapter = page.parent.name if page.parent.parent.name == "chapters" else None
        rel = page.relative_to(ROOT) if page.is_relative_to(ROOT) else page
        try:
            default_rows = csvs(chapter) if chapter else None
        except MarkerError:
            default_rows = None
        try:
            old, new = update(page, default_rows, csvs)
        except MarkerError as e:
            print(f"{rel}: {e}")
            stale += 1
            continue
        if old == new:
            print(f"{rel}: up to date")
        elif args.check:
            print(f"{rel}: tables or numbers differ from the CSV in {results}")
            stale += 1
        else:
            page.write_text(new)
            print(f"{rel}: regenerated")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
