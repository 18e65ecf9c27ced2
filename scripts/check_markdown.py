#!/usr/bin/env python3
"""Checks that every tracked Markdown page reads right on a code host and in the Doxygen site.

For each tracked *.md file (or the files named), outside code blocks, code spans and comments:
  - every relative link and image resolves from the file's own folder to a file git tracks;
  - a link to a heading (`page.md#heading`, `#heading`) names a heading of that page
    (the code host's anchor: lower case, punctuation dropped, spaces as hyphens);
  - an image lies in docs/plots or docs/diagrams (the site's IMAGE_PATH), and no two images there
    share a file name; a relative link that is not to a page or an image points at a file the site
    carries too (docs/results/*.csv|txt, or a source file under chapters/ or common/);
  - no raw Doxygen syntax shows: `{#label}`, `[TOC]`, `@ref`, `\\dotfile`, `@snippet`, ...
    (the Doxygen filter docs/tools/doxygen_filter.py adds what the site needs);
  - a link is on one line (the tools read line by line), relative links are inline
    [text](path) rather than HTML tags or reference definitions, and code fences are closed;
  - a comment (a marker) opens and closes on one line, and no line starts with a figure marker
    (`<!--=name-->` follows its value; a line that starts with a comment ends the paragraph on a
    code host);
  - a `<!-- toc -->` line is closed by a `<!-- /toc -->` line (scripts/toc.py writes the list);
  - bold text does not start with a code span (the site would show the asterisks);
  - a chapter page (chapters/NN_topic/README.md) is a main path of at most MAX_CHAPTER_WORDS words
    outside code blocks and comments; the rest belongs on deeper pages beside it.
Exit status: 0 clean, 1 problems (each printed as FILE:LINE: message), 2 usage.

Usage: scripts/check_markdown.py [FILE.md ...]
"""
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "docs" / "tools"))
import mdpages  # noqa: E402

# Doxygen commands that would show as text on a code host (a common subset; '@' or '\').
DOXYGEN_COMMANDS = (
    "ref", "subpage", "page", "mainpage", "section", "subsection", "subsubsection", "anchor",
    "dotfile", "dot", "enddot", "image", "snippet", "snippetdoc", "include", "includelineno",
    "dontinclude", "skip", "skipline", "until", "line", "code", "endcode", "verbatim",
    "endverbatim", "copydoc", "brief", "details", "tableofcontents", "cite", "htmlonly",
    "endhtmlonly", "f$", "f[", "f]", "f{", "f}", "param", "tparam", "return", "returns", "note",
    "warning", "see", "sa", "par", "todo", "defgroup", "ingroup", "addtogroup", "file",
    "example", "link", "endlink", "copybrief", "copydetails", "emoji", "mscfile", "diafile")
RAW_COMMAND = re.compile(
    r"(?<![\w`\\/.@])[@\\](?P<cmd>" + "|".join(re.escape(c) for c in DOXYGEN_COMMANDS) +
    r")(?![\w])")
RAW_ID = re.compile(r"\{#[A-Za-z_][\w-]*\}")
RAW_TOC = re.compile(r"\[TOC\]")
MAX_CHAPTER_WORDS = 5000
CHAPTER_PAGE = re.compile(r"chapters/\d\d_[^/]+/README\.md\Z")


def tracked_files():
    """The files git tracks (staged ones included), or every file when this is not a checkout."""
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, check=True, capture_output=True)
        return {p for p in out.stdout.decode().split("\0") if p}
    except (OSError, subprocess.CalledProcessError):
        return {p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*")
                if p.is_file() and not any(part.startswith(("build", ".git"))
                                           for part in p.relative_to(ROOT).parts)}


