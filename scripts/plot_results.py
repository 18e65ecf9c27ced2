#!/usr/bin/env python3
"""Draws the plots of the chapter pages from the committed benchmark CSV files.

Reads docs/results/<chapter>.csv (the report columns every executable prints with --format csv,
concatenated by scripts/gpu_suite.sh) and writes SVG files docs/plots/<chapter>_<what>.svg:

  01  <ch>_bandwidth_<type>.svg   GB/s vs n per variant, one file per element type (float,
                                  double; told apart by n·sizeof(T) / time); a dashed line at
                                  --copy-gbps if given
      <ch>_crossover_<type>.svg   the *:crossover rows: CPU vs kernel vs kernel + copies, time
  02  <ch>_histogram.svg          histogram rows (variant names containing "hist"): GB/s vs n
      <ch>_sort.svg               the counting sort and the sorts it is compared with: GB/s vs n
      <ch>_scan.svg               scan rows, if the CSV has any
  03  <ch>_throughput.svg         GE/s vs n per variant, uniform keys
      <ch>_distributions.svg      bars per distribution at 8M keys (or the size with the most
                                  distributions)
      <ch>_breakdown.svg          the optimized:<stage> rows: each kernel's share of the time
  04  <ch>_gflops.svg             GFLOP/s vs the side n of square matrices, per variant and
                                  stage; a dashed line at --fp32-gflops if given
      <ch>_shapes.svg             bars for the runs whose `dist` names a shape (float:uniform:MxNxK)
  05  <ch>_tables_1_3.svg         time vs N per grid arrangement and block shape, global and
                                  shared memory side by side, CPU dotted (the paper's Tables 1-3)
      <ch>_table_4.svg            time vs N per block size (the paper's Table 4)
      <ch>_fig5_speedup.svg       speed-up over the CPU vs N (the paper's Fig. 5)
      <ch>_fig6_block_steps.svg   time ratio of each block size to the next (the paper's Fig. 6)
      <ch>_launch_overhead.svg    plain launches vs CUDA Graphs / persistent grid, empty launches
      <ch>_executables.svg        the remaining rows (naive, optimized, library) vs N
  other chapters: <ch>_throughput.svg, throughput vs n per variant

Lines are medians; the shaded band around each line spans the fastest and slowest repetition.
Rows whose `verified` column says `no` are left out (with a warning).

Usage: python3 scripts/plot_results.py [--results DIR] [--out DIR] [--copy-gbps GB/s]
                                       [--fp32-gflops GFLOP/s] [chapter ...]
A chapter is a folder name (03_mppsort) or its number (03); without any, every CSV in --results.
Needs matplotlib (python3 -m pip install matplotlib, or apt-get install python3-matplotlib);
never uses the network.
Exit: 0 done (a chapter without a CSV is skipped with a message), 1 matplotlib is missing,
      2 bad usage or a malformed CSV.
"""

import argparse
import copy
import csv
import math
import re
import sys
from collections import OrderedDict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
COLUMNS = ("chapter,variant,n,dist,seed,median_ms,min_ms,max_ms,reps,throughput,unit,pct_peak,"
           "speedup_cpu,speedup_naive,vs_library,verified").split(",")
DIST_ORDER = ["uniform", "sorted", "reverse", "equal", "few", "skewed"]


class CsvError(Exception):
    """A results file that does not have the report's columns or values."""


class Row:
    """One measured variant: the columns the plots use, parsed."""

    def __init__(self, record, where):
        try:
            self.variant = record["variant"].strip()
            self.n = int(record["n"])
            self.dist = record["dist"].strip()
            self.median_ms = float(record["median_ms"])
            self.min_ms = float(record["min_ms"])
            self.max_ms = float(record["max_ms"])
            self.throughput = float(record["throughput"])
            self.unit = record["unit"].strip()
            self.verified = record["verified"].strip()
            self.vs_library = float(record["vs_library"]) if record.get("vs_library") else 0.0
        except (KeyError, TypeError, ValueError) as err:
            raise CsvError(f"{where}: malformed row ({err})") from None

    def band(self):
        """Throughput at the slowest and at the fastest repetition (the median's spread)."""
        if self.median_ms <= 0 or self.min_ms <= 0 or self.max_ms <= 0:
            return self.throughput, self.throughput
        return (self.throughput * self.median_ms / self.max_ms,
                self.throughput * self.median_ms / self.min_ms)


def load_rows(path):
    """Reads one results CSV; repeated header lines (one per concatenated run) are skipped."""
    rows = []
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise CsvError(f"{path}: not a results file, missing columns: {', '.join(missing)}")
        for line, record in enumerate(reader, start=2):
            if record.get("chapter") == "chapter" or not any((v or "").strip()
                                                             for v in record.values()):
                continue
            row = Row(record, f"{path}:{line}")
            row.seq = line  # the order of the CSV (the chapter's stage order) orders legends
            if row.verified == "no":
                warn(f"{path}:{line}: {row.variant} at n={row.n} failed verification; not plotted")
                continue
            rows.append(row)
    return rows


