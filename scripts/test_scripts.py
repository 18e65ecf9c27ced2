#!/usr/bin/env python3
"""Tests of the test-suite scripts' logic on made-up input: build_progress.py (the progress
lines), ctest_summary.py (the reasons a JUnit skip gives), check_test_labels.py (timer calls
outside *Timing suites, binaries of another configuration), check_sanitize_args.py (the tags,
programs, inputs and filters of a sanitize.args line), check_page_commands.py (which words of a page are commands),
memory_table.py --measure without a GPU, chapter 02's stdin_check.cmake run twice at once,
cmake/gtest_batches.cmake's list, and test.sh's option handling (a usage error before anything
is built).

Run: python3 scripts/test_scripts.py   (nothing else needed)
"""
import io
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import textwrap
import unittest
import xml.etree.ElementTree as ET

SCRIPTS = pathlib.Path(__file__).resolve().parent
ROOT = SCRIPTS.parent
sys.path.insert(0, str(SCRIPTS))
import build_progress  # noqa: E402
import check_page_commands  # noqa: E402
import check_sanitize_args  # noqa: E402
import check_test_labels  # noqa: E402
import ctest_summary  # noqa: E402
import my_gpu  # noqa: E402


class BuildProgress(unittest.TestCase):
    def run_build(self, lines, times, every=10):
        clock = iter(times)
        log, out = io.StringIO(), io.StringIO()
        build_progress.follow(lines, log, out, every, "build", clock=lambda: next(clock))
        return log.getvalue(), out.getvalue().splitlines()

    def test_a_line_at_the_start_every_interval_and_at_the_end(self):
        lines = [f"[{i}/10] Building thing {i}\n" for i in range(1, 11)]
        lines.insert(3, "warning: something\n")
        # start, then one clock reading per step, then the end
        log, shown = self.run_build(lines, [0, 0, 3, 6, 12, 13, 14, 25, 26, 27, 28, 30])
        self.assertEqual(log, "".join(lines))  # the log gets everything
        self.assertEqual(shown, ["build: 10% (1 of 10 steps), 0s",
                                 "build: 40% (4 of 10 steps), 12s",
                                 "build: 70% (7 of 10 steps), 25s",
                                 "build: 100% (10 of 10 steps), 30s"])

    def test_nothing_to_build(self):
        _, shown = self.run_build(["ninja: no work to do.\n"], [0, 1])
        self.assertEqual(shown, ["build: nothing to do (1s)"])

    def test_minutes(self):
        self.assertEqual(build_progress.progress_line("build", 1, 3, 75),
                         "build: 33% (1 of 3 steps), 1m15s")


JUNIT = """<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="x" tests="4" failures="0" skipped="3">
  <testcase name="A.NoGpu" status="notrun">
    <skipped message="SKIP_REGULAR_EXPRESSION_MATCHED"/>
    <system-out>[ RUN      ] A.NoGpu
tests/gpu_test.hpp:24: Skipped
no usable CUDA GPU here
[  SKIPPED ] A.NoGpu (0 ms)</system-out>
  </testcase>
  <testcase name="B.Memory" status="notrun">
    <skipped message="SKIP_REGULAR_EXPRESSION_MATCHED"/>
    <system-out>tests/x.cu:7: Skipped
needs about 2.2 GB of free device memory
</system-out>
  </testcase>
  <testcase name="ch01_naive.smoke" status="notrun">
    <skipped message="SKIP_RETURN_CODE=77"/>
    <system-out>ch01_naive: skipped: no NVIDIA GPU found
</system-out>
  </testcase>
  <testcase name="C.Ran" status="run"><system-out>ok</system-out></testcase>
</testsuite>
"""


