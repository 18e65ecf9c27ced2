#!/usr/bin/env python3
"""Writes the table of contents of each page that asks for one, as a Markdown list that a code
host shows as it is (the site replaces it by its own table, docs/tools/doxygen_filter.py).

A page asks for a table of contents with a line `<!-- toc -->`; this script puts the list of the
page's level 2 and 3 headings after it, each a link to the heading's anchor, and closes the block
with a line `<!-- /toc -->`:

    <!-- toc -->
    - [Running it](#running-it)
      - [Change 1: a grid-stride loop](#change-1-a-grid-stride-loop)
    <!-- /toc -->

Everything between the two lines is rewritten on each run.

Usage: scripts/toc.py [--check] [PAGE.md ...]     (default: every tracked *.md)
  --check   change nothing; exit 1 naming each page whose list differs from its headings
Exit status: 0 up to date (or rewritten), 1 a list is stale, 2 usage.
"""
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "docs" / "tools"))
import mdpages  # noqa: E402


def with_toc(text):
    """The page with its table of contents regenerated (unchanged without a toc line)."""
    block = mdpages.toc_block(text)
    if block is None:
        return text
    lines = text.split("\n")
    first, last = block
    if last is None:  # a bare `<!-- toc -->`: the list and the closing line are added
        last = first
        tail = lines[first + 1:]
    else:
        tail = lines[last + 1:]
    return "\n".join(lines[:first + 1] + mdpages.toc_lines(text) + [mdpages.TOC_END] + tail)


def main():
    parser = mdpages.tool_parser(__doc__)
    parser.add_argument("--check", action="store_true",
                        help="change nothing; exit 1 when a table of contents is stale")
    parser.add_argument("pages", nargs="*", help="pages (default: every tracked *.md)")
    args = parser.parse_args()
    stale, count = [], 0
    given = [pathlib.Path(p).resolve() for p in args.pages]
    for page, path in ([(p, r) for p, r in zip(args.pages, given)] if args.pages else
                       [(p, ROOT / p) for p in mdpages.tracked_pages(ROOT)]):
        if not path.exists():
            print(f"toc: no page {page}", file=sys.stderr)
            return 2
        text = path.read_text(encoding="utf-8")
        new = with_toc(text)
        count += mdpages.toc_block(text) is not None
        if new != text:
            if args.check:
                stale.append(page)
            else:
                path.write_text(new, encoding="utf-8")
                print(f"toc: {page}: table of contents rewritten")
    for page in stale:
        print(f"{page}: the table of contents differs from the headings (run scripts/toc.py)",
              file=sys.stderr)
    if stale:
        return 1
    print(f"toc: {count} table(s) of contents " + ("match their headings" if args.check
                                                   else "are up to date"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
