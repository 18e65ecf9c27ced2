#!/usr/bin/env python3
"""Tests of the docs tools on fixtures in temporary repositories: scripts/snippets.py,
scripts/check_markdown.py, scripts/update_results.py, scripts/toc.py, scripts/check_figures.py,
docs/tools/doxygen_filter.py, mdpages.py and site_links.py.

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
TOOLS = ["scripts/snippets.py", "scripts/check_markdown.py", "scripts/update_results.py",
         "scripts/toc.py", "scripts/check_figures.py", "docs/tools/mdpages.py",
         "docs/tools/doxygen_filter.py"]
sys.path.insert(0, str(REPO / "docs" / "tools"))
import mdpages  # noqa: E402
import site_links  # noqa: E402


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


class CheckMarkdownMarkersTest(unittest.TestCase):
    """Markers on one line, never at the start of a line; the toc block closed; chapter pages
    kept to a main path."""

    def setUp(self):
        self.fx = Fixture({"chapters/01_a/README.md": "# A\n\nText.\n"})

    def tearDown(self):
        self.fx.close()

    def expect(self, text, *messages, rc=1, page="chapters/01_a/README.md"):
        self.fx.write({page: text})
        self.fx.git("add", "-A")
        code, out = self.fx.run("scripts/check_markdown.py")
        self.assertEqual(code, rc, out)
        for message in messages:
            self.assertIn(message, out)

    def test_a_marker_that_wraps_fails(self):
        self.expect("# A\n\nreads 4.52<!--=read\ntbs--> TB/s\n",
                    ":3: a comment (marker) that does not close on its line")

    def test_a_line_that_starts_with_a_figure_marker_fails(self):
        self.expect("# A\n\nreads\n<!--=read_tbs--> TB/s\n",
                    ":4: a line that starts with a figure marker")
        self.expect("# A\n\nreads\n4.52<!--=read_tbs--> TB/s\n", rc=0)

    def test_bold_that_starts_with_a_code_span_fails(self):
        self.expect("# A\n\n1. **`x` is here** now\n", ":3: bold text that starts with a code span")
        self.expect("# A\n\n1. **Here is `x`** now\n", rc=0)

    def test_an_open_toc_fails(self):
        self.expect("# A\n\n<!-- toc -->\n\n## B\n", ":3: '<!-- toc -->' without its list")
        self.expect("# A\n\n<!-- toc -->\n- [B](#b)\n<!-- /toc -->\n\n## B\n", rc=0)

    def test_a_chapter_page_over_the_word_limit_fails(self):
        words = "word " * 5001
        self.expect(f"# A\n\n{words}\n", "chapters/01_a/README.md:1: 5003 words outside code")
        self.expect(f"# A\n\n{'word ' * 4990}\n\n```\n{words}\n```\n", rc=0)
        self.expect(f"# A\n\n{words}\n", rc=0, page="chapters/01_a/design_notes.md")


RESULTS = {
    "docs/results/01_a.csv": """\
        chapter,variant,n,dist,seed,median_ms,min_ms,max_ms,reps,throughput,unit,pct_peak
        01_a,naive,1024,uniform,42,2.0,1.9,2.1,10,100.0,GB/s,10.0
        01_a,optimized,1024,uniform,42,0.5,0.4,0.6,10,400.0,GB/s,40.0
        01_a,optimized,2048,uniform,42,0.8,0.7,0.9,10,500.0,GB/s,50.0
        """,
    "docs/results/device.csv": """\
        name,sms,read_gbps
        GPU,100,1000.0
        """,
    "docs/figures.txt": """\
        # shared figures
        read_tbs   .2f     device col=read_gbps scale=0.001
        lat_ns     .0f     assume 500: a round figure for the test
        in_flight  .1f     = read_tbs * lat_ns / 1000  # MB
        source paper: The Paper | Old GPU
        """,
    "chapters/01_a/figures.txt": """\
        opt_gbs    .0f     01 variant=optimized n=1024 dist=uniform col=throughput
        opt_max    .0f     01 variant=optimized n=2^10..2^11 col=throughput agg=max
        speedup    .1f     01 variant=optimized n=1024 ratio=naive
        fast       ge=3.5  = speedup
        """,
}


class UpdateResultsTest(unittest.TestCase):
    PAGE = """\
        # A

        Reads at 1<!--=opt_gbs--> GB/s, at most <!--=opt_max--> GB/s, 1<!--=speedup--> x the
        naive kernel (**missed<!--=fast-->**); the device reads 9<!--=read_tbs--> TB/s, so
        9<!--=in_flight--> MB (9<!--=in_flight:.3f-->) are in flight. `1<!--=opt_gbs-->` stays.

        <!-- results variants=optimized n=2^10..2^11 columns=variant,n,median_ms -->
        <!-- /results -->
        """

    def setUp(self):
        self.fx = Fixture(dict(RESULTS, **{"chapters/01_a/README.md": self.PAGE}))

    def tearDown(self):
        self.fx.close()

    def test_figures_and_tables_are_written_and_checked(self):
        rc, out = self.fx.run("scripts/update_results.py", "--check")
        self.assertEqual(rc, 1, out)
        self.assertEqual(self.fx.read("chapters/01_a/README.md"), textwrap.dedent(self.PAGE))
        rc, out = self.fx.run("scripts/update_results.py")
        self.assertEqual(rc, 0, out)
        page = self.fx.read("chapters/01_a/README.md")
        self.assertIn("Reads at 400<!--=opt_gbs--> GB/s, at most 500<!--=opt_max--> GB/s, "
                      "4.0<!--=speedup--> x the", page)
        self.assertIn("(**met<!--=fast-->**); the device reads 1.00<!--=read_tbs--> TB/s", page)
        self.assertIn("0.5<!--=in_flight--> MB (0.500<!--=in_flight:.3f-->)", page)
        self.assertIn("`1<!--=opt_gbs-->` stays", page)
        self.assertIn("| variant | n | median ms |\n|---|---|---|\n| optimized | 1K | 0.5 |\n"
                      "| optimized | 2K | 0.8 |\n<!-- /results -->", page)
        rc, out = self.fx.run("scripts/update_results.py", "--check")
        self.assertEqual(rc, 0, out)
        self.fx.write({"docs/results/01_a.csv": RESULTS["docs/results/01_a.csv"].replace(
            "0.5,0.4", "0.4,0.4")})
        rc, out = self.fx.run("scripts/update_results.py", "--check")
        self.assertEqual(rc, 1, out)
        self.assertIn("chapters/01_a/README.md: tables or figures differ from the CSV", out)

    def expect_error(self, files, message):
        self.fx.write(files)
        rc, out = self.fx.run("scripts/update_results.py", "--check")
        self.assertEqual(rc, 1, out)
        self.assertIn(message, out)

    def test_unknown_unused_and_broken_figures_fail(self):
        self.fx.run("scripts/update_results.py")
        self.expect_error({"chapters/01_a/README.md": "# A\n\n1<!--=nothing-->\n"},
                          "unknown figure 'nothing'")
        self.expect_error({"chapters/01_a/README.md": self.PAGE.replace(
            "at most <!--=opt_max--> GB/s", "")}, "figure 'opt_max' is used by no page")
        self.fx.write({"chapters/01_a/README.md": self.PAGE})
        self.expect_error({"chapters/01_a/figures.txt": RESULTS["chapters/01_a/figures.txt"]
                           .replace("n=2^10..2^11", "n=2^10..2^11 dist=uniform,sorted")
                           .replace("agg=max", "")}, "2 rows match; add agg=min|max")
        self.expect_error({"chapters/01_a/figures.txt": RESULTS["chapters/01_a/figures.txt"]
                           .replace("= speedup", "= fast")}, "figures defined through each other")
        self.expect_error({"chapters/01_a/figures.txt": RESULTS["chapters/01_a/figures.txt"]
                           .replace("= speedup", "= __import__('os')")}, "is not allowed")
        self.expect_error({"chapters/01_a/figures.txt": RESULTS["chapters/01_a/figures.txt"],
                           "docs/figures.txt": RESULTS["docs/figures.txt"].replace(
                               "assume 500: a round figure for the test", "assume 500")},
                          "write 'assume VALUE: REASON'")


class TocTest(unittest.TestCase):
    PAGE = "# T\n\n<!-- toc -->\n\n## One `x`\n\n### Two [link](#one-x)\n\n#### Deep\n"

    def setUp(self):
        self.fx = Fixture({"docs/pages/t.md": self.PAGE})

    def tearDown(self):
        self.fx.close()

    def test_writes_the_list_and_check_fails_when_stale(self):
        rc, out = self.fx.run("scripts/toc.py", "--check")
        self.assertEqual(rc, 1, out)
        self.assertIn("docs/pages/t.md: the table of contents differs", out)
        self.assertEqual(self.fx.run("scripts/toc.py")[0], 0)
        self.assertIn("<!-- toc -->\n- [One `x`](#one-x)\n  - [Two link](#two-link)\n"
                      "<!-- /toc -->\n\n## One", self.fx.read("docs/pages/t.md"))
        self.assertEqual(self.fx.run("scripts/toc.py", "--check")[0], 0)
        self.fx.write({"docs/pages/t.md": self.fx.read("docs/pages/t.md") + "\n## Three\n"})
        rc, out = self.fx.run("scripts/toc.py", "--check")
        self.assertEqual(rc, 1, out)
        self.assertEqual(self.fx.run("scripts/toc.py")[0], 0)
        self.assertIn("  - [Two link](#two-link)\n- [Three](#three)\n<!-- /toc -->",
                      self.fx.read("docs/pages/t.md"))


class CheckFiguresTest(unittest.TestCase):
    def setUp(self):
        self.fx = Fixture(dict(RESULTS, **{"chapters/01_a/README.md": "# A\n"}))

    def tearDown(self):
        self.fx.close()

    def check(self, text):
        self.fx.write({"chapters/01_a/README.md": text})
        return self.fx.run("scripts/check_figures.py")

    def test_an_unsourced_figure_fails(self):
        rc, out = self.check("# A\n\nThe kernel reads 4.6 TB/s and takes about 4.5 ms.\n")
        self.assertEqual(rc, 1, out)
        self.assertIn("chapters/01_a/README.md:3: '4.6 TB/s' is neither a named figure", out)
        self.assertIn("'4.5 ms'", out)
        for figure in ("0.2–0.4 µs", "17.6 bytes per clock", "1.15 TFLOP/s", "600 cycles",
                       "13 GE/s", "2 s"):
            rc, out = self.check(f"# A\n\nIt costs {figure} here.\n")
            self.assertEqual(rc, 1, f"{figure}: {out}")

    def test_named_figures_code_and_generated_tables_pass(self):
        rc, out = self.check("# A\n\nIt reads 4.52<!--=read_tbs--> TB/s; run `--reps 100 "
                             "--n 2 s`.\n\n<!-- results n=1K -->\n| a | ms |\n|---|---|\n"
                             "| x | 4 ms |\n<!-- /results -->\n\n```\n3 ms\n```\n")
        self.assertEqual(rc, 0, out)

    def test_a_figure_named_by_its_source_passes(self):
        rc, out = self.check("# A\n\nThe Paper measured 2.08 GB/s on its Old GPU.\n\n"
                             "- an item: 3 ms\n")
        self.assertEqual(rc, 1, out)
        self.assertIn(":5: '3 ms'", out)
        self.assertNotIn("2.08", out)

    def test_table_columns_with_a_unit(self):
        table = ("# A\n\n| n | Old GPU ms | ours µs | note |\n|---|---|---|---|\n"
                 "| 1K | 12.5 | 3.1<!--=read_tbs--> | 7 ms |\n| 2K | 20 | 4.0 | |\n")
        rc, out = self.check(table)
        self.assertEqual(rc, 1, out)
        self.assertIn(":5: '7 ms'", out)
        self.assertIn(":6: '4.0'", out)
        self.assertNotIn("12.5", out)
        self.assertNotIn("'20'", out)
        self.assertNotIn("3.1", out)


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
        self.assertEqual(lines[2], "[TOC]")  # a bare toc line (before scripts/toc.py ran)
        self.assertEqual(lines[4], "## Why \\_\\_ldg helps {#ch01-why-__ldg-helps}")
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
            "### \\_\\_ldg {#glossary-__ldg}", "",
            "Through [__ldg](@ref glossary-__ldg), not [`code`](https://example.com) or "
            "`[x](#y)`."])

    def test_toc_block_figures_and_deeper_pages(self):
        page = """\
            # Chapter 03 — mppSort

            <!-- toc -->
            - [Notes](#notes)
            <!-- /toc -->

            ## Notes

            Reads 4.52<!--=read_tbs--> TB/s (`1<!--=x-->`); see [the `design` notes](design_notes.md),
            [a section](design_notes.md#why), [chapter 01](../01_minmax_reduction/README.md).
            """
        out = self.translate("chapters/03_mppsort/README.md", page).split("\n")
        self.assertEqual(out[2:5], ["[TOC]", "", ""])
        self.assertEqual(out[8], 'Reads 4.52 TB/s (`1<!--=x-->`); see @subpage '
                                 'ch03_design_notes "the design notes",')
        self.assertEqual(out[9], "[a section](@ref ch03_design_notes-why), "
                                 "[chapter 01](@ref ch01).")
        deeper = self.translate("chapters/03_mppsort/design_notes.md",
                                "# Design notes\n\n## Why\n\n[back](README.md)\n")
        self.assertEqual(deeper, "# Design notes {#ch03_design_notes}\n\n"
                                 "## Why {#ch03_design_notes-why}\n\n[back](@ref ch03)\n")

    def test_page_labels(self):
        self.assertEqual(mdpages.page_label("README.md"), "index")
        self.assertEqual(mdpages.page_label("chapters/03_mppsort/README.md"), "ch03")
        self.assertEqual(mdpages.page_label("chapters/03_mppsort/design_notes.md"),
                         "ch03_design_notes")
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
            "`__launch_bounds__` and **bold**": "__launch_bounds__-and-bold",
        }
        for heading, anchor in cases.items():
            self.assertEqual(mdpages.slug(mdpages.heading_text(heading)), anchor, heading)

    def test_repeated_headings_get_suffixes(self):
        found = [h[2] for h in mdpages.headings("# A\n\n## B\n\n## B\n\n```\n## B\n```\n")]
        self.assertEqual(found, ["a", "b", "b-1"])


def mdpages_filter():
    import doxygen_filter
    return doxygen_filter


class SiteLinksTest(unittest.TestCase):
    TAG = textwrap.dedent("""\
        <tagfile>
          <compound kind="namespace"><name>ch03::naive</name>
            <filename>namespacech03_1_1naive.html</filename>
            <member kind="variable"><name>kThreads</name>
              <anchorfile>namespacech03_1_1naive.html</anchorfile><anchor>a1</anchor></member>
          </compound>
          <compound kind="namespace"><name>ch04::naive</name>
            <filename>namespacech04_1_1naive.html</filename>
            <member kind="variable"><name>kThreads</name>
              <anchorfile>namespacech04_1_1naive.html</anchorfile><anchor>b2</anchor></member>
          </compound>
          <compound kind="struct"><name>ch04::Plan</name><filename>structch04_1_1Plan.html</filename>
            <member kind="variable"><name>tile</name>
              <anchorfile>structch04_1_1Plan.html</anchorfile><anchor>c3</anchor></member>
          </compound>
          <compound kind="file"><name>streamk.cu</name>
            <path>/r/chapters/04_matmul/</path><filename>streamk_8cu.html</filename>
            <member kind="variable"><name>tile</name>
              <anchorfile>streamk_8cu.html</anchorfile><anchor>d4</anchor></member>
          </compound>
          <compound kind="file"><name>cuda_check.hpp</name>
            <path>/r/common/</path><filename>cuda__check_8hpp.html</filename></compound>
        </tagfile>
        """)

    def symbols(self, tmp):
        tag = pathlib.Path(tmp) / "t.tag"
        tag.write_text(self.TAG)
        return site_links.Symbols(tag)

    def test_a_code_link_to_another_chapter_goes_to_this_chapters_symbol_or_nowhere(self):
        with tempfile.TemporaryDirectory() as tmp:
            symbols = self.symbols(tmp)
        page = ('<div class="fragment"><a class="code hl_variable" '
                'href="namespacech03_1_1naive.html#a1">kThreads</a> '
                '<a class="code hl_variable" href="streamk_8cu.html#d4">tile</a> '
                '<a class="code hl_define" href="cuda__check_8hpp.html#e5">CUDA_CHECK</a>'
                '</div><!-- fragment --><a class="code" href="streamk_8cu.html#d4">tile</a>')
        fixed, retargeted, unlinked = site_links.fix_page(page, "04", symbols)
        self.assertIn('href="namespacech04_1_1naive.html#b2">kThreads</a>', fixed)
        self.assertIn('cuda__check_8hpp.html#e5">CUDA_CHECK', fixed)          # shared code stays
        self.assertEqual((retargeted, unlinked), (1, 0))  # tile is in chapter 04's own file
        fixed, retargeted, unlinked = site_links.fix_page(page, "02", symbols)
        self.assertEqual((retargeted, unlinked), (0, 2))
        self.assertIn('<div class="fragment">kThreads tile <a', fixed)
        self.assertTrue(fixed.endswith('<a class="code" href="streamk_8cu.html#d4">tile</a>'))
        fixed, retargeted, unlinked = site_links.fix_page(page, "03", symbols)
        self.assertEqual((retargeted, unlinked), (0, 1))  # a struct's member is not retargeted

    def test_dead_links_and_anchors_and_url_schemes_are_found(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = pathlib.Path(tmp)
            (root / "a.html").write_text('<a id="top"></a><a href="b.html#x">b</a>'
                                         '<a href="#top">t</a><a href="https://e.org">e</a>'
                                         '<a href="file:line:">f</a><a href="c.html">c</a>'
                                         '<a href="b.html#y">y</a><img src="p.svg"/>')
            (root / "b.html").write_text('<h2><a name="x"></a></h2>')
            dead = site_links.dead_links(root)
        self.assertEqual(dead, ["a.html: b.html#y (no such anchor)", "a.html: c.html",
                                "a.html: file:line:", "a.html: p.svg"])


if __name__ == "__main__":
    unittest.main()
