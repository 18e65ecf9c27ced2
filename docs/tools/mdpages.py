"""What the docs tools agree on about the Markdown pages: their Doxygen labels, heading anchors,
where code and comments are, and which links and images a line holds.

The pages are written for a code host (GitHub-flavoured Markdown). The Doxygen filter
(doxygen_filter.py) translates them for the site with the rules below; check_markdown.py checks
them with the same rules, so the two cannot disagree.

Labels (the site's page names, `ch01.html` ...):
    README.md                     the main page (index)
    chapters/NN_topic/README.md   chNN
    chapters/NN_topic/NAME.md     chNN_NAME (a deeper page of the chapter; the site lists it under
                                  the chapter page)
    docs/pages/NAME.md            NAME
    docs/results/README.md        results
    any other DIR/README.md       DIR;  any other NAME.md: NAME
Heading anchors: the code host's slug of the heading (`## Why it works` -> `why-it-works`);
the site's label of that heading is `<page label>-<slug>` with non-ASCII characters spelled out.
"""
import argparse
import pathlib
import re
import subprocess
import unicodedata
import urllib.parse

ROOT = pathlib.Path(__file__).resolve().parents[2]

# Where the site finds what a page links to (paths relative to the repository root).
IMAGE_DIRS = ("docs/plots", "docs/diagrams")
EXTRA_FILE_DIRS = ("docs/results",)  # copied next to the HTML pages (HTML_EXTRA_FILES)
EXTRA_FILE_SUFFIXES = (".csv", ".txt")
SOURCE_DIRS = ("chapters", "common")  # Doxygen documents these files: a link becomes @ref path
SOURCE_SUFFIXES = (".cu", ".cuh", ".cpp", ".hpp")
IMAGE_SUFFIXES = (".svg", ".png", ".jpg", ".jpeg", ".gif")

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
ATX_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
EXPLICIT_ID = re.compile(r"\s*\{#[A-Za-z_][\w-]*\}\s*$")
CODE_SPAN = re.compile(r"(`+)(.+?)(?<!`)\1(?!`)")
# An inline link or image: [text](dest "title"); text may hold one level of brackets.
INLINE_LINK = re.compile(
    r"(?P<bang>!?)\[(?P<text>(?:[^\[\]\\]|\\.|\[[^\[\]]*\])*)\]"
    r"\(\s*(?P<dest><[^<>\n]*>|[^\s()<>]*(?:\([^\s()]*\)[^\s()<>]*)*)"
    r"(?P<title>\s+(?:\"[^\"]*\"|'[^']*'|\([^()]*\)))?\s*\)")
REF_DEFINITION = re.compile(r"^ {0,3}\[(?P<label>[^\]]+)\]:\s*(?P<dest><[^>]*>|\S+)")
HTML_SRC = re.compile(r"<(?P<tag>img|a)\b[^>]*?\b(?P<attr>src|href)\s*=\s*(?P<q>[\"'])(?P<dest>.*?)(?P=q)",
                      re.I)
HTML_ID = re.compile(r"<a\b[^>]*?\b(?:id|name)\s*=\s*[\"']([^\"']+)[\"']", re.I)
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:|^//")
# A named figure: the value, then a comment naming it (`4.52<!--=read_tbs-->`, or with another
# format than the definition's, `4.5<!--=read_tbs:.1f-->`); the value is rewritten by scripts/update_results.py from the figure's definition in a figures.txt.
FIGURE = re.compile(
    r"(?P<value>(?:met|missed|[-+]?(?:\d[\d,]*(?:\.\d+)?|\.\d+)(?:e[-+]?\d+)?)?)"
    r"(?P<marker><!--=(?P<name>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)?)(?::(?P<format>[\w.,+-]+))?-->)")
# The table of contents: a generated list of the page's headings between two comment lines
# (scripts/toc.py writes it; the site shows its own table instead).
TOC_BEGIN = "<!-- toc -->"
TOC_END = "<!-- /toc -->"
TOC_LEVELS = (2, 3)


