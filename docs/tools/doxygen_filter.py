#!/usr/bin/env python3
"""Doxygen input filter for the Markdown pages (FILTER_PATTERNS = *.md=<this file>).

The pages are plain GitHub-flavoured Markdown, so that they read right on a code host. Doxygen
needs a few things said its own way; this filter says them, line for line (line numbers in
Doxygen's warnings stay those of the page):

- the first heading gets the page's label (`# Chapter 01 ... {#ch01}`), every other heading the
  label `<page>-<slug>`, where <slug> is the code host's anchor of that heading;
- a link to another page (`../pages/measuring.md`, `measuring.md#ratios`) or to a heading of this
  page (`#ratios`) becomes `@ref` to that page or heading; on a chapter page, a link to a deeper
  page of the same chapter folder (`design_notes.md`) becomes `@subpage`, so that the site's
  navigation lists the deeper page under the chapter;
- an image under docs/plots or docs/diagrams is named by its file name (IMAGE_PATH finds it);
- a link to a file under docs/results (.csv, .txt) is named by its file name (HTML_EXTRA_FILES
  copies it next to the pages); a link to a source file under chapters/ or common/ becomes `@ref`
  to that file's page;
- the table of contents (`<!-- toc -->`, the generated list, `<!-- /toc -->`) becomes `[TOC]`
  and blank lines;
- the comment that names a figure (`4.52<!--=read_tbs-->`) is dropped, so the number keeps the
  space after it (Doxygen 1.9.4 swallows the space after a comment);
- code spans in headings and in the text of links that become `@ref` lose their backticks
  (Doxygen 1.9.4 would print them, or `<tt>`, literally); in a heading their `_` and `*` are
  escaped.
Anything else passes unchanged. The rules are in mdpages.py, shared with check_markdown.py.

Usage: doxygen_filter.py PAGE.md   (writes the translated page to stdout)
"""
import pathlib
import re
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import mdpages  # noqa: E402

FIGURE_MARKER = re.compile(r"<!--=[^>]*-->")


def relative_to_root(path):
    try:
        return path.resolve().relative_to(mdpages.ROOT).as_posix()
    except ValueError:
        return None


def translate_dest(kind, dest, page_dir, page):
    """The destination Doxygen should see for a link of `kind` to `dest` on a page in `page_dir`
    (absolute) whose label is `page`; None keeps it unchanged."""
    if not dest or mdpages.is_external(dest) or dest.startswith("@ref ") or \
            dest.startswith("\\ref "):
        return None
    path, fragment = mdpages.split_dest(dest)
    if not path:  # a heading of this page
        return f"@ref {mdpages.section_label(page, fragment)}" if fragment else None
    target = relative_to_root(page_dir / path)
    if target is None:
        return None
    suffix = pathlib.PurePosixPath(target).suffix.lower()
    folder = pathlib.PurePosixPath(target).parent.as_posix()
    if suffix == ".md":
        label = mdpages.page_label(target)
        return f"@ref {mdpages.section_label(label, fragment) if fragment else label}"
    if kind in ("image", "html-img") or suffix in mdpages.IMAGE_SUFFIXES:
        if folder in mdpages.IMAGE_DIRS:
            return pathlib.PurePosixPath(target).name
        return None
    if folder in mdpages.EXTRA_FILE_DIRS and suffix in mdpages.EXTRA_FILE_SUFFIXES:
        return pathlib.PurePosixPath(target).name
    if target.split("/")[0] in mdpages.SOURCE_DIRS and suffix in mdpages.SOURCE_SUFFIXES \
            and kind in ("link", "definition"):
        return f"@ref {target}"
    return None


def deeper_page(kind, dest, rel, page_dir):
    """The label of the deeper page that a link on a chapter page names, when the link should
    make it a subpage (a page of the same chapter folder, no heading named); else None."""
    parts = pathlib.PurePosixPath(rel).parts
    if kind != "link" or len(parts) != 3 or parts[0] != "chapters" or parts[2] != "README.md":
        return None
    if mdpages.is_external(dest):
        return None
    path, fragment = mdpages.split_dest(dest)
    if fragment or not path.endswith(".md"):
        return None
    target = relative_to_root(page_dir / path)
    if target is None or pathlib.PurePosixPath(target).parent != pathlib.PurePosixPath(rel).parent:
        return None
    return mdpages.page_label(target)