class CtestSummary(unittest.TestCase):
    def test_skips_say_why(self):
        tree = ET.ElementTree(ET.fromstring(JUNIT.split("\n", 1)[1]))
        self.assertEqual(ctest_summary.name_skips(tree), 3)
        messages = {c.get("name"): c.find("skipped").get("message")
                    for c in tree.getroot().iter("testcase") if c.find("skipped") is not None}
        self.assertEqual(messages, {"A.NoGpu": "no GPU",
                                    "B.Memory": "needs about 2.2 GB of free device memory",
                                    "ch01_naive.smoke": "no GPU"})

    def test_times_report_per_label_and_slowest_first(self):
        root = ET.fromstring('<testsuite time="12"><testcase name="a" time="3"/>'
                             '<testcase name="b" time="5"/><testcase name="c" time="1"/>'
                             '</testsuite>')
        labels = {"a": ["gpu"], "b": ["gpu", "timing"], "c": ["host"]}
        lines = ctest_summary.times_report(root, labels, slowest=2)
        self.assertEqual(lines[0], "wall time of the run: 12 s; sum of the tests' times: 9 s "
                                   "over 3 tests")
        self.assertEqual(lines[1], "  label gpu: 2 tests, 8 s, 4.00 s each on average")
        self.assertEqual(lines[-2:], ["      5.00 s  b", "      3.00 s  a"])

    def test_unknown_output_keeps_ctests_message(self):
        self.assertIsNone(ctest_summary.skip_reason("nothing useful"))

    BATCH = textwrap.dedent("""\
        Note: Google Test filter = S.A:S.B:S.C?x:S.D:S.E
        [==========] Running 5 tests from 1 test suite.
        [ RUN      ] S.A
        [       OK ] S.A (12 ms)
        [ RUN      ] S.B
        t.cu:9: Skipped
        needs about 2.2 GB of free device memory
        [  SKIPPED ] S.B (0 ms)
        [ RUN      ] S.C-x
        t.cu:20: Failure
        Expected equality of these values:
        [  FAILED  ] S.C-x, where GetParam() = 3 (5 ms)
        [ RUN      ] S.D
        Segmentation fault
        """)

    def test_a_batch_says_which_of_its_tests_passed_skipped_failed_or_never_ran(self):
        results = ctest_summary.batch_results(self.BATCH)
        self.assertEqual([(n, o) for n, o, *_ in results],
                         [("S.A", "passed"), ("S.B", "skipped"), ("S.C-x", "failed"),
                          ("S.D", "failed"), ("S.E", "failed")])
        self.assertEqual(results[0][3], 0.012)
        self.assertEqual(results[1][2], "needs about 2.2 GB of free device memory")
        self.assertEqual(results[2][2], "t.cu:20: Failure")
        self.assertEqual(results[3][2], "the process ended during this test")
        self.assertEqual(results[4][2], "not run: its batch's process ended before it (after S.D)")
        self.assertIsNone(ctest_summary.batch_results("plain output of a script"))
        cut = self.BATCH + ctest_summary.TRUNCATED + " of 1024 bytes.]"
        self.assertIsNone(ctest_summary.batch_results(cut))

    def test_the_junit_file_gets_one_testcase_per_googletest_test(self):
        root = ET.fromstring("<testsuite><testcase name='S/1-5' classname='S/1-5' "
                             "status='fail'><failure message='Failed'/><system-out/>"
                             "</testcase><testcase name='other' classname='other'/>"
                             "</testsuite>")
        root.find("testcase").find("system-out").text = self.BATCH
        tree = ET.ElementTree(root)
        self.assertEqual(ctest_summary.expand_batches(tree), 1)
        cases = root.findall("testcase")
        self.assertEqual([c.get("name") for c in cases],
                         ["S.A", "S.B", "S.C-x", "S.D", "S.E", "other"])
        self.assertEqual({c.get("classname") for c in cases[:5]}, {"S/1-5"})
        self.assertEqual([ctest_summary.outcome(c) for c in cases],
                         ["passed", "skipped", "failed", "failed", "failed", "passed"])
        self.assertEqual(cases[1].find("skipped").get("message"),
                         "needs about 2.2 GB of free device memory")

    def test_rounds_of_one_run_are_summed_as_one(self):
        with tempfile.TemporaryDirectory() as tmp:
            first, second = pathlib.Path(tmp) / "a.xml", pathlib.Path(tmp) / "b.xml"
            first.write_text('<testsuite time="40"><testcase name="a"/>'
                             '<testcase name="b"><failure message="x"/></testcase></testsuite>')
            second.write_text('<testsuite time="12"><testcase name="c"><skipped/></testcase>'
                              '</testsuite>')
            root = ctest_summary.load_runs([str(first), str(second)]).getroot()
        self.assertEqual([c.get("name") for c in root.iter("testcase")], ["a", "b", "c"])
        self.assertEqual([ctest_summary.outcome(c) for c in root.iter("testcase")],
                         ["passed", "failed", "skipped"])
        self.assertEqual(root.get("time"), "52")

    def test_a_missing_round_is_a_failure_that_says_so(self):
        r = subprocess.run([sys.executable, str(ROOT / "scripts" / "ctest_summary.py"),
                            "--build", "build", "--junit", "/nonexistent/ctest_t4_alone.xml"],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 1)
        self.assertIn("no JUnit file /nonexistent/ctest_t4_alone.xml", r.stderr)

    def test_a_run_of_skips_alone_is_77_without_a_gpu_and_a_failure_with_one(self):
        def status(passed, failed, skipped, no_gpu):
            total = {"passed": passed, "failed": failed, "skipped": skipped}
            return ctest_summary.exit_status(total, no_gpu)
        self.assertEqual(status(0, 0, 6, no_gpu=True), 77)
        self.assertEqual(status(0, 0, 6, no_gpu=False), 1)   # a GPU, yet nothing ran
        self.assertEqual(status(0, 0, 0, no_gpu=True), 1)    # nothing selected
        self.assertEqual(status(3, 0, 6, no_gpu=True), 0)
        self.assertEqual(status(3, 1, 6, no_gpu=True), 1)
        self.assertEqual(status(0, 1, 6, no_gpu=True), 1)