def warn(message):
    print(f"plot_results: {message}", file=sys.stderr)


def format_size(n):
    """1024 -> 1K, 8388608 -> 8M, 537000000 -> 537e6, 160 -> 160, as the command line writes
    sizes (K/M/G are powers of two)."""
    for shift, suffix in ((30, "G"), (20, "M"), (10, "K")):
        if n >= (1 << shift) and n % (1 << shift) == 0:
            return f"{n >> shift}{suffix}"
    if n >= 10**6 and n % 10**6 == 0:
        return f"{n // 10**6}e6"
    return str(n)


def variant_rank(variant):
    """Legend order: cpu, naive, optimized stages, optimized, libraries, anything else."""
    if variant == "cpu" or variant.startswith("cpu:"):
        return 0
    if variant == "naive" or variant.startswith("naive:"):
        return 1
    if variant.startswith("optimized:"):
        return 2
    if variant == "optimized":
        return 3
    if variant.startswith("library"):
        return 4
    return 5


PALETTE = ["tab:blue", "tab:orange", "tab:green", "tab:purple", "tab:pink", "tab:olive",
           "tab:cyan", "tab:brown"]  # no red: red marks the peak lines
LIBRARY_COLORS = ["black", "#8c4a00", "#2f3f8f"]
MARKERS = ["o", "s", "^", "v", "D", "P"]


def line_styles(variants):
    """One style per variant (given in legend order): libraries dashed in dark colours, the CPU
    dotted grey, the chapter's default kernel (`optimized`) thicker, the others one colour each."""
    styles, plain, library = {}, 0, 0
    for v in OrderedDict.fromkeys(variants):
        if v.startswith("library"):
            styles[v] = {"color": LIBRARY_COLORS[library % len(LIBRARY_COLORS)],
                         "linestyle": "--", "linewidth": 1.6}
            library += 1
        elif v == "cpu" or v.startswith("cpu:"):
            styles[v] = {"color": "0.5", "linestyle": ":", "linewidth": 1.8}
        else:
            styles[v] = {"color": PALETTE[plain % len(PALETTE)],
                         "linewidth": 2.6 if v == "optimized" else 1.5}
            plain += 1
    return styles


