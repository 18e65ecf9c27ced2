#!/usr/bin/env python3
"""Tests of the docs tools on fixtures in temporary repositories: scripts/snippets.py,
scripts/check_markdown.py, docs/tools/doxygen_filter.py and mdpages.py.

Run: python3 docs/tools/test_docs_tools.py   (needs git; nothing else)
"""
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest

REPO = pathlib.Path(__file__).resolve().parents[2]
TOOLS = ["scripts/snippets.py", "scripts/check_markdown.py", "docs/tools/mdpages.py",
         "docs/tools/doxygen_filter.py"]
sys.path.insert(0, str(REPO / "docs" / "tools"))
import mdpages  # noqa: E402


class Fixture:
    """A throw-away git repository with copies of the tools and the given files."""

    def __init__(self, files):
        self.dir = tempfile.TemporaryDirectory()
        self.root = pathlib.Path(self.dir.name)
        for rel in TOOLS:
            (self.root / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(REPO / rel, self.root / rel)
        self.write(files)
        self.git("init", "-q")
        self.git("add", "-A")

    def write(self, files):
        for rel, text in files.items():
            (self.root / rel).parent.mkdir(parents=True, exist_ok=True)
            (self.root / rel).write_text(textwrap.dedent(text), encoding="utf-8")

    def read(self, rel):
        return (self.root / rel).read_text(encoding="utf-8")

    def git(self, *args):
        subprocess.run(["git", *args], cwd=self.root, check=True, capture_output=True)

    def run(self, script, *args):
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
        result = subprocess.run([sys.executable, str(self.root / script), *args], cwd=self.root,
                                capture_output=True, text=True, env=env)
        return result.returncode, result.stdout + result.stderr

    def close(self):
        self.dir.cleanup()


KERNEL = """\
    /// @file
    __global__ void ScaleKernel(float* x, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      // snippet-begin: scale-body
      if (i < n) {
        // snippet-begin: scale-store
        x[i] *= 2.0f;
        // snippet-end: scale-store
      }
      // snippet-end: scale-body
    }
    """
PAGE = """\
    # Scaling

    The body:

    <!-- snippet src/scale.cu scale-body -->
    <!-- /snippet -->

    And in a code block, an example that is not a marker:

    ```md
    <!-- snippet src/missing.cu nothing -->
    ```
    """


class SnippetsTest(unittest.TestCase):
    def setUp(self):
        self.fx = Fixture({"src/scale.cu": KERNEL, "docs/page.md": PAGE})

    def tearDown(self):
        self.fx.close()

    def test_fills_the_block_dedented_without_inner_markers(self):
        rc, out = self.fx.run("scripts/snippets.py")
        self.assertEqual(rc, 0, out)
        self.assertIn("<!-- snippet src/scale.cu scale-body -->\n```cuda\nif (i < n) {\n"
                      "  x[i] *= 2.0f;\n}\n```\n<!-- /snippet -->", self.fx.read("docs/page.md"))
        rc, out = self.fx.run("scripts/snippets.py", "--check")
        self.assertEqual(rc, 0, out)

    def test_check_fails_on_an_empty_or_stale_block_and_names_page_and_region(self):
        rc, out = self.fx.run("scripts/snippets.py", "--check")
        self.assertEqual(rc, 1)
        self.assertIn("docs/page.md:5: snippet src/scale.cu scale-body: the block differs", out)
        self.assertEqual(self.fx.read("docs/page.md"), textwrap.dedent(PAGE), "--check wrote")
        self.fx.run("scripts/snippets.py")
        self.fx.write({"src/scale.cu": KERNEL.replace("2.0f", "3.0f")})
        rc, out = self.fx.run("scripts/snippets.py", "--check")
        self.assertEqual(rc, 1)
        self.assertIn("scale-body: the block differs from its source region", out)
        self.assertEqual(self.fx.run("scripts/snippets.py")[0], 0)
        self.assertIn("x[i] *= 3.0f;", self.fx.read("docs/page.md"))

    def test_check_fails_on_a_missing_region_or_file(self):
        self.fx.write({"docs/page.md": PAGE.replace("scale-body", "scale-loop")})
        rc, out = self.fx.run("scripts/snippets.py", "--check")
        self.assertEqual(rc, 1)
        self.assertIn("docs/page.md:5: snippet src/scale.cu scale-loop: 'src/scale.cu' has no "
                      "region 'scale-loop' (its regions: scale-body, scale-store)", out)
        self.fx.write({"docs/page.md": PAGE.replace("src/scale.cu", "src/gone.cu")})
        rc, out = self.fx.run("scripts/snippets.py")  # rewriting fails the same way
        self.assertEqual(rc, 1)
        self.assertIn("no source file 'src/gone.cu'", out)

    def test_broken_markers_fail(self):
        self.fx.write({"docs/page.md": PAGE.replace("<!-- /snippet -->\n", "")})
        rc, out = self.fx.run("scripts/snippets.py", "--check")
        self.assertEqual(rc, 1)
        self.assertIn("no '<!-- /snippet -->'", out)
        self.fx.write({"docs/page.md": PAGE,
                       "src/scale.cu": KERNEL.replace("// snippet-end: scale-store\n", "")})
        rc, out = self.fx.run("scripts/snippets.py", "--check")
        self.assertEqual(rc, 1)
        self.assertIn("region 'scale-store' is never ended", out)
        self.fx.write({"src/scale.cu": KERNEL + "// snippet-begin: scale-body\n"
                                                "// snippet-end: scale-body\n"})
        rc, out = self.fx.run("scripts/snippets.py", "--check")
        self.assertEqual(rc, 1)
        self.assertIn("region 'scale-body' begins twice", out)

    def test_language_and_a_fence_longer_than_the_code(self):
        self.fx.write({"src/doc.hpp": """\
            // snippet-begin: doc
            /// ```
            /// Example
            /// ```
            int Answer();
            // snippet-end: doc
            """, "docs/page.md": "<!-- snippet src/doc.hpp doc -->\n<!-- /snippet -->\n"})
        self.assertEqual(self.fx.run("scripts/snippets.py")[0], 0)
        self.assertIn("````cpp\n/// ```\n", self.fx.read("docs/page.md"))
        self.assertEqual(self.fx.run("scripts/snippets.py", "--check")[0], 0)


class CheckMarkdownTest(unittest.TestCase):
    FILES = {
        "README.md": """\
            # Project

            See [the chapter](chapters/01_a/README.md), [its code](chapters/01_a/k.cu) and
            [a section](chapters/01_a/README.md#why-__ldg-helps--or-not).
            ![A plot](docs/plots/p.svg)
            """,
        "chapters/01_a/README.md": """\
            # Chapter 01 — A thing

            ## Why `__ldg` helps — or not

            ## Repeated

            ## Repeated

            Back [up](../../README.md#project), [down](#repeated-1), the
            [data](../../docs/results/01_a.csv), ![diagram](../../docs/diagrams/d.svg).
            In code: `@ref x` and `{#y}` and `[TOC]`. <!-- [TOC] @ref z [x](nowhere.md) -->

            ```sh
            echo "@ref is fine in code" [x](nowhere.md)
            ```
            """,
        "chapters/01_a/k.cu": "// k\n",
        "docs/plots/p.svg": "<svg/>\n",
        "docs/diagrams/d.svg": "<svg/>\n",
        "docs/results/01_a.csv": "a\n",
    }

    def setUp(self):
        self.fx = Fixture(self.FILES)

    def tearDown(self):
        self.fx.close()

    def test_a_clean_tree_passes(self):
        rc, out = self.fx.run("scripts/check_markdown.py")
        self.assertEqual(rc, 0, out)

    def expect(self, page_text, *messages, page="chapters/01_a/README.md"):
        self.fx.write({page: page_text})
        rc, out = self.fx.run("scripts/check_markdown.py")
        self.assertEqual(rc, 1, out)
        for message in messages:
            self.assertIn(message, out)

    def test_broken_links_and_images_fail(self):
        self.expect("# T\n\n![plot](p.svg)\n",
                    "chapters/01_a/README.md:3: image 'p.svg' does not resolve from "
                    "chapters/01_a/ (no file chapters/01_a/p.svg)")
        self.expect("# T\n\n[x](../02_b/README.md)\n", "link '../02_b/README.md' does not resolve")
        self.expect("# T\n\n![x](k.cu)\n", "is not an image file")
        self.expect("# T\n\n[x](../../scripts/run.sh)\n", "does not resolve")

    def test_untracked_and_unreachable_targets_fail(self):
        self.fx.write({"docs/plots/new.svg": "<svg/>\n", "tests/t.cu": "//\n"})
        self.fx.git("add", "tests/t.cu")
        self.expect("# T\n\n![x](../../docs/plots/new.svg)\n", "exists but git does not track it")
        self.expect("# T\n\n[x](../../tests/t.cu)\n", "the site does not carry tests/t.cu")
        self.fx.write({"chapters/01_a/img.svg": "<svg/>\n"})
        self.fx.git("add", "chapters/01_a/img.svg")
        self.expect("# T\n\n![x](img.svg)\n", "must live in docs/plots or docs/diagrams")

    def test_anchors_must_exist(self):
        self.expect("# T\n\n[x](../../README.md#projects)\n",
                    "README.md has no heading with the anchor '#projects'")
        self.expect("# T\n\n## A b\n\n[x](#a-b) [y](#a-c)\n", "has no heading with the anchor "
                    "'#a-c'")

    def test_raw_doxygen_syntax_fails(self):
        self.expect("# T {#t}\n\nSee @ref ch01 and \\dotfile d.dot.\n\n[TOC]\n",
                    ":1: heading with a Doxygen label", ":3: raw Doxygen command '@ref'",
                    ":3: raw Doxygen command '\\dotfile'", ":5: [TOC] shows as text")
        self.expect("# T\n\nMail me@ref.org or @snippet x.\n", "raw Doxygen command '@snippet'")

    def test_split_links_html_tags_and_open_fences_fail(self):
        self.expect("# T\n\n[two\nlines](../../README.md)\n", ":4: a link split across lines")
        self.expect('# T\n\n<img src="../../docs/plots/p.svg">\n', "relative HTML img tag")
        self.expect("# T\n\n```\ncode\n", ":3: this code fence is never closed")


class FilterTest(unittest.TestCase):
    def translate(self, rel, text):
        return mdpages_filter().translate(textwrap.dedent(text), rel)

    def test_labels_links_images_and_toc(self):
        page = """\
            # Chapter 01 — Min/max reduction

            <!-- toc -->

            ## Why `__ldg` helps

            See [measuring](../../docs/pages/measuring.md#ratios), [this](#why-__ldg-helps),
            [home](../../README.md), [csv](../../docs/results/01_minmax_reduction.csv),
            [code](naive.cu) and [web](https://example.com/a.md).
            ![plot](../../docs/plots/01_minmax_reduction_bandwidth_float.svg)

            ```sh
            # not a heading [x](../../README.md)
            ```
            """
        out = self.translate("chapters/01_minmax_reduction/README.md", page)
        self.assertEqual(out.count("\n"), textwrap.dedent(page).count("\n"))
        lines = out.split("\n")
        self.assertEqual(lines[0], "# Chapter 01 — Min/max reduction {#ch01}")
        self.assertEqual(lines[2], "[TOC]")
        self.assertEqual(lines[4], "## Why __ldg helps {#ch01-why-__ldg-helps}")
        self.assertEqual(lines[6], "See [measuring](@ref measuring-ratios), "
                                   "[this](@ref ch01-why-__ldg-helps),")
        self.assertEqual(lines[7], "[home](@ref index), [csv](01_minmax_reduction.csv),")
        self.assertEqual(lines[8], "[code](@ref chapters/01_minmax_reduction/naive.cu) and "
                                   "[web](https://example.com/a.md).")
        self.assertEqual(lines[9], "![plot](01_minmax_reduction_bandwidth_float.svg)")
        self.assertEqual(lines[12], "# not a heading [x](../../README.md)")

    def test_code_spans_leave_headings_and_ref_link_texts_only(self):
        out = self.translate("docs/pages/glossary.md", """\
            # Glossary

            ### `__ldg`

            Through [`__ldg`](#__ldg), not [`code`](https://example.com) or `[x](#y)`.
            """)
        self.assertEqual(out.split("\n")[2:5], [
            "### __ldg {#glossary-__ldg}", "",
            "Through [__ldg](@ref glossary-__ldg), not [`code`](https://example.com) or `[x](#y)`."])

    def test_page_labels(self):
        self.assertEqual(mdpages.page_label("README.md"), "index")
        self.assertEqual(mdpages.page_label("chapters/03_mppsort/README.md"), "ch03")
        self.assertEqual(mdpages.page_label("docs/pages/glossary.md"), "glossary")
        self.assertEqual(mdpages.page_label("docs/results/README.md"), "results")

    def test_main_page_title_gets_no_label(self):
        out = self.translate("README.md", "# Project\n\n## Two commands\n")
        self.assertEqual(out, "# Project\n\n## Two commands {#index-two-commands}\n")


class SlugTest(unittest.TestCase):
    def test_github_anchors(self):
        cases = {
            "Chapter 01 — Min/max reduction": "chapter-01--minmax-reduction",
            "Why `__ldg` helps": "why-__ldg-helps",
            "2^29 bytes: 1.11 × the floor": "229-bytes-111--the-floor",
            "The M×2M block": "the-m2m-block",
            "**Bold** and [a link](x.md)": "bold-and-a-link",
            "Change 10 (where 64M stands)": "change-10-where-64m-stands",
        }
        for heading, anchor in cases.items():
            self.assertEqual(mdpages.slug(mdpages.heading_text(heading)), anchor, heading)

    def test_repeated_headings_get_suffixes(self):
        found = [h[2] for h in mdpages.headings("# A\n\n## B\n\n## B\n\n```\n## B\n```\n")]
        self.assertEqual(found, ["a", "b", "b-1"])


def mdpages_filter():
    import doxygen_filter
    return doxygen_filter


if __name__ == "__main__":
    unittest.main()
