#!/usr/bin/env python3
"""Regenerates the measured numbers and results tables of the pages from docs/results/*.csv.

Figures. A number in prose is a *named figure*: the page writes the value followed by a short
comment that names it,

    ... reads 2^28 floats at 4.43<!--=opt_tbs--> TB/s ...

and the name is defined once, in the `figures.txt` of the page's folder (chapter pages) or in
docs/figures.txt (the device's figures, shared assumptions, and the figures of docs/pages/*.md, the
root README.md and docs/results/README.md). Any page may name a chapter's figure as `chNN.name`.
This script rewrites the value in front of every marker; a marker written without a value
(`<!--=opt_tbs-->`) gets one. A marker may show the figure in another format than its
definition's: `4.4<!--=opt_tbs:.1f-->`. One definition a line, `NAME FORMAT SOURCE`:

    opt_tbs     .2f      01 variant=optimized n=2^28 dist=float:uniform col=throughput scale=0.001
    opt_vs_min  .3f      01 variant=optimized n=2^26..2^30 dist=float:uniform col=vs_library agg=min
    in_flight   .1f      = read_tbs * lat_ns / 1000        # MB: bandwidth x latency (Little's law)
    lat_ns      .0f      assume 600: a round figure for the latency of a load under load
    big_target  ge=0.95  = opt_vs_min

FORMAT is a Python format spec (`.2f`, `.0f`, `.3g`, `,d`), or a bound, `ge=X` or `le=X`, that
makes the figure a verdict: `met` when the value is at least (at most) X, else `missed`.
SOURCE is one of
  - a lookup: the CSV (a chapter number such as 01, or `device` for device.csv), selectors
    (`variant=`, `n=`, `dist=`, or any other column; n accepts 2^k, K/M/G, 537e6 and the range
    2^a..2^b of every power of two between), the value (`col=<column>`, or `ratio=<variant>`: that
    row's median over this row's median, at the same n and dist), optional `scale=` (a factor),
    `divide=` (the value becomes divide / value) and `agg=min|max` when several rows match;
  - `= EXPRESSION`: arithmetic (+ - * / // % **, parentheses, numbers, min, max, abs, round,
    floor, ceil, sqrt, log2) over other figures, for predictions and derived figures;
  - `assume VALUE: REASON`: a model parameter that is neither measured nor derived (a latency,
    a cycle count); the reason is required and says where the value comes from.
A line may end with `  # comment`; blank lines and lines starting with `#` are comments.
A selector that matches no row, several rows without `agg`, an unknown name, a cycle among
expressions, a name defined twice or a definition no page uses is an error.

Tables. A table of CSV rows sits between two lines,

    <!-- results variants=naive,optimized,library:cub n=2^20,2^28 dist=uniform -->
    (generated table, replaced on every run)
    <!-- /results -->

with optional variants=, n=, dist= (comma lists; n as above), columns= (comma list of CSV
columns; default variant,n,dist,median_ms,throughput,unit,pct_peak,speedup_cpu,speedup_naive,
vs_library,verified) and, on a page outside a chapter folder, csv=<chapter folder or number>.
A run that repeats a (variant, n, dist) row shows the first one.

Markers inside fenced code blocks and code spans are examples and are left alone.

Pages: every chapter folder's *.md, the root README.md, docs/pages/*.md, docs/results/README.md.

Usage: scripts/update_results.py [--results docs/results] [--check] [page ...]
--check changes nothing and exits 1 when a page differs from the CSV or a figure is wrong.
"""
import argparse
import ast
import csv
import math
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "docs" / "tools"))
import mdpages  # noqa: E402  (where code blocks are; the figure marker's pattern)

SHARED = pathlib.Path("docs") / "figures.txt"
DEFAULT_COLUMNS = ["variant", "n", "dist", "median_ms", "throughput", "unit", "pct_peak",
                   "speedup_cpu", "speedup_naive", "vs_library", "verified"]
HEADINGS = {"median_ms": "median ms", "min_ms": "min ms", "max_ms": "max ms",
            "pct_peak": "% peak", "speedup_cpu": "× CPU", "speedup_naive": "× naive",
            "vs_library": "vs library"}
TABLE = re.compile(r"^(<!-- results(?P<opts>(?: [^>]*)?) -->\n)(?P<body>.*?)^(<!-- /results -->)$",
                   re.S | re.M)
NAME = re.compile(r"[A-Za-z_]\w*\Z")
LOOKUP_KEYS = {"col", "ratio", "scale", "divide", "agg"}
FUNCTIONS = {"min": min, "max": max, "abs": abs, "round": round, "floor": math.floor,
             "ceil": math.ceil, "sqrt": math.sqrt, "log2": math.log2}
OPERATORS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b,
             ast.Mult: lambda a, b: a * b, ast.Div: lambda a, b: a / b,
             ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b,
             ast.Pow: lambda a, b: a ** b}


class MarkerError(Exception):
    """A figure, a definition or a table marker that cannot be resolved."""


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