class Plotter:
    """Owns matplotlib and the output folder; one method per kind of figure."""

    def __init__(self, plt, out_dir, copy_gbps, fp32_gflops, read_gbps=None):
        self.plt = plt
        self.out_dir = out_dir
        self.copy_gbps = copy_gbps
        self.read_gbps = read_gbps
        self.fp32_gflops = fp32_gflops
        self.written = []

    def copy_peak(self):
        """The measured copy bandwidth as a `peaks` entry for GB/s plots."""
        return {"GB/s": (self.copy_gbps, "measured copy bandwidth")}

    def read_peak(self):
        """The measured read-only bandwidth, the ceiling of kernels that only read."""
        return {"GB/s": (self.read_gbps, "measured read bandwidth")}

    def save(self, fig, chapter, what):
        path = self.out_dir / f"{chapter}_{what}.svg"
        # No date in the metadata, so regenerating from the same CSV gives the same file.
        fig.savefig(path, format="svg", bbox_inches="tight", metadata={"Date": None})
        self.plt.close(fig)
        self.written.append(path)
        print(f"plot_results: wrote {path}")

    def log2_axis(self, ax, ns):
        ax.set_xscale("log", base=2)
        ticks = []
        for t in sorted(set(ns)):  # skip a label that would sit on its neighbour (2^29 vs 537e6)
            if not ticks or t / ticks[-1] >= 1.2:
                ticks.append(t)
        if len(ticks) > 12:  # thin out to at most ~12 labels, keeping the ends
            step = math.ceil(len(ticks) / 12)
            ticks = ticks[::step] + ([ticks[-1]] if (len(ticks) - 1) % step else [])
        ax.set_xticks(ticks)
        ax.set_xticklabels([format_size(t) for t in ticks], rotation=45 if len(ticks) > 8 else 0)
        ax.minorticks_off()

    def finish(self, ax, title, xlabel, ylabel, legend=True):
        ax.set_title(title, fontsize=11)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(True, which="major", alpha=0.3)
        handles, labels = ax.get_legend_handles_labels()
        if handles and legend:
            ax.legend(handles, labels, fontsize=8, frameon=False, loc="upper left",
                      bbox_to_anchor=(1.01, 1.0))

    def lines(self, ax, series, y_of, band_of=None, label_styles=None):
        """Draws one line per series; `series` maps a label to (variant, dist, rows by n).

        A variant keeps its colour across distributions; each distribution has its own marker.
        `label_styles` (label -> style) overrides the per-variant styles.
        """
        styles = line_styles(v for v, _, _ in series.values())
        dists = list(OrderedDict.fromkeys(d for _, d, _ in series.values()))
        for label, (variant, dist, rows) in series.items():
            xs = [r.n for r in rows]
            style = dict(label_styles[label] if label_styles else styles[variant])
            if "paper" in label:
                style["linestyle"] = ":"
            marker = MARKERS[dists.index(dist) % len(MARKERS)]
            (line,) = ax.plot(xs, [y_of(r) for r in rows], marker=marker, markersize=3.5,
                              label=label, **style)
            if band_of is not None and len(rows) > 1:
                lo, hi = zip(*(band_of(r) for r in rows))
                ax.fill_between(xs, lo, hi, color=line.get_color(), alpha=0.15, linewidth=0)

    def throughput_vs_n(self, chapter, rows, what, title, peaks=None):
        """Throughput vs n (log2 axis), one line per variant (and per distribution if several).

        `peaks` maps a unit to (value, label): a dashed horizontal line on plots in that unit.
        """
        for unit, unit_rows in group(rows, lambda r: r.unit).items():
            fig, ax = self.plt.subplots(figsize=(8.5, 4.6))
            scale, shown = display_unit(unit, [r.throughput for r in unit_rows])
            self.lines(ax, series_by_variant(unit_rows), lambda r: r.throughput * scale,
                       lambda r: tuple(x * scale for x in r.band()))
            peak, peak_label = (peaks or {}).get(unit, (None, None))
            if peak:
                ax.axhline(peak * scale, color="tab:red", linestyle="--", linewidth=1.2,
                           label=peak_label)
            self.log2_axis(ax, [r.n for r in unit_rows])
            ax.set_ylim(bottom=0)
            self.finish(ax, title, "n", shown)
            suffix = what if len({r.unit for r in rows}) == 1 else f"{what}_{slug(unit)}"
            self.save(fig, chapter, suffix)

    def bars(self, chapter, rows, groups, what, title, ylabel):
        """Grouped bars: `groups` maps a group label to {variant: value}; `rows` gives the
        legend order."""
        present = {v for vals in groups.values() for v in vals}
        variants = [v for v in legend_order(rows) if v in present]
        fig, ax = self.plt.subplots(figsize=(max(6.0, 1.2 * len(groups) + 3), 4.4))
        width = 0.8 / max(1, len(variants))
        styles = line_styles(variants)
        scale, ylabel = display_unit(ylabel, [x for vals in groups.values() for x in vals.values()])
        for i, variant in enumerate(variants):
            xs = [g + (i - (len(variants) - 1) / 2) * width for g in range(len(groups))]
            ys = [vals.get(variant, 0.0) * scale for vals in groups.values()]
            library = variant.startswith("library")
            ax.bar(xs, ys, width=width * 0.95, label=variant, color=styles[variant]["color"],
                   hatch="//" if library else None, edgecolor="white" if library else None)
        ax.set_xticks(range(len(groups)))
        ax.set_xticklabels(list(groups.keys()))
        ax.set_ylim(bottom=0)
        self.finish(ax, title, "", ylabel)
        self.save(fig, chapter, what)

    def time_vs_n(self, chapter, rows, what, title, label_of=None, linear_x=False):
        """Median time (log axis) vs n, one line per variant, band from fastest to slowest rep."""
        fig, ax = self.plt.subplots(figsize=(8.5, 4.6))
        self.times_vs_n(ax, series_by_variant(rows, label_of))
        if not linear_x:
            self.log2_axis(ax, [r.n for r in rows])
        self.finish(ax, title, "n", "time (ms)")
        self.save(fig, chapter, what)

    def breakdown(self, chapter, rows, what, title):
        """One bar per n, split into the share of each stage (rows named `<variant>:<stage>`);
        the total time in ms is written above each bar."""
        stages = list(OrderedDict.fromkeys(r.variant.split(":", 1)[1] for r in rows))
        by_n = OrderedDict(sorted(group(rows, lambda r: r.n).items()))
        totals = {n: sum(r.median_ms for r in rs) for n, rs in by_n.items()}
        fig, ax = self.plt.subplots(figsize=(max(6.0, 0.9 * len(by_n) + 3), 4.4))
        bottom = [0.0] * len(by_n)
        for i, stage in enumerate(stages):
            share = []
            for n, rs in by_n.items():
                ms = sum(r.median_ms for r in rs if r.variant.split(":", 1)[1] == stage)
                share.append(100.0 * ms / totals[n] if totals[n] > 0 else 0.0)
            ax.bar(range(len(by_n)), share, bottom=bottom, width=0.7, label=stage,
                   color=PALETTE[i % len(PALETTE)])
            bottom = [b + v for b, v in zip(bottom, share)]
        for x, n in enumerate(by_n):
            ax.text(x, 101, f"{totals[n]:.3g} ms", ha="center", va="bottom", fontsize=8)
        ax.set_xticks(range(len(by_n)))
        ax.set_xticklabels([format_size(n) for n in by_n])
        ax.set_ylim(0, 112)
        self.finish(ax, title, "n", "share of the time (%)")
        self.save(fig, chapter, what)

    def times_vs_n(self, ax, series, label_styles=None):
        """Time (log) vs N (linear), one line per series, band from min to max."""
        self.lines(ax, series, lambda r: r.median_ms, lambda r: (r.min_ms, r.max_ms),
                   label_styles)
        ax.set_yscale("log")