class Checker:
    def __init__(self, tracked):
        self.tracked = tracked
        self.dirs = {str(pathlib.PurePosixPath(p).parent) for p in tracked}
        for d in list(self.dirs):
            parts = pathlib.PurePosixPath(d).parts
            self.dirs.update("/".join(parts[:i]) for i in range(1, len(parts)))
        self.problems = []
        self.anchor_cache = {}

    def problem(self, rel, line, message):
        self.problems.append(f"{rel}:{line}: {message}")

    def anchors_of(self, rel):
        if rel not in self.anchor_cache:
            text = (ROOT / rel).read_text(encoding="utf-8")
            self.anchor_cache[rel] = mdpages.anchors(text)
        return self.anchor_cache[rel]

    def resolve(self, rel, path):
        """The repository-relative path `path` names from page `rel`, or None outside the
        repository."""
        target = (ROOT / rel).parent / path
        try:
            return pathlib.Path(*(target.resolve().relative_to(ROOT.resolve()).parts)).as_posix()
        except ValueError:
            return None

    def check_link(self, rel, number, kind, dest):
        if not dest:
            self.problem(rel, number, f"empty {kind} target")
            return
        if mdpages.is_external(dest) or dest.startswith("mailto:"):
            return
        if kind in ("html-img", "html-a"):
            self.problem(rel, number, f"relative HTML {kind[5:]} tag to '{dest}': use a Markdown "
                         "link [text](path) or image ![alt](path), which the site translates")
            return
        if kind == "definition":
            self.problem(rel, number, f"reference definition to '{dest}': use an inline link "
                         "[text](path), which the site translates")
            return
        path, fragment = mdpages.split_dest(dest)
        target = rel if not path else self.resolve(rel, path)
        if target is None:
            self.problem(rel, number, f"'{dest}' points outside the repository")
            return
        if target not in self.tracked:
            if target in self.dirs or target == ".":
                if kind == "image":
                    self.problem(rel, number, f"image '{dest}' is a folder")
                elif fragment:
                    self.problem(rel, number, f"'{dest}': a folder has no headings")
                else:
                    self.problem(rel, number, f"link to the folder '{dest}': the site has no "
                                 "page for it; link a page or a file")
                return
            exists = (ROOT / target).exists()
            where = pathlib.PurePosixPath(rel).parent.as_posix()
            self.problem(rel, number, f"{kind} '{dest}' does not resolve from {where}/ "
                         + (f"({target} exists but git does not track it)" if exists else
                            f"(no file {target})"))
            return
        suffix = pathlib.PurePosixPath(target).suffix.lower()
        folder = pathlib.PurePosixPath(target).parent.as_posix()
        if kind == "image":
            if suffix not in mdpages.IMAGE_SUFFIXES:
                self.problem(rel, number, f"image '{dest}' is not an image file")
            elif folder not in mdpages.IMAGE_DIRS:
                self.problem(rel, number, f"image '{dest}' must live in "
                             f"{' or '.join(mdpages.IMAGE_DIRS)} for the site to show it")
            return
        if suffix == ".md":
            if fragment and fragment not in self.anchors_of(target):
                self.problem(rel, number, f"'{dest}': {target} has no heading with the anchor "
                             f"'#{fragment}'")
            return
        if fragment and not path:
            return
        if folder in mdpages.EXTRA_FILE_DIRS and suffix in mdpages.EXTRA_FILE_SUFFIXES:
            return
        if target.split("/")[0] in mdpages.SOURCE_DIRS and suffix in mdpages.SOURCE_SUFFIXES:
            return
        if suffix in mdpages.IMAGE_SUFFIXES and folder in mdpages.IMAGE_DIRS:
            return
        self.problem(rel, number, f"link to '{dest}': the site does not carry {target} (it "
                     "carries pages, images in docs/plots|diagrams, docs/results/*.csv|txt and "
                     "sources under chapters/ and common/); name it as `code` instead")

    def check_page(self, rel):
        text = (ROOT / rel).read_text(encoding="utf-8")
        fences = [number for number, _, kind in mdpages.scan(text) if kind == "fence"]
        if len(fences) % 2:  # fence lines alternate: open, close, open, ...
            self.problem(rel, fences[-1], "this code fence is never closed")
        for number, line, visible in mdpages.visible_lines(mdpages.scan(text)):
            found = mdpages.links(visible)
            for kind, dest, _, _ in found:
                self.check_link(rel, number, kind, dest)
            inline = [m.span() for m in mdpages.INLINE_LINK.finditer(visible)]
            for m in re.finditer(r"\]\(", visible):
                if not any(start <= m.start() < end for start, end in inline):
                    self.problem(rel, number, "a link split across lines (or malformed): keep "
                                 "[text](target) on one line")
            if mdpages.ATX_HEADING.match(visible) and mdpages.EXPLICIT_ID.search(visible):
                self.problem(rel, number, "heading with a Doxygen label {#...}: the site gives "
                             "every heading a label itself; link to #<anchor> instead")
            elif RAW_ID.search(visible):
                self.problem(rel, number, "raw Doxygen label {#...} in the text")
            if RAW_TOC.search(visible):
                self.problem(rel, number, "[TOC] shows as text on a code host: write a line "
                             "<!-- toc --> and run scripts/toc.py (the site shows its own table)")
            for m in RAW_COMMAND.finditer(visible):
                self.problem(rel, number, f"raw Doxygen command '{m.group(0)}' shows as text on "
                             "a code host: use a Markdown link or image instead")
            self.check_markers(rel, number, line)
            if re.search(r"(?:^|[^*\w])\*\*`", line) and "`**`" not in line:
                self.problem(rel, number, "bold text that starts with a code span (**`x` ...**) "
                             "shows its asterisks in the site (Doxygen 1.9.4): put a word first")
        self.check_page_shape(rel, text)

    def check_markers(self, rel, number, line):
        """Markers (HTML comments) on one line; no line starts with a figure marker."""
        start = 0
        while True:
            opening = line.find("<!--", start)
            if opening < 0:
                break
            closing = line.find("-->", opening + 4)
            if closing < 0:
                self.problem(rel, number, "a comment (marker) that does not close on its line: "
                             "keep each marker on one line")
                break
            start = closing + 3
        if line.lstrip().startswith("<!--="):
            self.problem(rel, number, "a line that starts with a figure marker: write the value "
                         "before its marker (4.52<!--=name-->); a line that starts with a comment "
                         "ends the paragraph on a code host")

    def check_page_shape(self, rel, text):
        """The table of contents block is closed; a chapter page stays a main path."""
        block = mdpages.toc_block(text)
        if block is not None and block[1] is None:
            self.problem(rel, block[0] + 1, "'<!-- toc -->' without its list and '<!-- /toc -->' "
                         "(run scripts/toc.py)")
        if CHAPTER_PAGE.match(rel):
            words = mdpages.word_count(text)
            if words > MAX_CHAPTER_WORDS:
                self.problem(rel, 1, f"{words} words outside code: a chapter page is a main path "
                             f"of at most {MAX_CHAPTER_WORDS}; move design notes, cost models and "
                             "profiles to a deeper page in the chapter folder")