def parse_sizes(text):
    """The n values of a comma list; `2^a..2^b` is every power of two from 2^a to 2^b."""
    out = []
    for item in text.split(","):
        m = re.fullmatch(r"2\^(\d+)\.\.2\^(\d+)", item)
        if m:
            out += [str(2 ** k) for k in range(int(m.group(1)), int(m.group(2)) + 1)]
        else:
            out.append(parse_size(item))
    return out


def lookup(words, csvs, where):
    """The value a lookup (`01 variant=... col=...`) names."""
    source, pairs = words[0], {}
    for w in words[1:]:
        if "=" not in w:
            raise MarkerError(f"{where}: '{w}' is not key=value")
        k, v = w.split("=", 1)
        pairs[k] = v
    rows = csvs(source)
    selectors = {k: parse_sizes(v) if k == "n" else v.split(",")
                 for k, v in pairs.items() if k not in LOOKUP_KEYS}
    matched = [r for r in rows if all(r.get(k) in vals for k, vals in selectors.items())]
    if not matched:
        raise MarkerError(f"{where}: no row of {source} matches")
    values = []
    for r in matched:
        if "ratio" in pairs:
            other = [o for o in rows if o["variant"] == pairs["ratio"] and o["n"] == r["n"]
                     and o["dist"] == r["dist"]]
            if len(other) != 1:
                raise MarkerError(f"{where}: ratio row {pairs['ratio']} not unique")
            values.append(float(other[0]["median_ms"]) / float(r["median_ms"]))
        else:
            col = pairs.get("col")
            if col is None or col not in r:
                raise MarkerError(f"{where}: col= names no column of {source}")
            values.append(float(r[col]))
    if len(values) > 1 and pairs.get("agg") not in ("min", "max"):
        raise MarkerError(f"{where}: {len(values)} rows match; add agg=min|max")
    value = min(values) if pairs.get("agg") == "min" else max(values)
    if "divide" in pairs:
        value = float(pairs["divide"]) / value
    return value * float(pairs.get("scale", "1"))


class Figures:
    """The figure definitions of every figures.txt, evaluated on demand."""

    def __init__(self, root, csvs):
        self.root, self.csvs = root, csvs
        self.files = {}      # scope ("" for the shared file, "chNN") -> {name: (fmt, source, where)}
        self.values = {}
        self.used = set()    # (scope, name)
        self.evaluating = []

    def chapter_scope(self, folder):
        m = re.match(r"(\d\d)_", folder.name)
        return "ch" + m.group(1) if m and folder.parent.name == "chapters" else None

    def definitions(self, scope):
        if scope not in self.files:
            if scope == "":
                path = self.root / SHARED
            else:
                folders = sorted((self.root / "chapters").glob(scope[2:] + "_*"))
                if not folders:
                    raise MarkerError(f"no chapter folder for '{scope}'")
                path = folders[0] / "figures.txt"
            self.files[scope] = self.read(path) if path.exists() else {}
        return self.files[scope]

    def read(self, path):
        rel = path.relative_to(self.root).as_posix()
        found = {}
        for number, raw in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
            line = re.split(r"\s\s+#\s", raw, maxsplit=1)[0].strip()
            if not line or line.startswith("#") or line.startswith("source "):
                continue
            parts = line.split(None, 2)
            where = f"{rel}:{number}"
            if len(parts) < 3 or not NAME.match(parts[0]):
                raise MarkerError(f"{where}: write NAME FORMAT SOURCE")
            if parts[0] in found:
                raise MarkerError(f"{where}: '{parts[0]}' is defined twice")
            found[parts[0]] = (parts[1], parts[2], where)
        return found

    def scopes_for(self, page):
        """The scopes a bare name on `page` is looked up in, in order."""
        scope = self.chapter_scope(page.parent)
        return [scope, ""] if scope else [""]

    def resolve(self, name, scopes):
        """(scope, name) of `name` (bare or chNN.name) seen from `scopes`."""
        if "." in name:
            scope, bare = name.split(".", 1)
            if not re.fullmatch(r"ch\d\d", scope) or bare not in self.definitions(scope):
                raise MarkerError(f"unknown figure '{name}'")
            return scope, bare
        hits = [s for s in scopes if name in self.definitions(s)]
        if not hits:
            raise MarkerError(f"unknown figure '{name}'")
        if len(hits) > 1:
            raise MarkerError(f"figure '{name}' is defined in two files: "
                              + " and ".join(self.definitions(s)[name][2] for s in hits))
        return hits[0], name

    def value(self, name, scopes):
        key = self.resolve(name, scopes)
        self.used.add(key)
        if key in self.values:
            return self.values[key]
        if key in self.evaluating:
            raise MarkerError("figures defined through each other: "
                              + " -> ".join(".".join(k) for k in self.evaluating + [key]))
        self.evaluating.append(key)
        fmt, source, where = self.definitions(key[0])[key[1]]
        own = [key[0], ""] if key[0] else [""]
        try:
            if source.startswith("="):
                value = self.expression(source[1:].strip(), own, where)
            elif source.startswith("assume "):
                m = re.fullmatch(r"assume\s+(\S+?):\s*(\S.*)", source)
                if not m:
                    raise MarkerError(f"{where}: write 'assume VALUE: REASON'")
                value = float(m.group(1))
            else:
                value = lookup(source.split(), self.csvs, where)
        finally:
            self.evaluating.pop()
        self.values[key] = value
        return value

    def expression(self, text, scopes, where):
        try:
            tree = ast.parse(text, mode="eval")
        except SyntaxError:
            raise MarkerError(f"{where}: '{text}' is not an expression")

        def ev(node):
            if isinstance(node, ast.Expression):
                return ev(node.body)
            if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
                return node.value
            if isinstance(node, ast.BinOp) and type(node.op) in OPERATORS:
                return OPERATORS[type(node.op)](ev(node.left), ev(node.right))
            if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
                return -ev(node.operand) if isinstance(node.op, ast.USub) else ev(node.operand)
            if isinstance(node, ast.Name):
                return self.value(node.id, scopes)
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                return self.value(f"{node.value.id}.{node.attr}", scopes)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                    and node.func.id in FUNCTIONS and not node.keywords:
                return FUNCTIONS[node.func.id](*[ev(a) for a in node.args])
            raise MarkerError(f"{where}: '{ast.unparse(node)}' is not allowed in an expression")
        return ev(tree)

    def text(self, name, scopes, override=None):
        """The figure as the page shows it (in the marker's format, if it names one)."""
        value = self.value(name, scopes)
        scope, bare = self.resolve(name, scopes)
        fmt = override or self.definitions(scope)[bare][0]
        m = re.fullmatch(r"(ge|le)=(\S+)", fmt)
        if m:
            bound = float(m.group(2))
            return "met" if (value >= bound if m.group(1) == "ge" else value <= bound) \
                else "missed"
        try:
            return format(round(value) if fmt.endswith("d") else value, fmt)
        except ValueError:
            raise MarkerError(f"figure '{name}': '{fmt}' is not a format or a bound")

    def unused(self, reached):
        """A line for each definition that no page reaches (directly or through another)."""
        out = []
        for scope in sorted(self.files):
            for name, (_, _, where) in self.files[scope].items():
                if (scope, name) not in reached:
                    out.append(f"{where}: figure '{name}' is used by no page")
        return out


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
    if "n" in want:
        want["n"] = parse_sizes(",".join(want["n"]))
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