def display_unit(unit, values):
    """GFLOP/s in the tens of thousands reads better as TFLOP/s: returns (factor, unit shown)."""
    if unit == "GFLOP/s" and values and max(values) >= 5000:
        return 1e-3, "TFLOP/s"
    return 1.0, unit


def group(rows, key):
    out = OrderedDict()
    for r in rows:
        out.setdefault(key(r), []).append(r)
    return out


def legend_order(rows):
    """Variants in legend order: by kind (cpu, naive, stages, optimized, libraries), then in the
    order they first appear in the CSV, which is the order the chapter lists its stages."""
    first = {}
    for r in rows:
        first.setdefault(r.variant, r.seq)
    return sorted(first, key=lambda v: (variant_rank(v), first[v]))


def slug(text):
    return re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_").lower() or "unitless"


def series_by_variant(rows, label_of=None):
    """Groups rows into lines keyed by variant (plus distribution when there are several).

    Returns {label: (variant, dist, rows sorted by n)} in legend order.
    """
    several_dists = len({r.dist for r in rows}) > 1
    out = {}
    for r in rows:
        label = label_of(r) if label_of else r.variant
        if several_dists and not label_of:
            label = f"{label} ({r.dist})"
        seen = out.setdefault(label, (r.variant, r.dist, {}))[2]
        if r.n in seen:
            warn(f"{r.variant} ({r.dist}) has two rows at n={r.n}; plotting the first")
            continue
        seen[r.n] = r
    dist_rank = {d: i for i, d in enumerate(DIST_ORDER)}
    variant_pos = {v: i for i, v in enumerate(legend_order(rows))}
    first = {label: min(r.seq for r in rs.values()) for label, (_, _, rs) in out.items()}
    ordered = sorted(out.items(), key=lambda kv: (variant_pos[kv[1][0]],
                                                  dist_rank.get(kv[1][1], 99), first[kv[0]]))
    return OrderedDict((label, (variant, dist, [rs[n] for n in sorted(rs)]))
                       for label, (variant, dist, rs) in ordered)


ELEMENT_TYPES = {1: "uint8", 2: "half", 4: "float", 8: "double"}


def element_types(rows):
    """Chapter 01 measures float and double with the same variant names, but its throughput is
    n·sizeof(T) / time, so each row's element size follows from its own numbers. Rows too fast
    to tell (times printed with few digits) take the type of the row before them: one run's rows
    are contiguous in the CSV."""
    types, last = {}, None
    for r in rows:
        if ":" in r.dist:  # newer runs name the type in the dist column: "float:uniform"
            types[id(r)] = last = r.dist.split(":", 1)[0]
            continue
        size = r.throughput * r.median_ms * 1e6 / r.n if r.n and r.unit == "GB/s" else 0.0
        nearest = min(ELEMENT_TYPES, key=lambda b: abs(b - size))
        if abs(nearest - size) < 0.2 * nearest:
            last = ELEMENT_TYPES[nearest]
        types[id(r)] = last
    return types


def plot_ch01(p, chapter, rows):
    types = element_types(rows)
    for kind, kind_rows in group(rows, lambda r: types[id(r)]).items():
        suffix = f"_{kind}" if kind else ""
        of = f" of {kind}" if kind else ""
        crossover = [r for r in kind_rows if r.variant.endswith(":crossover")]
        sweep = [r for r in kind_rows if not r.variant.endswith(":crossover")]
        if sweep:
            p.throughput_vs_n(chapter, sweep, "bandwidth" + suffix,
                              f"{chapter}: min and max{of}, bytes read once", p.read_peak())
        if crossover:
            p.time_vs_n(chapter, crossover, "crossover" + suffix,
                        f"{chapter}: CPU against GPU{of} (kernel alone, and with the copies)",
                        label_of=lambda r: r.variant[: -len(":crossover")])


def plot_ch02(p, chapter, rows):
    kinds = group(rows, lambda r: "histogram" if "hist" in r.variant.lower()
                  else "scan" if "scan" in r.variant.lower() else "sort")
    titles = {"histogram": "histogram of n bytes (n bytes read)",
              "sort": "counting sort of n bytes (2n bytes moved)", "scan": "scan"}
    for kind in ("histogram", "sort", "scan"):
        if kind in kinds:
            # The histogram only reads; the scan and the sort read and write.
            peak = p.read_peak() if kind == "histogram" else p.copy_peak()
            for dist, dist_rows in group(kinds[kind], lambda r: r.dist).items():
                if len({r.n for r in dist_rows}) < 3:
                    continue  # one or two sizes make no curve: the tables show them
                suffix = "" if dist in ("uniform", "-") else f"_{slug(dist)}"
                of = "" if dist in ("uniform", "-") else f" ({dist} bytes)"
                p.throughput_vs_n(chapter, dist_rows, kind + suffix,
                                  f"{chapter}: {titles[kind]}{of}", peak)


