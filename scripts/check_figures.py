#!/usr/bin/env python3
"""Fails on a bandwidth, a throughput or a time in a page that comes neither from the results nor
from a named source document.

A figure a page states is one of two kinds:
  - ours: measured (docs/results/*.csv, device.csv) or derived from measured figures (a
    prediction); the page writes it as a named figure, `4.52<!--=read_tbs--> TB/s`, which
    scripts/update_results.py regenerates from its definition in a figures.txt;
  - a source document's: a figure of a paper, a report, a data sheet; the page names the document
    where it quotes the figure: in the same paragraph or list item, or, in a table, in the same
    cell, the row's first cell or the column's heading.
The documents are listed in docs/figures.txt, one a line, with the words that name them in prose:

    source harris: Harris | G80 | 8800 GTX

This check reads every page (chapter folders, docs/pages, the root README.md and
docs/results/README.md) outside code blocks, code spans, comments, link targets and generated
results tables,
and reports each number followed by a unit of bandwidth (GB/s, TB/s, B/s ...), throughput
(GFLOP/s, TFLOP/s, GE/s, GIOP/s, GHz ...) or time (ns, µs, ms, s, cycles, clocks, bytes per
clock ...) that is not a named figure's value, and, in a table whose column heading names such a
unit, each bare number of that column, unless a source document is named as above.

Usage: scripts/check_figures.py [PAGE.md ...]     (default: every page)
Exit status: 0 every figure is sourced, 1 an unsourced figure (each printed as FILE:LINE: ...).
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "docs" / "tools"))
import mdpages  # noqa: E402

SOURCES = pathlib.Path("docs") / "figures.txt"
NUMBER = r"(?<![\w.^/])\d+(?:[.,]\d+)*(?:\s*(?:–|-|to)\s*\d+(?:[.,]\d+)*)?"
UNIT = (r"(?:[kKMGTP]i?B/s|B/s|bytes?/s|[kMGTP]?FLOP/s|[kMGT]?IOP/s|[kMGT]?E/s|[kMG]?keys/s"
        r"|[kMG]Hz|ns|µs|μs|us|ms|s|sec|seconds?|minutes?|cycles?|clocks?|clk"
        r"|bytes? per (?:clock|cycle|second))")
FIGURE_WITH_UNIT = re.compile(NUMBER + r"[ \u00a0\u202f]?" + UNIT + r"(?![\w/])")
UNIT_ALONE = re.compile(r"(?<![\w/])" + UNIT + r"(?![\w/])")
BARE_NUMBER = re.compile(NUMBER)
RESULTS_BEGIN = re.compile(r"^<!-- results\b")
RESULTS_END = "<!-- /results -->"
ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s")


def read_sources(root):
    """{key: [phrases]} of the source documents named in docs/figures.txt."""
    path = root / SOURCES
    found = {}
    if not path.exists():
        return found
    for line in path.read_text(encoding="utf-8").split("\n"):
        m = re.match(r"source\s+([\w-]+):\s*(.+)$", line.strip())
        if m:
            found[m.group(1)] = [p.strip() for p in m.group(2).split("|") if p.strip()]
    return found


def names_source(text, sources):
    for phrases in sources.values():
        for phrase in phrases:
            if re.search(r"(?<!\w)" + re.escape(phrase) + r"(?!\w)", text):
                return True
    return False


def hide(line):
    """The line as a reader sees its prose: figure values with their markers, other comments and
    code spans blanked out (same length)."""
    out = mdpages.FIGURE.sub(lambda m: " " * len(m.group(0)), line)
    out = re.sub(r"<!--.*?-->", lambda m: " " * len(m.group(0)), out)
    out = mdpages.CODE_SPAN.sub(lambda m: " " * len(m.group(0)), out)
    for kind, _, start, end in mdpages.links(out):  # a link's target is not prose
        out = out[:start] + " " * (end - start) + out[end:]
    return out


def cells(line):
    """The cells of a table row (outer pipes dropped)."""
    body = line.strip()
    body = body[1:] if body.startswith("|") else body
    body = body[:-1] if body.endswith("|") else body
    return re.split(r"(?<!\\)\|", body)


def check_page(rel, text, sources):
    problems = []
    blocks = []          # [(first line number, [(number, raw, shown)])]
    in_results = False
    current = None
    for number, line, kind in mdpages.scan(text):
        if kind != "text":
            current = None
            continue
        if RESULTS_BEGIN.match(line):
            in_results, current = True, None
            continue
        if line.strip() == RESULTS_END:
            in_results = False
            continue
        if in_results or not line.strip():
            current = None
            continue
        is_row = line.lstrip().startswith("|")
        if current is None or ITEM.match(line) or is_row != current[0]:
            current = (is_row, [])
            blocks.append(current)
        current[1].append((number, line, hide(line)))
    for is_table, lines in blocks:
        if is_table:
            problems += check_table(rel, lines, sources)
            continue
        raw = " ".join(r for _, r, _ in lines)
        if names_source(re.sub(r"<!--.*?-->", " ", raw), sources):
            continue
        for number, _, shown in lines:
            for m in FIGURE_WITH_UNIT.finditer(shown):
                problems.append(f"{rel}:{number}: '{m.group(0)}' is neither a named figure nor "
                                "named by its source document")
    return problems


def check_table(rel, lines, sources):
    problems = []
    header = cells(lines[0][2])
    header_raw = cells(re.sub(r"<!--.*?-->", " ", lines[0][1]))
    unit_columns = {i for i, h in enumerate(header) if UNIT_ALONE.search(h)}
    for row_index, (number, raw, shown) in enumerate(lines):
        if row_index == 1 and re.fullmatch(r"[\s|:-]+", raw):
            continue
        row = cells(shown)
        row_raw = cells(re.sub(r"<!--.*?-->", " ", raw))
        first = row_raw[0] if row_raw else ""
        for i, cell in enumerate(row):
            cited = names_source(cell if i >= len(row_raw) else row_raw[i], sources) \
                or names_source(first, sources) \
                or (i < len(header_raw) and names_source(header_raw[i], sources))
            if cited:
                continue
            found = [m.group(0) for m in FIGURE_WITH_UNIT.finditer(cell)]
            if row_index > 1 and i in unit_columns and i > 0:
                found += [m.group(0) for m in BARE_NUMBER.finditer(FIGURE_WITH_UNIT.sub(
                    lambda m: " " * len(m.group(0)), cell))]
            for figure in found:
                problems.append(f"{rel}:{number}: '{figure.strip()}' is neither a named figure "
                                "nor named by its source document")
    return problems


def main():
    parser = mdpages.tool_parser(__doc__)
    parser.add_argument("pages", nargs="*", help="pages to check (default: every page)")
    args = parser.parse_args()
    sources = read_sources(ROOT)
    targets = [pathlib.Path(p).resolve() for p in args.pages] or mdpages.lesson_pages(ROOT)
    problems = []
    for page in targets:
        rel = page.relative_to(ROOT).as_posix() if page.is_relative_to(ROOT) else str(page)
        problems += check_page(rel, page.read_text(encoding="utf-8"), sources)
    for p in problems:
        print(p)
    if problems:
        print(f"check_figures: {len(problems)} figure(s) without a source in {len(targets)} "
              "page(s): write a named figure (value<!--=name-->, defined in a figures.txt) or "
              "name the source document (listed in docs/figures.txt)", file=sys.stderr)
        return 1
    print(f"check_figures: {len(targets)} pages, every bandwidth, throughput and time is a named "
          "figure or named by its source document")
    return 0


if __name__ == "__main__":
    sys.exit(main())
