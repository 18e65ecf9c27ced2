#!/usr/bin/env python3
"""Inlines marked regions of the compiled sources into the Markdown pages as fenced code blocks,
so that a page shows the code that is built and tested, in both renderings (code host and site).

In a source file, a region lies between two comment lines (`//` or `#` comments):

    // snippet-begin: ch01-warp-shuffle
    for (int offset = 16; offset > 0; offset /= 2) { ... }
    // snippet-end: ch01-warp-shuffle

Names are letters, digits, '.', '_' and '-', unique within a file. Regions may overlap or nest;
marker lines inside a region are left out of the block, and the block is dedented.

In a page, a pair of HTML comments (invisible on a code host and in the site) holds the block:

    <!-- snippet chapters/01_minmax_reduction/block_minmax.cuh ch01-warp-shuffle -->
    ```cuda
    (the region, written by this script)
    ```
    <!-- /snippet -->

The path is relative to the repository root. The block's language comes from the file's
extension (.cu/.cuh: cuda, .cpp/.hpp/.h: cpp, .py: python, .sh: sh, .cmake and CMakeLists.txt:
cmake). To add a
block, write the two comment lines and run this script; it fills in the fence.

Usage: scripts/snippets.py [--check] [PAGE.md ...]     (default: every tracked *.md)
  (no option)  rewrite each block from its source region
  --check      change nothing; exit 1 naming each page and region whose block differs from its
               source, and each marker that names a missing file or region
Exit status: 0 up to date (or rewritten), 1 a block differs or a marker is broken, 2 usage.
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "docs" / "tools"))
import mdpages  # noqa: E402  (where the code blocks of a page are)

NAME = r"[A-Za-z0-9_.-]+"
SOURCE_MARKER = re.compile(rf"^\s*(?://|#)\s*snippet-(?P<which>begin|end):\s*(?P<name>{NAME})\s*$")
PAGE_BEGIN = re.compile(rf"^\s*<!--\s*snippet\s+(?P<path>\S+)\s+(?P<name>{NAME})\s*-->\s*$")
PAGE_END = re.compile(r"^\s*<!--\s*/snippet\s*-->\s*$")
PAGE_ANY = re.compile(r"<!--\s*/?snippet\b")
LANGUAGES = {".cu": "cuda", ".cuh": "cuda", ".cpp": "cpp", ".hpp": "cpp", ".h": "cpp",
             ".cc": "cpp", ".py": "python", ".sh": "sh", ".cmake": "cmake"}


class SnippetError(Exception):
    pass


def read_regions(path):
    """{name: [lines]} of the regions of one source file."""
    regions, open_at, seen = {}, {}, set()
    lines = path.read_text(encoding="utf-8").split("\n")
    for number, line in enumerate(lines, 1):
        m = SOURCE_MARKER.match(line)
        if not m:
            for name in open_at:
                regions[name].append(line)
            continue
        name = m.group("name")
        if m.group("which") == "begin":
            if name in open_at or name in seen:
                raise SnippetError(f"{path.relative_to(ROOT)}:{number}: region '{name}' begins "
                                   "twice (names are unique within a file)")
            open_at[name] = number
            regions[name] = []
        else:
            if name not in open_at:
                raise SnippetError(f"{path.relative_to(ROOT)}:{number}: 'snippet-end: {name}' "
                                   "without a matching snippet-begin")
            del open_at[name]
            seen.add(name)
    for name, number in open_at.items():
        raise SnippetError(f"{path.relative_to(ROOT)}:{number}: region '{name}' is never ended "
                           f"(add '// snippet-end: {name}')")
    return {name: dedent(body) for name, body in regions.items()}


def dedent(lines):
    while lines and not lines[0].strip():
        lines = lines[1:]
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    # Preprocessor lines (#pragma unroll, #if) sit at column 0 whatever the code's indentation:
    # they do not set the cut, and lose only the spaces they have.
    indents = [len(l) - len(l.lstrip(" ")) for l in lines
               if l.strip() and not l.lstrip().startswith("#")]
    cut = min(indents) if indents else 0
    return [l[min(cut, len(l) - len(l.lstrip(" "))):].rstrip() if l.strip() else ""
            for l in lines]


class Sources:
    def __init__(self):
        self.cache = {}

    def region(self, rel, name):
        path = (ROOT / rel).resolve()
        try:
            path.relative_to(ROOT.resolve())
        except ValueError:
            raise SnippetError(f"'{rel}' is outside the repository")
        if not path.is_file():
            raise SnippetError(f"no source file '{rel}' (paths are relative to the repository "
                               "root)")
        if path not in self.cache:
            self.cache[path] = read_regions(path)
        regions = self.cache[path]
        if name not in regions:
            known = ", ".join(sorted(regions)) or "none"
            raise SnippetError(f"'{rel}' has no region '{name}' (its regions: {known})")
        if not regions[name]:
            raise SnippetError(f"region '{name}' of '{rel}' is empty")
        return regions[name]


def fence_for(code):
    longest = max((len(m.group(0)) for m in re.finditer(r"`{3,}", "\n".join(code))), default=0)
    return "`" * max(3, longest + 1)


def render_block(rel, code):
    path = pathlib.PurePosixPath(rel)
    language = "cmake" if path.name == "CMakeLists.txt" else LANGUAGES.get(path.suffix, "")
    fence = fence_for(code)
    return [fence + language] + code + [fence]


def process(page_rel, text, sources):
    """(new text, [problems]) for one page; problems name the page, line and region."""
    lines = text.split("\n")
    kinds = [kind for _, _, kind in mdpages.scan(text)]
    out, problems, i = [], [], 0
    while i < len(lines):
        line = lines[i]
        begin = PAGE_BEGIN.match(line) if kinds[i] == "text" else None
        if not begin:
            if kinds[i] != "text":  # a marker shown inside a code block is an example
                pass
            elif PAGE_END.match(line):
                problems.append(f"{page_rel}:{i + 1}: '<!-- /snippet -->' without an opening "
                                "'<!-- snippet PATH REGION -->'")
            elif PAGE_ANY.search(line):
                problems.append(f"{page_rel}:{i + 1}: malformed snippet marker (write "
                                "'<!-- snippet PATH REGION -->' on a line of its own)")
            out.append(line)
            i += 1
            continue
        end = i + 1
        while end < len(lines) and not PAGE_END.match(lines[end]) \
                and not PAGE_BEGIN.match(lines[end]):
            end += 1
        where = f"{page_rel}:{i + 1}: snippet {begin.group('path')} {begin.group('name')}"
        if end >= len(lines) or not PAGE_END.match(lines[end]):
            problems.append(f"{where}: no '<!-- /snippet -->' before the next snippet or the end")
            out.append(line)
            i += 1
            continue
        try:
            code = sources.region(begin.group("path"), begin.group("name"))
        except SnippetError as error:
            problems.append(f"{where}: {error}")
            out.extend(lines[i:end + 1])
            i = end + 1
            continue
        block = render_block(begin.group("path"), code)
        if lines[i + 1:end] != block:
            problems.append(f"{where}: the block differs from its source region "
                            "(run scripts/snippets.py)")
        out.append(line)
        out.extend(block)
        out.append(lines[end])
        i = end + 1
    return "\n".join(out), problems


def main():
    parser = mdpages.tool_parser(__doc__)
    parser.add_argument("--check", action="store_true",
                        help="change nothing; exit 1 when a block is stale or a marker is broken")
    parser.add_argument("pages", nargs="*", help="pages (default: every tracked *.md)")
    args = parser.parse_args()
    pages = []
    for p in args.pages or mdpages.tracked_pages(ROOT):
        path = (ROOT / p) if not pathlib.Path(p).is_absolute() else pathlib.Path(p)
        if not pathlib.Path(p).is_absolute() and not path.exists():
            path = pathlib.Path(p).resolve()
        try:
            pages.append(path.resolve().relative_to(ROOT.resolve()).as_posix())
        except ValueError:
            print(f"snippets: {p} is not inside {ROOT}", file=sys.stderr)
            return 2
    sources = Sources()
    failures, blocks, rewritten = [], 0, 0
    for page in pages:
        text = (ROOT / page).read_text(encoding="utf-8")
        blocks += sum(1 for _, l, kind in mdpages.scan(text)
                      if kind == "text" and PAGE_BEGIN.match(l))
        new, problems = process(page, text, sources)
        stale = [p for p in problems if p.endswith("(run scripts/snippets.py)")]
        broken = [p for p in problems if p not in stale]
        failures.extend(broken)
        if args.check:
            failures.extend(stale)
        elif new != text:
            (ROOT / page).write_text(new, encoding="utf-8")
            rewritten += 1
            print(f"snippets: {page}: {len(stale)} block(s) rewritten from their sources")
    for f in failures:
        print(f, file=sys.stderr)
    if failures:
        print(f"snippets: {len(failures)} problem(s)", file=sys.stderr)
        return 1
    verb = "match their source regions" if args.check else "are up to date"
    print(f"snippets: {blocks} block(s) in {len(pages)} page(s) {verb}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