def plot_ch03(p, chapter, rows):
    # step:<step> rows are the per-kernel breakdown of the default sort, not sorts. The
    # throughput plot shows each stage (optimized:<stage>), the naive sort, the CPU, thrust and
    # CUB's fastest form (the row each run's vs_library is taken against: its own is 1.000); the
    # distribution bars the default sort, the naive one and that CUB row.
    steps = [r for r in rows if r.variant.startswith("step:")]
    sorts = [r for r in rows if not r.variant.startswith("step:")]
    alternatives = re.compile(r"^optimized-(bitonic|radix|hostloop|equalwidths)|:workspace-")

    def best_cub(r):
        return r.variant.startswith("library:cub-keys") and abs(r.vs_library - 1.0) < 5e-4

    for r in sorts:
        if best_cub(r):
            r.variant = "library:cub (fastest form)"
    keep = [r for r in sorts if not alternatives.search(r.variant)
            and not r.variant.startswith("library:cub-") and r.variant != "optimized-dbuf"]
    uniform = [r for r in keep if r.dist == "uniform" and r.variant != "optimized:sampled"]
    if uniform:
        p.throughput_vs_n(chapter, uniform, "throughput",
                          f"{chapter}: sorting 32-bit keys ({uniform[0].dist}), each stage")
    bars = [r for r in keep if r.variant in ("naive", "optimized", "library:cub (fastest form)",
                                             "library:thrust")]
    by_n = group(bars, lambda r: r.n)
    if by_n:
        target = 8 << 20
        n = target if target in by_n else max(
            by_n, key=lambda k: (len({r.dist for r in by_n[k]}), -abs(k - target)))
        dists = sorted({r.dist for r in by_n[n]},
                       key=lambda d: (DIST_ORDER.index(d) if d in DIST_ORDER else 99, d))
        if len(dists) > 1:
            groups = OrderedDict((d, {}) for d in dists)
            for r in by_n[n]:
                groups[r.dist].setdefault(r.variant, r.throughput)
            p.bars(chapter, by_n[n], groups, "distributions",
                   f"{chapter}: every distribution at n = {format_size(n)}", by_n[n][0].unit)
    step_uniform = [r for r in steps if r.dist == "uniform"] or steps
    if step_uniform:
        p.breakdown(chapter, step_uniform, "breakdown",
                    f"{chapter}: where the default sort spends its time "
                    f"({step_uniform[0].dist} keys)")


SHAPE_RE = re.compile(r"(\d+)x(\d+)x(\d+)$")


def is_square_float(r):
    """A row of the square sweep: dist "float:NxNxN" (or, in older runs, a plain distribution)."""
    m = SHAPE_RE.search(r.dist)
    if not m:
        return True
    return r.dist.startswith("float:") and m.group(1) == m.group(2) == m.group(3)


def plot_ch04(p, chapter, rows):
    # Every row names its type and M×N×K shape in `dist`: the square float runs draw the sweep,
    # the other shapes (and the int32 runs) the bars.
    square = [copy.copy(r) for r in rows if is_square_float(r)]
    for r in square:  # one series per variant across sizes, not one per "float:NxNxN"
        r.dist = "float"
    if square:
        p.throughput_vs_n(chapter, square, "gflops", f"{chapter}: square matrices, n×n",
                          {"GFLOP/s": (p.fp32_gflops, "FP32 peak")})
    # The shapes chart compares the default (`optimized`, the stage the shape rule picks) with
    # cuBLAS, the slides' 16x16 tile and the naive kernel; the per-stage numbers are in the CSV.
    keep = ("naive", "optimized:tiled16", "optimized", "library:cublas")
    tensor = [r for r in rows if r.dist.startswith(("tf32:", "bf16:", "fp16:"))]
    shaped = [r for r in rows if not is_square_float(r) and r.variant in keep and r not in tensor]
    if shaped:
        groups = OrderedDict()
        for r in shaped:
            kind, _, shape = r.dist.rpartition(":")
            name = shape.replace("x", "×", 1).replace("x", "\n×", 1) + f"\n{kind}"
            groups.setdefault(name, {}).setdefault(r.variant, r.throughput)
        p.bars(chapter, shaped, groups, "shapes", f"{chapter}: other shapes and types (M×N×K)",
               shaped[0].unit)
    if tensor:
        plot_ch04_tensor(p, chapter, rows, tensor)


TENSOR_SERIES = {"optimized:mma": "optimized:mma", "optimized:wgmma": "optimized:wgmma (Hopper)",
                 "library:cublas": "library:cublas (same type)",
                 "probe:mma.sync": "probe:mma.sync (stage 9's ceiling)"}


