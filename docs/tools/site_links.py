#!/usr/bin/env python3
"""Puts the links of the generated site right, then checks every link of it.

Doxygen links a name in a page's code block to the first documented symbol of that name it finds,
whatever its namespace: on chapter 04's page `kThreads` would lead to chapter 03's `naive`
namespace, `tile` to a variable of another chapter's file. So, after Doxygen (run by
build_site.cmake):

1. On a chapter's pages (`chNN.html`, `chNN_<deeper page>.html`), each link in a code block
   whose target belongs to another chapter (its namespace `chMM::...`, or a file under
   `chapters/MM_...`) is sent to the symbol of the same name in the page's own chapter (a class,
   or a member of a namespace or file), where that chapter has exactly one; else the name stays
   as plain code. Links to the shared code
   (`common/`, namespace `staged`) stay.
2. Every link of every HTML file must resolve: a relative target must exist and so must its
   `#anchor` (an element with that id or name); only http, https and mailto links leave the
   site. A dead link is an error (exit 1), named with the file that holds it.

Usage: site_links.py --html build-docs/html --tag build-docs/staged.tag
Exit: 0 fixed and every link resolves, 1 a dead link, 2 bad usage.
"""
import argparse
import collections
import html
import pathlib
import re
import sys
import xml.etree.ElementTree as ET

CHAPTER_PAGE = re.compile(r"^ch(\d\d)(_.*)?\.html$")
CODE_LINK = re.compile(r'<a class="code( [^"]*)?" href="([^"#]+)(#[^"]*)?">([^<]*)</a>')
FRAGMENT = re.compile(r'(<div class="fragment">)(.*?)(</div><!-- fragment -->)', re.S)
CHAPTER_NAMESPACE = re.compile(r"^ch(\d\d)(::|$)")
CHAPTER_PATH = re.compile(r"(?:^|/)chapters/(\d\d)_")
HREF = re.compile(r'\b(?:href|src)="([^"]*)"')
ANCHOR = re.compile(r'\b(?:id|name)="([^"]+)"')
EXTERNAL = ("http://", "https://", "mailto:")


class Symbols:
    """What the tag file says: the chapter each page of the site belongs to ("" for shared
    code), and each chapter's symbols by their short name."""

    def __init__(self, tag_file):
        self.owner = {}                                  # "namespacech03_1_1naive.html" -> "03"
        self.by_name = collections.defaultdict(set)      # ("04", "kThreads") -> {"page#anchor"}
        root = ET.parse(tag_file).getroot()
        for compound in root.findall("compound"):
            chapter = self.chapter_of(compound)
            page = compound.findtext("filename") or ""
            if page and not page.endswith(".html"):
                page += ".html"
            if page:
                self.owner[page] = chapter
            name = compound.findtext("name") or ""
            if chapter and compound.get("kind") in ("class", "struct"):
                self.by_name[(chapter, name.split("::")[-1])].add(page)
            if compound.get("kind") not in ("namespace", "file"):
                continue  # a class's members are reached through an object, not by name alone
            for member in compound.findall("member"):
                anchor_file = member.findtext("anchorfile") or ""
                if chapter and anchor_file:
                    target = f"{anchor_file}#{member.findtext('anchor')}"
                    self.by_name[(chapter, member.findtext("name"))].add(target)

    @staticmethod
    def chapter_of(compound):
        """"NN" for a compound of chapter NN (its namespace or its file), "" otherwise."""
        name = compound.findtext("name") or ""
        m = CHAPTER_NAMESPACE.match(name)
        if m:
            return m.group(1)
        m = CHAPTER_PATH.search(compound.findtext("path") or "")
        if compound.get("kind") == "file" and m:
            return m.group(1)
        return ""

    def chapter_of_page(self, page):
        """The chapter a symbol's page belongs to ("" for shared code), from the tag file or,
        for a page the tag file does not list, from its name."""
        if page in self.owner:
            return self.owner[page]
        m = re.search(r"ch(\d\d)", page)
        return m.group(1) if m else ""


def fix_page(text, chapter, symbols):
    """@p text (a chapter-@p chapter page) with its code links to other chapters sent to this
    chapter's symbol of the same name, or unlinked. Returns (text, retargeted, unlinked)."""
    counts = collections.Counter()

    def link(m):
        classes, page, anchor, label = m.group(1) or "", m.group(2), m.group(3) or "", m.group(4)
        owner = symbols.chapter_of_page(page)
        if not owner or owner == chapter:
            return m.group(0)
        short = html.unescape(label).split("::")[-1]
        here = symbols.by_name.get((chapter, short), set())
        if len(here) == 1:
            counts["retargeted"] += 1
            return f'<a class="code{classes}" href="{html.escape(next(iter(here)))}">{label}</a>'
        counts["unlinked"] += 1
        return label

    def fragment(m):
        return m.group(1) + CODE_LINK.sub(link, m.group(2)) + m.group(3)

    return FRAGMENT.sub(fragment, text), counts["retargeted"], counts["unlinked"]


def dead_links(html_dir):
    """["file: href"] for every link in @p html_dir that does not resolve."""
    anchors = {}

    def anchors_of(path):
        if path not in anchors:
            anchors[path] = set(ANCHOR.findall(path.read_text(errors="replace")))
        return anchors[path]

    dead = []
    for page in sorted(html_dir.glob("*.html")):
        text = page.read_text(errors="replace")
        for href in sorted(set(HREF.findall(text))):
            href = html.unescape(href)
            if not href or href.startswith(EXTERNAL) or href.startswith("javascript:"):
                continue
            if re.match(r"^[a-z][a-z0-9+.-]*:", href):   # file:, ftp:, ... lead nowhere
                dead.append(f"{page.name}: {href}")
                continue
            target, _, anchor = href.partition("#")
            path = (page.parent / target) if target else page
            if not path.is_file():
                dead.append(f"{page.name}: {href}")
            elif anchor and path.suffix == ".html" and anchor not in anchors_of(path):
                dead.append(f"{page.name}: {href} (no such anchor)")
    return dead


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--html", required=True, type=pathlib.Path, help="the site's html folder")
    ap.add_argument("--tag", required=True, type=pathlib.Path, help="Doxygen's tag file")
    args = ap.parse_args()
    if not args.html.is_dir() or not args.tag.is_file():
        ap.error(f"needs the folder {args.html} and the tag file {args.tag}")
    symbols = Symbols(args.tag)
    retargeted = unlinked = 0
    for page in sorted(args.html.glob("ch*.html")):
        m = CHAPTER_PAGE.match(page.name)
        if not m:
            continue
        text, r, u = fix_page(page.read_text(), m.group(1), symbols)
        if r or u:
            page.write_text(text)
        retargeted += r
        unlinked += u
    print(f"site_links: {retargeted} code links sent to their own chapter's symbol, "
          f"{unlinked} to another chapter's unlinked")
    dead = dead_links(args.html)
    for line in dead:
        print(f"site_links: dead link in {line}", file=sys.stderr)
    if dead:
        print(f"site_links: {len(dead)} dead links", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