def page_label(rel):
    """The site's label of the page at `rel` (a path relative to the root), "index" for the main
    page."""
    parts = pathlib.PurePosixPath(rel).parts
    if parts == ("README.md",):
        return "index"
    if len(parts) == 3 and parts[0] == "chapters":
        m = re.match(r"(\d\d)_", parts[1])
        if m and parts[2] == "README.md":
            return "ch" + m.group(1)
        if m:
            return f"ch{m.group(1)}_" + ascii_label(pathlib.PurePosixPath(parts[2]).stem)
    if len(parts) == 3 and parts[:2] == ("docs", "pages"):
        return ascii_label(pathlib.PurePosixPath(parts[2]).stem)
    if parts == ("docs", "results", "README.md"):
        return "results"
    if parts[-1] == "README.md" and len(parts) > 1:
        return ascii_label(parts[-2])
    return ascii_label(pathlib.PurePosixPath(parts[-1]).stem)


def ascii_label(text, first_letter=True):
    """Letters, digits, '_' and '-' stay; anything else is spelled as uXXXX (Doxygen labels are
    ASCII and, with `first_letter`, start with a letter)."""
    out = "".join(c if (c.isascii() and (c.isalnum() or c in "_-")) else f"u{ord(c):04x}"
                  for c in text)
    return out if out[:1].isalpha() or not first_letter else "p" + out


def heading_text(raw):
    """The text a reader sees in a heading, as the code host computes its anchor from it."""
    text = EXPLICIT_ID.sub("", raw)
    spans = []  # code spans are literal: no emphasis or escapes inside them

    def keep(m):
        spans.append(m.group(2).strip())
        return f"\0{len(spans) - 1}\0"
    text = CODE_SPAN.sub(keep, text)
    text = INLINE_LINK.sub(lambda m: m.group("text"), text)
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML
    text = re.sub(r"(?<![\w\\])[*_]{1,3}(?=\S)(.+?)(?<=\S)[*_]{1,3}(?!\w)", r"\1", text)
    text = re.sub(r"\\(.)", r"\1", text)  # backslash escapes
    text = re.sub(r"\0(\d+)\0", lambda m: spans[int(m.group(1))], text)
    return text.strip()


def slug(text):
    """GitHub's heading anchor: lower case, punctuation dropped, each space a hyphen."""
    keep = []
    for c in text.lower():
        cat = unicodedata.category(c)
        if c in " -" or cat[0] in "LMN" or cat == "Pc":
            keep.append("-" if c == " " else c)
    return "".join(keep)


def section_label(page, anchor):
    """The site's label of the heading whose code-host anchor is `anchor` on page `page`."""
    return page + "-" + ascii_label(anchor, first_letter=False)


def scan(text):
    """Yields (line_number, line, kind) for each line: kind is "fence" for a fence line, "code"
    inside a fenced block, "text" otherwise. HTML comments are left to the caller."""
    fence = None
    for number, line in enumerate(text.split("\n"), 1):
        m = FENCE.match(line)
        if fence is None:
            if m and not (m.group(1)[0] == "`" and "`" in m.group(2)):
                fence = m.group(1)
                yield number, line, "fence"
                continue
            yield number, line, "text"
        else:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) \
                    and not m.group(2).strip():
                fence = None
                yield number, line, "fence"
                continue
            yield number, line, "code"


def visible_lines(lines):
    """Yields (number, line, visible) for the text lines of `lines` (from scan): `visible` is the
    line with inline code spans and HTML comments blanked out (same length, same positions), so
    that what remains is what a reader sees as prose and links."""
    in_comment = False
    for number, line, kind in lines:
        if kind != "text":
            continue
        chars, i = list(line), 0
        while i < len(line):
            if in_comment:
                end = line.find("-->", i)
                stop = len(line) if end < 0 else end + 3
                chars[i:stop] = " " * (stop - i)
                in_comment = end < 0
                i = stop
                continue
            start = line.find("<!--", i)
            if start < 0:
                break
            in_comment, i = True, start
        visible = "".join(chars)
        visible = CODE_SPAN.sub(lambda m: " " * len(m.group(0)), visible)
        yield number, line, visible


def headings(text):
    """[(level, raw heading text, slug)] of the ATX headings outside code, with GitHub's -1, -2
    suffixes on repeated slugs."""
    seen, out = {}, []
    for _, line, visible in visible_lines(scan(text)):
        if not ATX_HEADING.match(visible):
            continue
        m = ATX_HEADING.match(line)
        raw = m.group(2) or ""
        base = slug(heading_text(raw))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.append((len(m.group(1)), raw, base if n == 0 else f"{base}-{n}"))
    return out