def plot_ch04_tensor(p, chapter, rows, tensor):
    """The tensor-core stages against cuBLAS at the same precision and the `mma.sync` probe, at
    4096^3 and 8192^3 per type (TF32, BF16, FP16: the group's label names it), beside the FP32
    default and FP32 cuBLAS on the same shape (what the tensor cores buy). The probe bounds
    `mma.sync` alone: cuBLAS and stage 10 issue `wgmma` and may pass it."""
    fp32 = {}
    for r in rows:
        if r.dist.startswith("float:") and r.variant in ("optimized", "library:cublas"):
            fp32.setdefault(r.dist.split(":", 1)[1], {})[r.variant + " (FP32)"] = r.throughput
    groups, legend = OrderedDict(), []
    for r in tensor:
        if r.variant not in TENSOR_SERIES:
            continue
        kind, _, shape = r.dist.partition(":")
        if shape not in ("4096x4096x4096", "8192x8192x8192"):
            continue
        name = shape.replace("x", "×", 1).replace("x", "\n×", 1) + f"\n{kind}"
        groups.setdefault(name, dict(fp32.get(shape, {})))[TENSOR_SERIES[r.variant]] = \
            r.throughput
    for name in ("optimized (FP32)", "library:cublas (FP32)", *TENSOR_SERIES.values()):
        legend.append(copy.copy(tensor[0]))
        legend[-1].variant = name
    p.bars(chapter, legend, groups, "tensor",
           f"{chapter}: tensor cores (mma.sync, wgmma) and cuBLAS at the same precision (M×N×K)",
           tensor[0].unit)


GRID_RE = re.compile(r"grid_(2d|1d|single)_(mxm|mx2m)_(global|shared)")
BLOCK_RE = re.compile(r"block_(\d+)x(\d+)")
ARRANGEMENT = {"2d": "2-D grid", "1d": "1-D grid per block row", "single": "one block per tile"}
SHAPE = {"mxm": "M×M", "mx2m": "M×2M"}
LAUNCH_COLORS = {"": "tab:blue", "graph": "tab:orange", "graph fork": "tab:green",
                 "persistent": "tab:purple"}


def extra_words(variant, match):
    """What a variant adds around its grid/block name (`+graph`, `+persistent`, ...)."""
    rest = (variant[:match.start()] + " " + variant[match.end():]).replace(":", " ")
    words = [w for w in re.split(r"[\s_+]+", rest) if w and w not in ("optimized", "library")]
    return " ".join(words)


