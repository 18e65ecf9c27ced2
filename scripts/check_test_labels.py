#!/usr/bin/env python3
"""Checks that every GoogleTest test is registered with ctest the way the suite promises.

ctest runs GoogleTest tests in batches (cmake/gtest_batches.cmake): each ctest test runs one
process with `--gtest_filter=a:b:...`. For each GoogleTest executable in BUILD/tests (chNN_tests,
common_tests, ...), every test it lists (`--gtest_list_tests`) must be in exactly one batch of
that executable, and each batch must carry its chapter label (the chapter folder, or `common`),
`gpu` or `host`, SKIP_RETURN_CODE 77 and a TIMEOUT; so `ctest -L <folder>` runs every test of the
chapter's binary. Test names must be readable and stable: no `GetParam()`, no `-byte object`, at
most --max-name characters.
Exit 0 when all hold, 1 otherwise (each problem printed on its own line).

Usage: check_test_labels.py [--build build] [--max-name 80]
"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys

BINARY = re.compile(r"^(ch(\d\d)_(host_)?tests|common_tests|common_gpu_tests|common_device_tests)$")


def gtest_names(exe):
    """The tests @p exe lists, as --gtest_filter names them (Prefix/Suite/0.Test for types)."""
    out = subprocess.run([exe, "--gtest_list_tests"], check=True, capture_output=True,
                         text=True).stdout
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


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--max-name", type=int, default=80)
    args = ap.parse_args()
    chapters = {d[:2]: d for d in os.listdir("chapters") if re.match(r"^\d\d_", d)}
    tests = ctest_tests(args.build)
    problems = []
    for name in tests:
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
    for exe in sorted(os.listdir(tests_dir)):
        m = BINARY.match(exe)
        if not m:
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
    for p in problems:
        print(p)
    if checked == 0:
        print(f"no GoogleTest executables found in {tests_dir}")
        return 1
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