def anchors(text):
    """Every fragment a link into this page may name: heading slugs and explicit HTML ids."""
    found = {h[2] for h in headings(text)}
    for _, line, visible in visible_lines(scan(text)):
        found.update(HTML_ID.findall(visible))
    return found


def links(visible):
    """[(kind, dest, start, end)] of the links in one line of visible text: kind is "image",
    "link", "html-img", "html-a" or "definition"; start/end delimit dest in the line."""
    out = []
    for m in INLINE_LINK.finditer(visible):
        dest, start = m.group("dest"), m.start("dest")
        if dest.startswith("<") and dest.endswith(">"):
            dest, start = dest[1:-1], start + 1
        out.append(("image" if m.group("bang") else "link", dest, start, start + len(dest)))
    m = REF_DEFINITION.match(visible)
    if m:
        dest, start = m.group("dest"), m.start("dest")
        if dest.startswith("<") and dest.endswith(">"):
            dest, start = dest[1:-1], start + 1
        out.append(("definition", dest, start, start + len(dest)))
    for m in HTML_SRC.finditer(visible):
        out.append(("html-" + m.group("tag").lower(), m.group("dest"), m.start("dest"),
                    m.end("dest")))
    return out


def is_external(dest):
    return bool(SCHEME.match(dest))


def split_dest(dest):
    """(path, fragment) of a link destination; either may be empty."""
    path, _, fragment = dest.partition("#")
    return urllib.parse.unquote(path), fragment


def word_count(text):
    """Words a reader reads: outside code blocks, HTML comments and the table of contents."""
    block = toc_block(text)
    skip = range(block[0], (block[1] if block[1] is not None else block[0]) + 1) if block else ()
    prose = "\n".join(line for number, line, kind in scan(text)
                      if kind == "text" and number - 1 not in skip)
    return len(re.sub(r"<!--.*?-->", " ", prose, flags=re.S).split())


def toc_block(text):
    """(first, last) 0-based line indexes of the table of contents block (its two marker lines),
    or None when the page has no `<!-- toc -->` line. `last` is None when the closing line is
    missing."""
    lines = text.split("\n")
    kinds = [kind for _, _, kind in scan(text)]
    for i, line in enumerate(lines):
        if kinds[i] == "text" and line.strip() == TOC_BEGIN:
            for j in range(i + 1, len(lines)):
                if kinds[j] == "text" and lines[j].strip() == TOC_END:
                    return i, j
                if kinds[j] != "text" or ATX_HEADING.match(lines[j]):
                    break
            return i, None
    return None


def toc_lines(text):
    """The Markdown list of the page's level 2 and 3 headings, each a link to its anchor."""
    out = []
    for level, raw, anchor in headings(text):
        if level not in TOC_LEVELS:
            continue
        label = INLINE_LINK.sub(lambda m: m.group("text"), EXPLICIT_ID.sub("", raw)).strip()
        label = label.replace("[", "\\[").replace("]", "\\]")
        out.append("  " * (level - TOC_LEVELS[0]) + f"- [{label}](#{anchor})")
    return out


def tracked_pages(root=ROOT):
    """The *.md files git tracks under `root` (relative paths), or every *.md outside build and
    hidden folders when `root` is not a checkout."""
    try:
        result = subprocess.run(["git", "ls-files", "-z", "*.md"], cwd=root, check=True,
                                capture_output=True)
        return sorted(p for p in result.stdout.decode().split("\0") if p and (root / p).exists())
    except (OSError, subprocess.CalledProcessError):
        return sorted(p.relative_to(root).as_posix() for p in root.rglob("*.md")
                      if not any(part.startswith(("build", ".")) for part in
                                 p.relative_to(root).parts))


def lesson_pages(root=ROOT):
    """The pages that show figures (absolute paths): every chapter folder's *.md, the root
    README.md, docs/results/README.md and docs/pages/*.md."""
    found = sorted((root / "chapters").glob("[0-9][0-9]_*/*.md"))
    found += [root / "README.md", root / "docs" / "results" / "README.md"]
    found += sorted((root / "docs" / "pages").glob("*.md"))
    return [p for p in found if p.exists()]


def tool_parser(doc):
    """The command line of a page tool: the first paragraph of its docstring @p doc describes it,
    the rest is printed after the options as written."""
    return argparse.ArgumentParser(
        description=doc.split("\n\n")[0], epilog=doc.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter)