def plot_ch05(p, chapter, rows):
    """The paper's tables: arrangements by colour (2-D, 1-D, single block), block shapes by line
    style (M×2M solid, M×M dashed); the launch-overhead study (plain launches against CUDA
    Graphs and a persistent grid) in its own figure; the chapter executables' rows last."""
    arrangement_colors = {"2d": "tab:blue", "1d": "tab:orange", "single": "tab:green"}
    styles = {"CPU": {"color": "0.5", "linestyle": ":", "linewidth": 1.8}}
    grid, blocks, launch, other, cpu, labels = {"global": [], "shared": []}, [], [], [], [], {}
    block_sizes = sorted({m.group(0) for m in map(BLOCK_RE.search, (r.variant for r in rows)) if m},
                         key=lambda b: [int(x) for x in re.findall(r"\d+", b)])
    # The launch study: configurations measured with +graph, +persistent, ... and at which N.
    launch_ns = {}
    for r in rows:
        m = GRID_RE.search(r.variant)
        if m and extra_words(r.variant, m):
            launch_ns.setdefault(m.group(0), set()).add(r.n)
    for r in rows:
        m, b = GRID_RE.search(r.variant), BLOCK_RE.search(r.variant)
        if r.variant == "cpu":
            labels[id(r)] = "CPU"
            cpu.append(r)
        elif m:
            extra = extra_words(r.variant, m)
            label = f"{ARRANGEMENT[m.group(1)]}, {SHAPE[m.group(2)]}"
            if not extra:
                styles.setdefault(label, {"color": arrangement_colors[m.group(1)], "linewidth": 1.6,
                                          "linestyle": "-" if m.group(2) == "mx2m" else "--"})
                labels[id(r)] = label
                grid[m.group(3)].append(r)
            if r.n in launch_ns.get(m.group(0), ()):  # plain launches: the study's baseline
                launch_label = f"{ARRANGEMENT[m.group(1)]}: " + (extra or "plain launches")
                styles.setdefault(launch_label, {
                    "color": LAUNCH_COLORS.get(extra, "tab:brown"), "linewidth": 1.6,
                    "linestyle": "-" if m.group(1) == "single" else "--"})
                labels[(id(r), "launch")] = launch_label
                launch.append(r)
        elif b:
            extra = extra_words(r.variant, b)
            label = f"block {b.group(1)}×{b.group(2)}" + (f" ({extra})" if extra else "")
            shade = block_sizes.index(b.group(0)) / max(1, len(block_sizes) - 1)
            styles.setdefault(label, {"color": p.plt.get_cmap("viridis")(0.9 * shade),
                                      "linewidth": 1.6})
            labels[id(r)] = label
            blocks.append(r)
        elif r.variant.startswith("empty_launch"):
            label = "empty launches: " + ("graph" if "graph" in r.variant else "plain launches")
            styles.setdefault(label, {"color": "0.35", "linewidth": 1.2,
                                      "linestyle": "-." if "graph" in r.variant else ":"})
            labels[(id(r), "launch")] = label
            launch.append(r)
        else:
            other.append(r)

    def cpu_within(selected, exact=False):  # the CPU line only over the sizes of the figure
        ns = {r.n for r in selected}
        return [r for r in cpu if (r.n in ns if exact else min(ns) <= r.n <= max(ns))]

    def label_of(r):
        return labels[id(r)]

    ylabel = "time per product (ms)"
    if grid["global"] or grid["shared"]:
        def draw_times(ax, memory):
            p.times_vs_n(ax, series_by_variant(grid[memory] + cpu_within(grid[memory]), label_of),
                         styles)
            return ylabel

        memory_panels(p, chapter, [k for k in ("global", "shared") if grid[k]], draw_times,
                      f"{chapter}: grid arrangements (the paper's Tables 1–3)", "tables_1_3")
    if blocks:
        fig, ax = p.plt.subplots(figsize=(8.5, 4.6))
        p.times_vs_n(ax, series_by_variant(blocks + cpu_within(blocks), label_of), styles)
        p.finish(ax, f"{chapter}: block sizes, one block per tile, shared memory (Table 4)", "N",
                 ylabel)
        p.save(fig, chapter, "table_4")
    if launch:
        fig, ax = p.plt.subplots(figsize=(8.5, 4.6))
        p.times_vs_n(ax, series_by_variant(launch, lambda r: labels[(id(r), "launch")]), styles)
        p.finish(ax, f"{chapter}: launch overhead, M×2M blocks, shared memory", "N", "time (ms)")
        p.save(fig, chapter, "launch_overhead")
    if other:
        p.time_vs_n(chapter, other + cpu_within(other, exact=True), "executables",
                    f"{chapter}: the chapter executables", linear_x=True)
    cpu_ms = {r.n: r.median_ms for r in cpu if r.median_ms > 0}
    if cpu_ms and (grid["global"] or grid["shared"]):
        plot_fig5(p, chapter, grid, cpu_ms, label_of, styles)
    if blocks:
        plot_fig6(p, chapter, blocks, block_sizes)


def plot_fig5(p, chapter, grid, cpu_ms, label_of, styles):
    """The paper's Fig. 5: speed-up over the CPU (CPU time / GPU time) against N, per memory
    kind, arrangement and block shape, at the sizes where the CPU product was timed."""
    def draw_speedup(ax, memory):
        for label, (_, _, rs) in series_by_variant(grid[memory], label_of).items():
            pts = [(r.n, cpu_ms[r.n] / r.median_ms) for r in rs if r.n in cpu_ms and r.median_ms > 0]
            if pts:
                xs, ys = zip(*pts)
                ax.plot(xs, ys, marker="o", markersize=3.5, label=label, **styles[label])
        ax.set_yscale("log")
        return "speed-up over the CPU"

    memory_panels(p, chapter, [k for k in ("shared", "global") if grid[k]], draw_speedup,
                  f"{chapter}: speed-up over one CPU core (the paper's Fig. 5)", "fig5_speedup")


def memory_panels(p, chapter, panels, draw, title, what):
    """One panel per memory kind side by side, sharing the y axis and one legend (the same
    arrangement has the same style in each). `draw(ax, memory)` fills a panel and returns its
    y label."""
    fig, axes = p.plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 4.6), sharey=True,
                               squeeze=False)
    shown = OrderedDict()
    for ax, memory in zip(axes[0], panels):
        ylabel = draw(ax, memory)
        p.finish(ax, f"{memory} memory", "N", ylabel, legend=False)
        for handle, label in zip(*ax.get_legend_handles_labels()):
            shown.setdefault(label, handle)
    fig.legend(list(shown.values()), list(shown.keys()), fontsize=8, frameon=False,
               loc="upper left", bbox_to_anchor=(1.0, 0.9))
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    p.save(fig, chapter, what)


