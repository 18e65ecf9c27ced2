#!/usr/bin/env python3
"""Summarise a ctest run: one table per chapter label and one plain last line.

Reads the JUnit XML that `ctest --output-junit` wrote and the labels of every test
(`ctest --show-only=json-v1`), and prints

    chapter                       passed  failed  skipped
    common                            95       0        0
    01_minmax_reduction                4       0       51
    ...
    tests: P passed, 0 failed, S skipped (no GPU)

Failed tests are listed by name above the table; the names of skipped tests go to --skip-log.
With --name-skips, the JUnit file is rewritten so that each skip says why in words a grader
reads: ctest writes only how it recognised the skip ("SKIP_REGULAR_EXPRESSION_MATCHED",
"SKIP_RETURN_CODE=77"); the test's own output says "no GPU" or, for example, "needs about 2.2 GB
of free device memory".
With --times-log, a file receives where the time went: the run's wall time, the sum of the
tests' times per label (gpu, host, timing), and the slowest tests.
Exit status: 0 when nothing failed and at least one test ran; 77 when, with --no-gpu, every test
skipped (each needs the GPU this machine lacks); 1 otherwise.

Usage: ctest_summary.py --build BUILD_DIR --junit FILE [--skip-log FILE] [--no-gpu]
                        [--name-skips] [--times-log FILE]
"""
import argparse
import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

CHAPTER = re.compile(r"^(\d\d_[a-z0-9_]+|common)$")


def labels_by_test(build):
    out = subprocess.run(["ctest", "--test-dir", build, "--show-only=json-v1"],
                         check=True, capture_output=True, text=True).stdout
    labels = {}
    for test in json.loads(out).get("tests", []):
        props = {p["name"]: p["value"] for p in test.get("properties", [])}
        value = props.get("LABELS", [])
        labels[test["name"]] = value if isinstance(value, list) else [value]
    return labels


CTEST_SKIP_MESSAGES = ("SKIP_REGULAR_EXPRESSION_MATCHED", "SKIP_RETURN_CODE=77")
NO_GPU = re.compile(r"no usable CUDA GPU|no NVIDIA GPU found")
GTEST_SKIP = re.compile(r": Skipped\n(.+)")       # GTEST_SKIP() << "message"
PROGRAM_SKIP = re.compile(r"skipped: (.+)")       # an executable that exits 77


def skip_reason(output):
    """Why a test skipped, from its output: "no GPU", a GTEST_SKIP message, or None."""
    if NO_GPU.search(output):
        return "no GPU"
    for pattern in (GTEST_SKIP, PROGRAM_SKIP):
        m = pattern.search(output)
        if m and m.group(1).strip():
            return m.group(1).strip()
    return None


def name_skips(tree):
    """Replaces ctest's skip messages in @p tree by the reasons the tests gave; returns how many."""
    named = 0
    for case in tree.getroot().iter("testcase"):
        skipped = case.find("skipped")
        if skipped is None or skipped.get("message") not in CTEST_SKIP_MESSAGES:
            continue
        reason = skip_reason(case.findtext("system-out") or "")
        if reason:
            skipped.set("message", reason)
            named += 1
    return named


def times_report(root, labels, slowest=25):
    """Lines saying where a run's time went: wall time, test time per label, slowest tests."""
    cases = [(float(c.get("time") or 0), c.get("name")) for c in root.iter("testcase")]
    lines = [f"wall time of the run: {float(root.get('time') or 0):.0f} s; "
             f"sum of the tests' times: {sum(t for t, _ in cases):.0f} s over {len(cases)} tests"]
    for label in ("gpu", "host", "timing"):
        chosen = [t for t, n in cases if label in labels.get(n, [])]
        lines.append(f"  label {label}: {len(chosen)} tests, {sum(chosen):.0f} s"
                     + (f", {sum(chosen) / len(chosen):.2f} s each on average" if chosen else ""))
    lines.append(f"slowest {min(slowest, len(cases))} tests:")
    lines += [f"  {t:8.2f} s  {n}" for t, n in sorted(cases, reverse=True)[:slowest]]
    return lines


def outcome(case):
    if case.find("failure") is not None or case.get("status") == "fail":
        return "failed"
    if case.find("skipped") is not None or case.get("status") in ("notrun", "disabled"):
        return "skipped"
    return "passed"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", required=True, help="the build directory ctest ran in")
    ap.add_argument("--junit", required=True, help="JUnit XML written by ctest --output-junit")
    ap.add_argument("--skip-log", help="file that receives the names of skipped tests")
    ap.add_argument("--no-gpu", action="store_true", help="say that skips mean: no GPU here")
    ap.add_argument("--name-skips", action="store_true",
                    help="rewrite the JUnit file: each skip's message says why the test skipped")
    ap.add_argument("--times-log", help="file that receives where the run's time went")
    args = ap.parse_args()

    labels = labels_by_test(args.build)
    tree = ET.parse(args.junit)
    if args.name_skips:
        name_skips(tree)
        tree.write(args.junit, encoding="UTF-8", xml_declaration=True)
    if args.times_log:
        with open(args.times_log, "w") as f:
            f.writelines(line + "\n" for line in times_report(tree.getroot(), labels))
    cases = tree.getroot().iter("testcase")
    counts = {}
    failed, skipped = [], []
    for case in cases:
        name = case.get("name")
        chapter = next((l for l in labels.get(name, []) if CHAPTER.match(l)), "(no chapter)")
        result = outcome(case)
        counts.setdefault(chapter, {"passed": 0, "failed": 0, "skipped": 0})[result] += 1
        if result == "failed":
            failed.append(name)
        elif result == "skipped":
            skipped.append(name)

    if args.skip_log:
        with open(args.skip_log, "w") as f:
            f.writelines(n + "\n" for n in skipped)
    if failed:
        print("failed tests:")
        for name in failed:
            print("  " + name)
        print()

    order = sorted(counts, key=lambda c: (c != "common", c))
    width = max([len("chapter")] + [len(c) for c in order])
    print(f"{'chapter':<{width}}  {'passed':>6}  {'failed':>6}  {'skipped':>7}")
    for c in order:
        k = counts[c]
        print(f"{c:<{width}}  {k['passed']:>6}  {k['failed']:>6}  {k['skipped']:>7}")
    total = {r: sum(k[r] for k in counts.values()) for r in ("passed", "failed", "skipped")}
    why = " (no GPU)" if args.no_gpu and total["skipped"] else ""
    if args.skip_log and total["skipped"]:
        print(f"skipped test names: {args.skip_log}")
    print(f"tests: {total['passed']} passed, {total['failed']} failed, "
          f"{total['skipped']} skipped{why}")
    return exit_status(total, args.no_gpu)


def exit_status(total, no_gpu):
    """0 when nothing failed and a test ran; 77 when every test skipped for want of a GPU."""
    if total["failed"]:
        return 1
    if total["passed"]:
        return 0
    return 77 if no_gpu and total["skipped"] else 1


if __name__ == "__main__":
    sys.exit(main())