def main():
    parser = mdpages.tool_parser(__doc__)
    parser.add_argument("files", nargs="*", help="pages to check (default: every tracked *.md)")
    args = parser.parse_args()
    tracked = tracked_files()
    if args.files:
        pages = []
        for f in args.files:
            p = pathlib.Path(f).resolve()
            try:
                pages.append(p.relative_to(ROOT.resolve()).as_posix())
            except ValueError:
                print(f"check_markdown: {f} is not inside {ROOT}", file=sys.stderr)
                return 2
    else:
        pages = sorted(p for p in tracked if p.endswith(".md") and (ROOT / p).exists())
    checker = Checker(tracked)
    names = {}
    for p in sorted(tracked):
        folder = pathlib.PurePosixPath(p).parent.as_posix()
        if folder in mdpages.IMAGE_DIRS and pathlib.PurePosixPath(p).suffix in mdpages.IMAGE_SUFFIXES:
            name = pathlib.PurePosixPath(p).name
            if name in names:
                checker.problem(p, 1, f"same file name as {names[name]}: the site keeps one image "
                                "per name")
            names[name] = p
    for page in pages:
        checker.check_page(page)
    for line in checker.problems:
        print(line)
    if checker.problems:
        print(f"check_markdown: {len(checker.problems)} problem(s) in {len(pages)} page(s)",
              file=sys.stderr)
        return 1
    print(f"check_markdown: {len(pages)} pages, every relative link and image resolves, "
          "no raw Doxygen syntax")
    return 0


if __name__ == "__main__":
    sys.exit(main())