def plot_fig6(p, chapter, blocks, block_sizes):
    """The paper's Fig. 6: the speed-up of each step to the next larger block (time with the
    smaller block / time with the larger one) against N; single block, shared memory."""
    times = {}
    for r in blocks:
        b = BLOCK_RE.search(r.variant)
        if not extra_words(r.variant, b):
            times.setdefault(b.group(0), {})[r.n] = r.median_ms
    ordered = [b for b in block_sizes if b in times]
    fig, ax = p.plt.subplots(figsize=(8.5, 4.6))
    for i, (small, large) in enumerate(zip(ordered, ordered[1:])):
        ns = sorted(n for n in set(times[small]) & set(times[large]) if times[large][n] > 0)
        if ns:
            name = lambda b: "×".join(BLOCK_RE.search(b).groups())
            ax.plot(ns, [times[small][n] / times[large][n] for n in ns], marker="o",
                    markersize=3.5, color=PALETTE[i % len(PALETTE)],
                    label=f"{name(small)} → {name(large)}")
    ax.axhline(1.0, color="0.5", linewidth=1, linestyle=":")
    ax.set_ylim(bottom=0)
    p.finish(ax, f"{chapter}: gain from each larger block (the paper's Fig. 6)", "N",
             "time ratio, smaller / larger block")
    p.save(fig, chapter, "fig6_block_steps")


def plot_generic(p, chapter, rows):
    p.throughput_vs_n(chapter, rows, "throughput", f"{chapter}: throughput")


PLOTTERS = {"01": plot_ch01, "02": plot_ch02, "03": plot_ch03, "04": plot_ch04, "05": plot_ch05}


def select_csvs(results, wanted):
    """The CSV files to plot: all of them, or those matching each requested chapter (device.csv
    holds the measured peaks, not benchmark rows)."""
    available = sorted(p for p in results.glob("[0-9][0-9]_*.csv")) if results.is_dir() else []
    if not wanted:
        if not available:
            warn(f"no results in {results}; nothing to plot")
        return available
    chosen = []
    for name in wanted:
        hits = [p for p in available if p.stem == name or p.stem.startswith(name + "_")]
        if not hits:
            warn(f"no CSV for chapter '{name}' in {results}; skipping it")
        chosen += [h for h in hits if h not in chosen]
    return chosen


def main(argv):
    parser = argparse.ArgumentParser(
        description="Draw SVG plots from the chapters' benchmark CSV files.",
        epilog="Example: python3 scripts/plot_results.py 01_minmax_reduction (the ceilings drawn "
               "come from the results' device.csv)")
    parser.add_argument("chapters", nargs="*",
                        help="chapter folder names or numbers (default: all)")
    parser.add_argument("--results", type=Path, default=REPO / "docs" / "results",
                        help="folder with <chapter>.csv (default: docs/results)")
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "plots",
                        help="folder for the SVG files (default: docs/plots)")
    parser.add_argument("--copy-gbps", type=float, default=None,
                        help="measured device copy bandwidth in GB/s, drawn on GB/s plots "
                             "(0: none)")
    parser.add_argument("--read-gbps", type=float, default=None,
                        help="measured read-only bandwidth in GB/s, drawn on the plots of "
                             "read-only kernels")
    parser.add_argument("--fp32-gflops", type=float, default=None,
                        help="FP32 peak in GFLOP/s, drawn on GFLOP/s plots")
    args = parser.parse_args(argv)
    # Peaks not given on the command line come from <results>/device.csv (the GPU suite's
    # staged_device_query row), so the lines on every plot are the ceilings of the same run.
    device = args.results / "device.csv"
    if device.exists():
        with open(device, newline="", encoding="utf-8") as f:
            peaks = next(csv.DictReader(f), {}) or {}
        for flag, column in (("copy_gbps", "copy_gbps"), ("read_gbps", "read_gbps"),
                             ("fp32_gflops", "fp32_gflops")):
            if getattr(args, flag) is None and peaks.get(column):
                setattr(args, flag, float(peaks[column]))
    for flag in ("copy_gbps", "read_gbps", "fp32_gflops"):
        value = getattr(args, flag)
        if value is not None and not (value >= 0 and math.isfinite(value)):
            parser.error(f"--{flag.replace('_', '-')} must be a number >= 0")
        if value == 0:  # a peak that was not measured (STAGED_SKIP_PEAKS): draw no line
            setattr(args, flag, None)

    csvs = select_csvs(args.results, args.chapters)
    if not csvs:
        return 0
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_results: matplotlib is not installed; install it with "
              "'python3 -m pip install matplotlib' (or 'apt-get install python3-matplotlib')",
              file=sys.stderr)
        return 1
    plt.rcParams.update({"svg.hashsalt": "staged-kernels", "svg.fonttype": "none",
                         "font.size": 10, "axes.titlesize": 11})
    args.out.mkdir(parents=True, exist_ok=True)
    plotter = Plotter(plt, args.out, args.copy_gbps, args.fp32_gflops, args.read_gbps)
    status = 0
    for path in csvs:
        chapter = path.stem
        try:
            rows = load_rows(path)
        except (CsvError, OSError, UnicodeDecodeError) as err:
            print(f"plot_results: {err}", file=sys.stderr)
            status = 2
            continue
        if not rows:
            warn(f"{path} has no rows to plot; skipping {chapter}")
            continue
        PLOTTERS.get(chapter[:2], plot_generic)(plotter, chapter, rows)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