def strip_code_spans(text, escape=False):
    """`text` with each inline code span replaced by its content; with `escape`, its `_` and `*`
    escaped (in a heading, `__launch_bounds__` would otherwise turn bold once it is no longer
    code; Doxygen refuses escapes in the text of an @ref)."""
    if not escape:
        return mdpages.CODE_SPAN.sub(lambda m: m.group(2).strip(), text)
    return mdpages.CODE_SPAN.sub(
        lambda m: re.sub(r"([_*])", r"\\\1", m.group(2).strip()), text)


def translate(text, rel):
    """The page `text` (at `rel` relative to the root) as Doxygen should read it."""
    page = mdpages.page_label(rel)
    page_dir = (mdpages.ROOT / rel).parent
    lines = text.split("\n")
    slugs = iter(mdpages.headings(text))
    first_heading = True
    toc = mdpages.toc_block(text)
    toc_lines = set()
    if toc is not None:
        toc_lines = set(range(toc[0] + 1, (toc[1] if toc[1] is not None else toc[0]) + 2))
    for number, line, visible in mdpages.visible_lines(mdpages.scan(text)):
        out = line
        if number in toc_lines:
            lines[number - 1] = "[TOC]" if number == toc[0] + 1 else ""
            continue
        edits = []
        for kind, dest, start, end in mdpages.links(visible):
            new = translate_dest(kind, dest, page_dir, page)
            subpage = deeper_page(kind, dest, rel, page_dir)
            if subpage:
                # `@subpage label "text"` in place of the whole link [text](dest)
                for m in mdpages.INLINE_LINK.finditer(visible):
                    if m.start("dest") <= start < m.end("dest") + 1:
                        label = strip_code_spans(line[m.start("text"):m.end("text")])
                        label = label.replace('"', "'")
                        edits.append((m.start(), m.end(), f'@subpage {subpage} "{label}"'))
                continue
            if new is not None:
                # An HTML tag takes no @ref: only Markdown links are rewritten to one.
                if new.startswith("@ref ") and kind.startswith("html-"):
                    continue
                edits.append((start, end, new))
                if new.startswith("@ref ") and kind == "link":
                    # Doxygen 1.9.4 shows the text of an @ref link verbatim: no code spans.
                    for m in mdpages.INLINE_LINK.finditer(visible):
                        if m.start("dest") <= start < m.end("dest") + 1:
                            a, b = m.span("text")
                            edits.append((a, b, strip_code_spans(line[a:b])))
        for start, end, new in sorted(edits, reverse=True):
            out = out[:start] + new + out[end:]
        spans = [m.span() for m in mdpages.CODE_SPAN.finditer(out)]
        out = FIGURE_MARKER.sub(  # a marker shown in a code span is an example: it stays
            lambda m: m.group(0) if any(a <= m.start() < b for a, b in spans) else "", out)
        if mdpages.ATX_HEADING.match(visible):
            level, raw, anchor = next(slugs)
            # Doxygen 1.9.4 prints a code span in a heading as "<tt>...</tt>": plain text instead.
            out = strip_code_spans(out, escape=True)
            if not mdpages.EXPLICIT_ID.search(raw):
                if first_heading and level == 1:
                    label = None if page == "index" else page
                else:
                    label = mdpages.section_label(page, anchor)
                if label:
                    out = out.rstrip() + f" {{#{label}}}"
            first_heading = False
        lines[number - 1] = out
    return "\n".join(lines)


def main():
    if len(sys.argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    path = pathlib.Path(sys.argv[1])
    text = path.read_text(encoding="utf-8")
    rel = relative_to_root(path)
    if rel is None:  # not one of ours: pass it through
        sys.stdout.write(text)
        return 0
    try:
        sys.stdout.write(translate(text, rel))
    except Exception as error:  # a page Doxygen cannot read right must fail the build, loudly
        sys.stdout.write(text + f"\n\n@staged_doxygen_filter_failed {type(error).__name__}\n")
        sys.stderr.write(f"{path}: doxygen_filter.py: {error!r}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
