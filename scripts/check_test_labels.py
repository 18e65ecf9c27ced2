#!/usr/bin/env python3
"""Checks that every GoogleTest test is registered with ctest the way the suite promises.

ctest runs GoogleTest tests in batches (cmake/gtest_batches.cmake): each ctest test runs one
process with `--gtest_filter=a:b:...`. For each GoogleTest executable in BUILD/tests (chNN_tests,
common_tests, ...), every test it lists (`--gtest_list_tests`) must be in exactly one batch of
that executable, and each batch must carry its chapter label (the chapter folder, or `common`),
`gpu` or `host`, SKIP_RETURN_CODE 77 and a TIMEOUT; so `ctest -L <folder>` runs every test of the
chapter's binary. Test names must be readable and stable: no `GetParam()`, no `-byte object`, at
most --max-name characters.

Tests that time the GPU and assert on the times run alone: their suite's name ends in `Timing`,
and every test of such a suite carries the label `timing` and RUN_SERIAL (no other test does).
In the test sources (tests/), a test body that calls the timer (TimeGpu, TimeGpuInTurn,
RepTimer, GpuTimer, StreamGate, MeasureEmptyLaunchUs, MeasurePeaks, RunCheckTime) must belong to
such a suite, so that a parallel run cannot disturb what it measures. Likewise a test body that
asks for the GPU's free memory (cudaMemGetInfo) to decide whether it can run must belong to a
suite whose name ends in `Largest`, whose tests carry RUN_SERIAL (and not the label timing), so
that other tests' memory cannot turn it into a skip under ctest -j.
Exit 0 when all hold, 1 otherwise (each problem printed on its own line).

Usage: check_test_labels.py [--build build] [--max-name 80] [--sources tests]
"""
import argparse
import collections
import json
import os
import pathlib
import re
import subprocess
import sys

BINARY = re.compile(
    r"^(ch(\d\d)_(host_)?tests|common_tests|common_gpu_tests|common_device_tests)$")
# A discovered test of a *Timing suite: "GpuTiming.X", "Prefix/MeasuredTiming.X/param".
TIMING_TEST = re.compile(r"^([A-Za-z0-9_]+/)?[A-Za-z0-9_]*Timing\.")
# A GoogleTest test definition and its suite.
TEST_MACRO = re.compile(r"^(?:TEST|TEST_F|TEST_P|TYPED_TEST|TYPED_TEST_P)\(\s*(\w+)\s*,\s*(\w+)",
                        re.M)
# A discovered test of a *Largest suite (decides from free memory; runs alone).
LARGEST_TEST = re.compile(r"^([A-Za-z0-9_]+/)?[A-Za-z0-9_]*Largest\.")
# What scripts/profile_tests.sh runs alone (its line alone='...'): it must select exactly the
# tests with RUN_SERIAL.
ALONE_LINE = re.compile(r"^alone='([^']+)'", re.M)
MEMORY_CALL = re.compile(r"\bcudaMemGetInfo\b")
TIMER_CALL = re.compile(r"\b(TimeGpu|TimeGpuInTurn|RepTimer|GpuTimer|StreamGate|"
                        r"MeasureEmptyLaunchUs|MeasurePeaks|RunCheckTime)\b")


def body_of(text, start):
    """The braced body that follows @p start in @p text (to its matching closing brace)."""
    open_at = text.find("{", start)
    if open_at < 0:
        return ""
    depth = 0
    for i in range(open_at, len(text)):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return text[open_at:i + 1]
    return text[open_at:]


def timing_outside_timing_suites(sources):
    """Tests in @p sources whose body calls the timer but whose suite does not end in Timing, or
    asks for free memory but whose suite does not end in Largest."""
    problems = []
    for path in sorted(pathlib.Path(sources).rglob("*")):
        if path.suffix not in (".cu", ".cpp"):
            continue
        text = path.read_text()
        for m in TEST_MACRO.finditer(text):
            body = body_of(text, m.end())
            call = TIMER_CALL.search(body)
            if call and not m.group(1).endswith("Timing"):
                problems.append(f"{path}: {m.group(1)}.{m.group(2)} calls {call.group(1)} but its "
                                "suite does not end in Timing (it would not run alone)")
            memory = MEMORY_CALL.search(body)
            if memory and not m.group(1).endswith(("Largest", "Timing")):
                problems.append(f"{path}: {m.group(1)}.{m.group(2)} calls cudaMemGetInfo but its "
                                "suite does not end in Largest (it would not run alone)")
    return problems


def gtest_names(exe, gtest_filter=None):
    """The tests @p exe lists, as --gtest_filter names them (Prefix/Suite/0.Test for types);
    with @p gtest_filter ("--gtest_filter=..."), those it selects."""
    out = subprocess.run([exe, "--gtest_list_tests"] + ([gtest_filter] if gtest_filter else []),
                         check=True, capture_output=True, text=True).stdout
    names, suite = [], None
    for line in out.splitlines():
        if not line.strip():
            continue
        if not line.startswith(" "):
            suite = line.split()[0]
        else:
            names.append(suite + line.split()[0])
    return names