class MyGpu(unittest.TestCase):
    """The predictions of scripts/my_gpu.py: the H200's fraction of a ceiling, on this GPU's."""

    def committed(self, chapter):
        return my_gpu.read_csv((ROOT / "docs" / "results" / f"{chapter}.csv").read_text())

    def test_every_headline_row_is_in_the_committed_results(self):
        for chapter, what, _, (variant, n, dist), _, _ in my_gpu.ROWS:
            rows = self.committed(my_gpu.CHAPTER_CSV[chapter])
            self.assertIsNotNone(my_gpu.find_row(rows, variant, n, dist), what)

    def test_a_gpu_with_half_the_ceilings_is_predicted_half_as_fast(self):
        h200 = self.committed("device")[0]
        half = {k: str(float(h200[k]) / 2) for k in my_gpu.CEILING_COLUMN.values()}
        for chapter, what, _, (variant, n, dist), basis, unit in my_gpu.ROWS:
            row = my_gpu.find_row(self.committed(my_gpu.CHAPTER_CSV[chapter]), variant, n, dist)
            predicted = my_gpu.predict(row, h200, half, basis, unit)
            want = my_gpu.shown(row, unit) * (2 if unit == "ms" else 0.5)
            self.assertAlmostEqual(predicted, want, places=6, msg=what)

    def test_short_means_below_the_prediction_by_more_than_the_runs_noise(self):
        def row(median, lo, hi, throughput):
            return {"median_ms": str(median), "min_ms": str(lo), "max_ms": str(hi),
                    "throughput": str(throughput)}
        self.assertEqual(my_gpu.verdict(row(1.0, 0.99, 1.01, 90), 100, "GB/s")[0], "short")
        self.assertEqual(my_gpu.verdict(row(1.0, 0.99, 1.01, 96), 100, "GB/s")[0], "ok")
        self.assertEqual(my_gpu.verdict(row(1.0, 0.8, 1.2, 85), 100, "GB/s")[0], "ok")  # noisy
        self.assertEqual(my_gpu.verdict(row(1.2, 1.19, 1.21, 0), 1.0, "ms")[0], "short")
        self.assertEqual(my_gpu.verdict(row(0.9, 0.89, 0.91, 0), 1.0, "ms")[0], "ok")


class MemoryTable(unittest.TestCase):
    """memory_table.py --measure on a machine whose device query finds no GPU: a skip (77) with
    the reason, and no CSV written."""

    def test_measure_without_a_gpu_is_a_skip_that_writes_nothing(self):
        with tempfile.TemporaryDirectory() as tmp:
            build = pathlib.Path(tmp) / "build"
            (build / "bin").mkdir(parents=True)
            query = build / "bin" / "staged_device_query"
            query.write_text("#!/bin/sh\necho 'no NVIDIA GPU found' >&2\nexit 77\n")
            query.chmod(0o755)
            out = pathlib.Path(tmp) / "memory.csv"
            done = subprocess.run([sys.executable, str(SCRIPTS / "memory_table.py"), "--measure",
                                   "--build", str(build), "--out", str(out)],
                                  capture_output=True, text=True)
            self.assertEqual(done.returncode, 77, done.stderr)
            self.assertIn("no usable GPU", done.stderr)
            self.assertFalse(out.exists())