def update(page, text, default_rows, csvs, figures):
    """The page's text with every table and figure regenerated."""
    scopes = figures.scopes_for(page)

    def replace_table(m):
        opts = m.group("opts")
        source = re.search(r"\bcsv=(\S+)", opts)
        rows = csvs(source.group(1)) if source else default_rows
        if rows is None:
            raise MarkerError("a results table names no csv= and the page has no chapter")
        return m.group(1) + table(rows, re.sub(r"\bcsv=\S+", "", opts)) + m.group(4)

    def replace_figure(m):
        return figures.text(m.group("name"), scopes, m.group("format")) + m.group("marker")

    # Markers shown inside fenced code blocks (documentation about the markers) are left alone,
    # and so are those inside code spans.
    lines = text.split("\n")
    kinds = [kind for _, _, kind in mdpages.scan(text)]
    out, chunk = [], []

    def flush():
        if chunk:
            part = TABLE.sub(replace_table, "\n".join(chunk))
            new = []
            for line in part.split("\n"):
                spans = [s.span() for s in mdpages.CODE_SPAN.finditer(line)]
                pieces, last = [], 0
                for f in mdpages.FIGURE.finditer(line):
                    if any(a <= f.start("marker") < b for a, b in spans):
                        continue
                    pieces += [line[last:f.start()], replace_figure(f)]
                    last = f.end()
                new.append("".join(pieces) + line[last:])
            out.extend(new)
            chunk.clear()

    for line, kind in zip(lines, kinds):
        if kind == "text":
            chunk.append(line)
        else:
            flush()
            out.append(line)
    flush()
    return "\n".join(out)


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

    figures = Figures(ROOT, csvs)
    targets = []
    for p in args.pages or mdpages.lesson_pages(ROOT):
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
        text = page.read_text(encoding="utf-8")
        try:
            new = update(page, text, default_rows, csvs, figures)
        except MarkerError as e:
            print(f"{rel}: {e}")
            stale += 1
            continue
        if text == new:
            print(f"{rel}: up to date")
        elif args.check:
            print(f"{rel}: tables or figures differ from the CSV in {results}")
            stale += 1
        else:
            page.write_text(new, encoding="utf-8")
            print(f"{rel}: regenerated")
    if not args.pages:  # every page was read: a definition no page reaches is dead
        reached = set(figures.used)
        for scope in ["", *sorted("ch" + k for k in folders)]:
            try:
                names = list(figures.definitions(scope))
            except MarkerError as e:
                print(e)
                stale += 1
                continue
            for name in names:
                try:
                    figures.value(name, [scope] if scope else [""])
                except MarkerError as e:
                    print(e)
                    stale += 1
        for problem in figures.unused(reached):
            print(problem)
            stale += 1
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