def ctest_tests(build):
    """{ctest name: (command, properties)} of every test ctest knows in @p build."""
    out = subprocess.run(["ctest", "--test-dir", build, "--show-only=json-v1"], check=True,
                         capture_output=True, text=True).stdout
    tests = {}
    for t in json.loads(out).get("tests", []):
        props = {p["name"]: p["value"] for p in t.get("properties", [])}
        tests[t["name"]] = (t.get("command", []), props)
    return tests


def filter_key(name):
    """A test name as a batch's filter spells it (gtest_batches.cmake writes '-' as '?')."""
    return name.replace("-", "?")


def configured_targets(build):
    """The target names of the build's current configuration (CMake's
    CMakeFiles/TargetDirectories.txt, "<dir>/CMakeFiles/<target>.dir" per line), or None when
    the file is missing."""
    path = os.path.join(build, "CMakeFiles", "TargetDirectories.txt")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return {os.path.basename(line.strip())[:-len(".dir")] for line in f
                if line.strip().endswith(".dir")}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--max-name", type=int, default=80)
    ap.add_argument("--sources", default="tests", help="the test sources to scan for timer calls")
    args = ap.parse_args()
    chapters = {d[:2]: d for d in os.listdir("chapters") if re.match(r"^\d\d_", d)}
    tests = ctest_tests(args.build)
    problems = []
    alone = ALONE_LINE.search(pathlib.Path("scripts/profile_tests.sh").read_text())
    if not alone:
        problems.append("scripts/profile_tests.sh: no line alone='...'")
    alone = re.compile(alone.group(1) if alone else "^$")
    for name, (_, props) in tests.items():
        labels = props.get("LABELS", [])
        labels = labels if isinstance(labels, list) else [labels]
        timing_name = TIMING_TEST.match(name) is not None
        if timing_name and ("timing" not in labels or not props.get("RUN_SERIAL")):
            problems.append(f"{name}: a *Timing suite's test without the label timing and "
                            "RUN_SERIAL")
        largest_name = LARGEST_TEST.match(name) is not None
        if largest_name and ("timing" in labels or not props.get("RUN_SERIAL")):
            problems.append(f"{name}: a *Largest suite's test without RUN_SERIAL, or timed")
        if not timing_name and "timing" in labels:
            problems.append(f"{name}: label timing outside a *Timing suite")
        if not (timing_name or largest_name) and props.get("RUN_SERIAL"):
            problems.append(f"{name}: RUN_SERIAL outside a *Timing or *Largest suite")
        if bool(alone.search(name)) != bool(props.get("RUN_SERIAL")):
            problems.append(f"{name}: scripts/profile_tests.sh runs it "
                            f"{'alone' if alone.search(name) else 'with others'}, yet its "
                            f"RUN_SERIAL is {bool(props.get('RUN_SERIAL'))}")
        if "GetParam()" in name or "-byte object" in name:
            problems.append(f"unstable test name: {name}")
        if len(name) > args.max_name:
            problems.append(f"test name longer than {args.max_name} characters: {name}")
    # Which batch runs each test: "--gtest_filter=a:b:c" of every ctest test, by executable.
    batches = collections.defaultdict(dict)
    for test, (command, props) in tests.items():
        if len(command) == 2 and command[1].startswith("--gtest_filter="):
            exe = os.path.basename(command[0])
            for member in command[1][len("--gtest_filter="):].split(":"):
                batches[exe].setdefault(member, []).append(test)
    checked = 0
    tests_dir = os.path.join(args.build, "tests")
    configured = configured_targets(args.build)
    for exe in sorted(os.listdir(tests_dir)):
        m = BINARY.match(exe)
        if not m:
            continue
        if configured is not None and exe not in configured:
            # Left by an earlier configuration of the same build folder (another chapter list).
            print(f"{exe:<20} not built by this configuration: not checked")
            continue
        label = chapters.get(m.group(2)) if m.group(2) else "common"
        names = gtest_names(os.path.join(tests_dir, exe))
        selected = 0
        for n in names:
            owners = batches[exe].get(filter_key(n), [])
            if len(owners) != 1:
                problems.append(f"{exe}: {n} is in {len(owners)} ctest tests, not one")
                continue
            props = tests[owners[0]][1]
            labels = props.get("LABELS", [])
            labels = labels if isinstance(labels, list) else [labels]
            if label in labels:
                selected += 1
            else:
                problems.append(f"{exe}: {n} lacks the label {label} (has {labels})")
            if not ({"gpu", "host"} & set(labels)):
                problems.append(f"{exe}: {n} has neither the gpu nor the host label")
            if props.get("SKIP_RETURN_CODE") != 77:
                problems.append(f"{exe}: {n} has no SKIP_RETURN_CODE 77")
            if not props.get("TIMEOUT"):
                problems.append(f"{exe}: {n} has no TIMEOUT")
        print(f"{exe:<20} {len(names):4d} tests listed, {selected:4d} run by -L {label}")
        checked += 1
    problems += timing_outside_timing_suites(args.sources)
    timing = sum(1 for n in tests if TIMING_TEST.match(n))
    print(f"{timing} tests time the GPU and run alone (label timing, RUN_SERIAL)")
    largest = sum(1 for n in tests if LARGEST_TEST.match(n))
    print(f"{largest} tests decide from free GPU memory and run alone (RUN_SERIAL)")
    for p in problems:
        print(p)
    if checked == 0:
        print(f"no GoogleTest executables found in {tests_dir}")
        return 1
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