class StdinCheck(unittest.TestCase):
    """chapters/02_histogram_scan_countsort/stdin_check.cmake, as two ctest runs over one build
    folder start it: two checks at once with the same OUTPUT path must not share a file (with a
    shared file, the longer output's tail stays behind the shorter one and its check fails)."""

    def test_two_checks_at_once_with_one_output_path_both_pass(self):
        check = ROOT / "chapters" / "02_histogram_scan_countsort" / "stdin_check.cmake"
        with tempfile.TemporaryDirectory() as tmp:
            tmp = pathlib.Path(tmp)
            runs = []
            for name, text, delay in (("long", "b" * 64, "0.1"), ("short", "a" * 8, "0.6")):
                data = tmp / f"{name}.txt"
                data.write_text(text)
                cmd = tmp / f"{name}.sh"  # echoes stdin after a delay, as a slow GPU run would
                cmd.write_text(f"#!/bin/sh\nsleep {delay}\ncat\n")
                cmd.chmod(0o755)
                runs.append(subprocess.Popen(
                    ["cmake", f"-DCMD={cmd}", f"-DINPUT={data}", f"-DEXPECTED={data}",
                     f"-DOUTPUT={tmp / 'shared.out'}", "-P", str(check)],
                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
            for run in runs:
                output = run.communicate()[0]
                self.assertEqual(run.returncode, 0, output)
            self.assertEqual(list(tmp.glob("shared.out*")), [])


class GtestBatches(unittest.TestCase):
    """cmake/gtest_batches.cmake, run as a script with add_test counted: the batches of a made-up
    listing, and a new list that replaces the cached one instead of being written into it (a
    ctest started meanwhile must never include a list cut short)."""

    def test_batches_and_a_cache_replaced_whole(self):
        batches = ROOT / "cmake" / "gtest_batches.cmake"
        with tempfile.TemporaryDirectory() as tmp:
            tmp = pathlib.Path(tmp)
            exe = tmp / "fake_tests"
            listing = "Solo.\n  One\nAll/Rows.\n" + \
                "".join(f"  MatchesCpu/Tiled16_{i}\n" for i in range(20))
            exe.write_text(f"#!/bin/sh\nprintf '{listing}'\n")
            exe.chmod(0o755)
            old = tmp / "old_list.cmake"
            old.write_text("# a list kept by another reader\n")
            cache = tmp / "cache.cmake"
            os.link(old, cache)  # written in place, the cache would change old_list.cmake too
            os.utime(old, (1, 1))
            names = tmp / "names.txt"
            harness = tmp / "harness.cmake"
            harness.write_text(textwrap.dedent(f"""\
                function(add_test name)
                  file(APPEND "{names}" "${{name}}\\n")
                endfunction()
                function(set_tests_properties)
                endfunction()
                set(_exe "{exe}")
                set(_name fake_tests)
                set(_labels host)
                set(_batch 16)
                set(_cache "{cache}")
                include("{batches}")
                """))
            done = subprocess.run(["cmake", "-P", str(harness)], capture_output=True, text=True)
            self.assertEqual(done.returncode, 0, done.stderr)
            self.assertEqual(names.read_text().split(),
                             ["Solo.One", "All/Rows.MatchesCpu/Tiled16/1-16",
                              "All/Rows.MatchesCpu/Tiled16/17-20"])
            self.assertEqual(old.read_text(), "# a list kept by another reader\n")
            self.assertIn("Tiled16/17-20", cache.read_text())
            self.assertEqual(sorted(p.name for p in tmp.glob("cache.cmake*")), ["cache.cmake"])


class TimingSuites(unittest.TestCase):
    def test_a_timer_call_outside_a_timing_suite_is_a_problem(self):
        with tempfile.TemporaryDirectory() as tmp:
            (pathlib.Path(tmp) / "x_test.cu").write_text(textwrap.dedent("""\
                TEST_F(GpuResources, Bad) {
                  auto t = TimeGpu(opt, [] { Launch(); });
                }
                void Helper() { TimeGpu(opt, work); }  // not a test body
                TEST(FooTiming, Good) { MeasurePeaks(info); }
                TYPED_TEST(Foo, Fine) { if (x) { y(); } }
                TEST_P(Bar, AlsoBad) { StreamGate gate; }
                """))
            problems = check_test_labels.timing_outside_timing_suites(tmp)
        self.assertEqual(len(problems), 2, problems)
        self.assertIn("GpuResources.Bad calls TimeGpu", problems[0])
        self.assertIn("Bar.AlsoBad calls StreamGate", problems[1])

    def test_a_free_memory_check_outside_a_largest_suite_is_a_problem(self):
        with tempfile.TemporaryDirectory() as tmp:
            (pathlib.Path(tmp) / "x_test.cu").write_text(textwrap.dedent("""\
                TEST(SortBig, Bad) { cudaMemGetInfo(&free_bytes, &total); }
                TEST(SortLargest, Good) { cudaMemGetInfo(&free_bytes, &total); }
                TEST(SortTiming, AlsoAlone) { cudaMemGetInfo(&free_bytes, &total); }
                """))
            problems = check_test_labels.timing_outside_timing_suites(tmp)
        self.assertEqual(len(problems), 1, problems)
        self.assertIn("SortBig.Bad calls cudaMemGetInfo", problems[0])
        self.assertTrue(check_test_labels.LARGEST_TEST.match("Ch03/SortLargest.X"))
        self.assertFalse(check_test_labels.LARGEST_TEST.match("Planning.TheLargestTile"))

    def test_binaries_of_another_configuration_are_left_out(self):
        with tempfile.TemporaryDirectory() as tmp:
            self.assertIsNone(check_test_labels.configured_targets(tmp))
            (pathlib.Path(tmp) / "CMakeFiles").mkdir()
            (pathlib.Path(tmp) / "CMakeFiles" / "TargetDirectories.txt").write_text(
                f"{tmp}/tests/CMakeFiles/ch03_tests.dir\n{tmp}/CMakeFiles/staged_common.dir\n")
            self.assertEqual(check_test_labels.configured_targets(tmp),
                             {"ch03_tests", "staged_common"})

    def test_names_of_timing_suites(self):
        for name in ("GpuTiming.X", "Prefix/MeasuredTiming.X/param", "MinMaxTiming.X<float>"):
            self.assertTrue(check_test_labels.TIMING_TEST.match(name), name)
        for name in ("TimingOptions.GateIsOnByDefault", "GpuResources.Timing", "Ch04Bench.X"):
            self.assertFalse(check_test_labels.TIMING_TEST.match(name), name)


class SanitizeArgs(unittest.TestCase):
    """check_sanitize_args.py: what a line may hold, and what must exist for it."""

    def test_tags_environment_program_arguments_and_input(self):
        tools, alone, program, args, stdin, problems = check_sanitize_args.parse(
            "@alone @tools=memcheck,initcheck STAGED_X=1 ch03_optimized --n 5 < data/in.txt")
        self.assertEqual((tools, alone, program, args, stdin, problems),
                         (["memcheck", "initcheck"], True, "ch03_optimized", ["--n", "5"],
                          "data/in.txt", []))
        tools, alone, program, _, _, problems = check_sanitize_args.parse("ch01_naive --n 3")
        self.assertEqual((len(tools), alone, program, problems), (4, False, "ch01_naive", []))

    def test_wrong_lines_are_problems(self):
        for line, problem in (("@alon ch01_naive", "unknown tag @alon"),
                              ("@tools=memchek ch01_naive", "unknown tool(s) memchek"),
                              ("@alone @alone ch01_naive", "tag @alone given twice"),
                              ("@alone=yes ch01_naive", "unknown tag @alone=yes"),
                              ("@alone X=1", "no program"),
                              ("ch01_naive <", "'<' without a file")):
            problems = check_sanitize_args.parse(line)[5]
            self.assertTrue(any(problem in p for p in problems), (line, problems))

    def test_missing_programs_files_and_empty_filters_are_problems(self):
        with tempfile.TemporaryDirectory() as tmp:
            tmp = pathlib.Path(tmp)
            (tmp / "bin").mkdir()
            (tmp / "tests").mkdir()
            (tmp / "bin" / "ch01_naive").write_text("#!/bin/sh\n")
            lister = tmp / "tests" / "ch01_tests"
            lister.write_text(textwrap.dedent("""\
                #!/bin/sh
                case "$2" in --gtest_filter=Suite.*) printf 'Suite.\\n  One\\n' ;; esac
                """))
            for exe in (tmp / "bin" / "ch01_naive", lister):
                exe.chmod(0o755)
            args = tmp / "sanitize.args"
            args.write_text(textwrap.dedent("""\
                # a comment
                ch01_naive --n 5
                tests/ch01_tests --gtest_filter=Suite.*
                tests/ch01_tests --gtest_filter=Nothing.*
                ch01_optimized --n 5
                ch01_naive < no/such/file
                """))
            problems = check_sanitize_args.check_file(str(args), str(tmp), tmp)
        self.assertEqual(len(problems), 3, problems)
        self.assertIn(":4: the filter selects no test of tests/ch01_tests", problems[0])
        self.assertIn(":5: no program", problems[1])
        self.assertIn(":6: no input file no/such/file", problems[2])


class TestShOptions(unittest.TestCase):
    """test.sh refuses what it does not know, with exit 2 and its usage line, before it installs,
    configures or builds anything."""

    def run_test_sh(self, *args):
        script = SCRIPTS / "test.sh"
        return subprocess.run(["bash", str(script), *args], capture_output=True, text=True,
                              timeout=60)

    def test_unknown_options_and_missing_values_are_usage_errors(self):
        for args in (["--bogus"], ["--label", "host"], ["-L"], ["-R"], ["--junit"],
                     ["--chapter"], ["-j", "4"], ["-R", "--chapter"]):
            r = self.run_test_sh(*args)
            self.assertEqual(r.returncode, 2, args)
            self.assertIn("Usage: scripts/test.sh", r.stderr, args)
            self.assertNotIn("building", r.stdout, args)

    def test_help(self):
        r = self.run_test_sh("--help")
        self.assertEqual(r.returncode, 0)
        self.assertIn("-R, -E, -L, -LE", r.stdout)


class ScriptUsage(unittest.TestCase):
    """docs.sh and gpu_suite.sh refuse what they do not know (exit 2) before they install,
    build or look for a GPU; configure refuses an architecture it cannot build with one plain
    message, before the compiler is tried."""

    def run_script(self, *args):
        return subprocess.run(["bash", str(ROOT / "scripts" / args[0]), *args[1:]],
                              capture_output=True, text=True, timeout=60)

    def test_docs_sh(self):
        for args in (["--bogus"], ["a", "b"]):
            r = self.run_script("docs.sh", *args)
            self.assertEqual(r.returncode, 2, args)
            self.assertIn("Usage: scripts/docs.sh", r.stderr, args)

    def test_gpu_suite_sh(self):
        for args in ([], ["--bogus"], ["out", "03_no_such_chapter"]):
            r = self.run_script("gpu_suite.sh", *args)
            self.assertEqual(r.returncode, 2, args)
            self.assertIn("usage: scripts/gpu_suite.sh", r.stderr, args)

    def test_profile_names_are_checked_before_a_build(self):
        r = subprocess.run(["bash", str(ROOT / "scripts" / "gpu_suite.sh"), "out"],
                           capture_output=True, text=True, timeout=60,
                           env={**os.environ, "STAGED_DEVICE_PROFILES": "t4 rtx9999"})
        self.assertEqual(r.returncode, 2)
        self.assertIn("no profile 'rtx9999'", r.stderr)
        self.assertIn("usage: scripts/gpu_suite.sh", r.stderr)

    def test_profile_tests_sh(self):
        r = self.run_script("profile_tests.sh", "--names", "all")
        self.assertEqual(r.returncode, 0)
        names = r.stdout.split()
        for name in ("t4", "rtx2080", "rtx3060", "rtx3060-laptop", "rtx4060-laptop", "rtx4090",
                     "l4", "a10g", "a100", "h100", "h200", "rtx5090"):
            self.assertIn(name, names)
        self.assertEqual(len(names), len(set(names)))
        with tempfile.TemporaryDirectory() as tmp:
            for args, message in ((["--names", "t4", "x"], "no profile 'x'"),
                                  (["--names"], "needs a profile"),
                                  ([tmp, tmp, "t4"], "holds no tests"),
                                  ([tmp, "t4"], "are needed")):
                r = self.run_script("profile_tests.sh", *args)
                self.assertEqual(r.returncode, 2, args)
                self.assertIn(message, r.stderr, args)
                self.assertIn("usage: scripts/profile_tests.sh", r.stderr, args)

    def test_profile_tests_runs_every_test_in_two_rounds_and_fails_a_failing_profile(self):
        if subprocess.run(["which", "ctest"], capture_output=True).returncode != 0:
            self.skipTest("no ctest")
        with tempfile.TemporaryDirectory() as tmp:
            build, out = pathlib.Path(tmp) / "b", pathlib.Path(tmp) / "o"
            build.mkdir()
            # Each test prints the profile it ran under; one fails under rtx2080 only.
            (build / "CTestTestfile.cmake").write_text(textwrap.dedent("""\
                add_test([=[Plan.Fits]=] sh -c "echo profile=$STAGED_DEVICE_PROFILE")
                add_test([=[Plan.FailsOnRtx2080]=] sh -c "test $STAGED_DEVICE_PROFILE != rtx2080")
                add_test([=[GpuTiming.Alone]=] sh -c "echo profile=$STAGED_DEVICE_PROFILE")
                set_tests_properties([=[GpuTiming.Alone]=] PROPERTIES RUN_SERIAL TRUE)
                """))
            r = subprocess.run(["bash", str(ROOT / "scripts" / "profile_tests.sh"), str(build),
                                str(out), "t4", "rtx2080"], capture_output=True, text=True,
                               timeout=120, env={**os.environ, "STAGED_PROFILE_JOBS": "2"})
            logs = out / "logs"
            first = (logs / "ctest_t4.log").read_text()
            alone = (logs / "ctest_t4_alone.log").read_text()
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertRegex(r.stdout, r"ctest, profile t4 +ok: tests: 3 passed, 0 failed")
        self.assertRegex(r.stdout, r"ctest, profile rtx2080 +FAIL: tests: 2 passed, 1 failed")
        self.assertIn("Plan.FailsOnRtx2080", r.stdout)
        self.assertIn("Plan.Fits", first)
        self.assertNotIn("GpuTiming.Alone", first)
        self.assertIn("GpuTiming.Alone", alone)
        self.assertNotIn("Plan.Fits", alone)

    def test_the_tests_profile_tests_runs_alone_are_the_timing_and_largest_suites(self):
        alone = check_test_labels.ALONE_LINE.search(
            (ROOT / "scripts" / "profile_tests.sh").read_text())
        self.assertIsNotNone(alone)
        alone = re.compile(alone.group(1))
        for name in ("GpuTiming.X", "Prefix/MeasuredTiming.X/param", "SortLargest.TwoTo32",
                     "Ch03/SortLargest.X"):
            self.assertTrue(alone.search(name), name)
        for name in ("TimingOptions.GateIsOnByDefault", "Planning.TheLargestTile",
                     "Ch02/Scan.X/Largest.5", "GpuResources.Timing"):
            self.assertFalse(alone.search(name), name)

    def test_gpu_suite_runs_no_sanitizer_job_from_an_empty_list(self):
        # GNU xargs runs its command once on empty input unless told -r: a chapter without
        # @alone lines would then start a sanitizer run with no program.
        text = (ROOT / "scripts" / "gpu_suite.sh").read_text()
        calls = re.findall(r"^\s*xargs\b.*$", text, re.M)
        self.assertEqual(len(calls), 2, calls)
        for call in calls:
            self.assertRegex(call, r"^\s*xargs -r ", call)

    def test_configure_refuses_architectures_it_cannot_build(self):
        if subprocess.run(["which", "cmake"], capture_output=True).returncode != 0:
            self.skipTest("no cmake")
        cases = {"70": "sm_75 (Turing", "foo": "is not an architecture",
                 "999": "cannot compile for"}
        for arch, message in cases.items():
            with tempfile.TemporaryDirectory() as tmp:
                r = subprocess.run(["cmake", "-S", str(ROOT), "-B", tmp,
                                    f"-DCMAKE_CUDA_ARCHITECTURES={arch}"],
                                   capture_output=True, text=True, timeout=120)
            self.assertNotEqual(r.returncode, 0, arch)
            self.assertIn(message, " ".join(r.stderr.split()), arch)
            self.assertEqual(r.stderr.count("CMake Error"), 1, arch)


class PageCommands(unittest.TestCase):
    def test_blocks_inline_spans_and_what_is_not_a_command(self):
        page = textwrap.dedent("""\
            Run `scripts/test.sh --chapter 01` or just `ctest`; see `build/test.log` and
            `ctest -L <folder>`.

            ```sh
            # a comment line
            A=1 scripts/gpu_suite.sh OUTDIR   # with a comment
            compute-sanitizer --tool memcheck \\
                build/bin/ch01_naive --n 5
            scripts/test.sh --chapter 01
            ```

            ```cuda
            int main() {}
            ```
            """)
        self.assertEqual(check_page_commands.extract(page),
                         ["scripts/test.sh --chapter 01", "A=1 scripts/gpu_suite.sh OUTDIR",
                          "compute-sanitizer --tool memcheck build/bin/ch01_naive --n 5"])

    def test_a_command_for_more_gpus_than_the_machine_has_is_skipped(self):
        command = "build/bin/no_such_program --gpus 2 --n 256M"
        ok, what = check_page_commands.run(command, has_gpu=True, gpus=1)
        self.assertTrue(ok, what)
        self.assertIn("needs 2 GPUs; this machine has 1", what)
        ok, what = check_page_commands.run(command, has_gpu=True, gpus=2)  # runs, and fails
        self.assertFalse(ok, what)

    def test_without_the_sanitizer_or_ncu_its_target_runs(self):
        self.assertEqual(check_page_commands.without_wrapper(
            "X=0 compute-sanitizer --tool racecheck --print-limit=20 build/bin/a --n 5"),
            "X=0 build/bin/a --n 5")
        self.assertEqual(check_page_commands.without_wrapper(
            "ncu --metrics a.sum,b.sum -k regex:MinMax build/bin/a --n 2^28", "ncu"),
            "build/bin/a --n '2^28'")
        self.assertEqual(check_page_commands.without_wrapper(
            "nsys profile -o ch05 build/bin/ch05_study", "nsys"), "build/bin/ch05_study")
        self.assertEqual(check_page_commands.without_wrapper("ncu -k regex:Batch", "ncu"), "")

    def test_a_selector_alone_runs_its_chapters_tests(self):
        page = textwrap.dedent("""\
            1. Exercise. *Tests:* `-R Tiled16`, then `-R "SplitK|Splitk"` (`-R X` again).
            Build one with `cmake --build build --target chNN_optimized`, or see `-L <folder>`.
            """)
        self.assertEqual(
            check_page_commands.extract(page, "chapters/04_matmul_global_vs_shared/README.md"),
            ["scripts/test.sh --chapter 04 -R Tiled16",
             'scripts/test.sh --chapter 04 -R "SplitK|Splitk"',
             "scripts/test.sh --chapter 04 -R X"])
        self.assertEqual(check_page_commands.extract("`-L host`", "docs/pages/instructors.md"),
                         ["scripts/test.sh -L host"])

    def test_what_a_command_changes_in_the_tree_is_put_back(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = pathlib.Path(tmp)
            git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
            subprocess.run(["git", "init", "-q"], cwd=root, check=True)
            (root / ".gitignore").write_text("build/\n")
            (root / "plot.svg").write_text("committed")
            subprocess.run(git + ["add", "."], cwd=root, check=True)
            subprocess.run(git + ["commit", "-qm", "x"], cwd=root, check=True)
            before = check_page_commands.tree_state(root)
            (root / "plot.svg").write_text("redrawn")
            (root / "r.xml").write_text("report")
            (root / "build").mkdir()
            (root / "build" / "kept").write_text("a build output")
            self.assertEqual(check_page_commands.restore(root, before), ["plot.svg", "r.xml"])
            self.assertEqual((root / "plot.svg").read_text(), "committed")
            self.assertFalse((root / "r.xml").exists())
            self.assertTrue((root / "build" / "kept").exists())


if __name__ == "__main__":
    unittest.main()
