#!/usr/bin/env python3
"""Summarise a ctest run: one table per chapter label and one plain last line.

Reads the JUnit XML that `ctest --output-junit` wrote and the labels of every test
(`ctest --show-only=json-v1`), and prints

    chapter                       passed  failed  skipped
    common                            95       0        0
    01_minmax_reduction                4       0       51
    ...
    skipped: S no GPU
    tests: P passed, 0 failed, S skipped (no GPU)

The counts are of GoogleTest tests: a batch (one ctest test running several, see
cmake/gtest_batches.cmake) is split into its tests by its output, so a batch in which some tests
skip counts them as skipped, and the tests a crash left unrun count as failed ("not run").
Failed tests are listed by name above the table; the skips are counted by reason; the names of
skipped tests go to --skip-log. With --name-skips, the JUnit file is rewritten the same way
(one testcase per GoogleTest test) and each skip says why in words a grader reads: ctest writes only how it recognised the skip ("SKIP_REGULAR_EXPRESSION_MATCHED",
"SKIP_RETURN_CODE=77"); the test's own output says "no GPU" or, for example, "needs about 2.2 GB
of free device memory".
With --times-log, a file receives where the time went: the run's wall time, the sum of the
tests' times per label (gpu, host, timing), and the slowest tests.
Exit status: 0 when nothing failed and at least one test ran; 77 when, with --no-gpu, every test
skipped (each needs the GPU this machine lacks); 1 otherwise.

Several --junit files (the rounds of one run, as scripts/profile_tests.sh writes them) are
summed as one run.

Usage: ctest_summary.py --build BUILD_DIR --junit FILE [--junit FILE ...] [--skip-log FILE]
                        [--no-gpu] [--name-skips] [--times-log FILE]
"""
import argparse
import collections
import fnmatch
import json
import os
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


TRUNCATED = "[This part of the test output was removed since it exceeds the threshold"
FILTER_NOTE = re.compile(r"^Note: Google Test filter = (\S+)", re.M)
GTEST_RESULT = re.compile(r"^\[ +(RUN|OK|SKIPPED|FAILED) +\] (\S+?)(?:,| \(|$)")


def batch_results(output):
    """[(GoogleTest test, outcome, reason, seconds, its output)] of the tests a batch's filter
    names (in its order), read from the batch's @p output; None where the output is not a
    GoogleTest run. A test that started but did not finish failed ("the process ended during
    it"); one that never started failed as "not run" (the batch's process ended before it)."""
    note = FILTER_NOTE.search(output)
    if not note or TRUNCATED in output:  # a cut output cannot say which tests ran
        return None
    started, results = {}, {}
    current, lines = None, []
    for line in output[note.end():].splitlines():
        m = GTEST_RESULT.match(line)
        if m and m.group(1) == "RUN":
            current, lines = m.group(2), []
            started[current] = lines
            continue
        if m and current is not None and m.group(2) == current:
            text = "\n".join(lines)
            ms = re.search(r"\((\d+) ms\)", line)
            seconds = int(ms.group(1)) / 1000 if ms else 0.0
            outcome = {"OK": "passed", "SKIPPED": "skipped", "FAILED": "failed"}[m.group(1)]
            reason = skip_reason(text + "\n") if outcome == "skipped" else None
            if outcome == "failed":
                reason = next((l.strip() for l in lines if l.strip()), "failed")
            results[current] = (outcome, reason, seconds, text)
            current = None
            continue
        if current is not None:
            lines.append(line)
    found = []
    last_started = None
    for pattern in note.group(1).split(":"):
        names = [n for n in started if fnmatch.fnmatchcase(n, pattern)] or [pattern]
        for name in names:
            if name in results:
                found.append((name, *results[name]))
            elif name in started:
                last_started = name
                found.append((name, "failed", "the process ended during this test", 0.0,
                              "\n".join(started[name])))
            else:
                after = f" (after {last_started})" if last_started else ""
                found.append((name, "failed", f"not run: its batch's process ended before it"
                              f"{after}", 0.0, ""))
    return found


def expand_batches(tree):
    """Replaces each batch in @p tree (one ctest test running several GoogleTest tests) by one
    testcase per GoogleTest test, classname the batch's ctest name: each passed, skipped with its
    reason, or failed with its first message line, "the process ended during this test" or
    "not run". Returns the number of batches expanded."""
    expanded = 0
    for suite in tree.getroot().iter("testsuite"):
        for case in list(suite.findall("testcase")):
            results = batch_results(case.findtext("system-out") or "")
            if results is None:
                continue
            batch_skip = case.find("skipped")
            at = list(suite).index(case)
            suite.remove(case)
            for offset, (name, outcome, reason, seconds, text) in enumerate(results):
                if batch_skip is not None and outcome == "failed" and reason.startswith("not"):
                    outcome, reason = "skipped", skip_reason(case.findtext("system-out") or "")
                member = ET.Element("testcase", name=name, classname=case.get("name"),
                                    time=f"{seconds:.3f}",
                                    status={"skipped": "notrun"}.get(outcome, "run"))
                if outcome == "skipped":
                    ET.SubElement(member, "skipped", message=reason or "skipped")
                elif outcome == "failed":
                    ET.SubElement(member, "failure", message=reason)
                ET.SubElement(member, "system-out").text = text
                suite.insert(at + offset, member)
            expanded += 1
    return expanded


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


def load_runs(paths):
    """One JUnit tree of the runs in @p paths: the testcases of each file after the first are
    appended to the first file's testsuite and the wall times added."""
    tree = ET.parse(paths[0])
    root = tree.getroot()
    for path in paths[1:]:
        other = ET.parse(path).getroot()
        root.extend(other.iter("testcase"))
        root.set("time", f"{float(root.get('time') or 0) + float(other.get('time') or 0):g}")
    return tree


def outcome(case):
    if case.find("failure") is not None or case.get("status") == "fail":
        return "failed"
    if case.find("skipped") is not None or case.get("status") in ("notrun", "disabled"):
        return "skipped"
    return "passed"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", required=True, help="the build directory ctest ran in")
    ap.add_argument("--junit", required=True, action="append",
                    help="JUnit XML written by ctest --output-junit (several: one run's rounds)")
    ap.add_argument("--skip-log", help="file that receives the names of skipped tests")
    ap.add_argument("--no-gpu", action="store_true", help="say that skips mean: no GPU here")
    ap.add_argument("--name-skips", action="store_true",
                    help="rewrite the JUnit file: one testcase per GoogleTest test, each skip's "
                         "message saying why the test skipped")
    ap.add_argument("--times-log", help="file that receives where the run's time went")
    args = ap.parse_args()
    if args.name_skips and len(args.junit) > 1:
        ap.error("--name-skips rewrites one JUnit file; give one --junit")
    missing = [p for p in args.junit if not os.path.isfile(p)]
    if missing:
        print(f"ctest_summary: no JUnit file {', '.join(missing)} (ctest did not run or did not "
              "finish)", file=sys.stderr)
        return 1

    labels = labels_by_test(args.build)
    tree = load_runs(args.junit)
    if args.times_log:  # per process: before the batches are split into their tests
        with open(args.times_log, "w") as f:
            f.writelines(line + "\n" for line in times_report(tree.getroot(), labels))
    name_skips(tree)
    expand_batches(tree)
    if args.name_skips:
        tree.write(args.junit[0], encoding="UTF-8", xml_declaration=True)
    counts = {}
    failed, skipped = [], []
    reasons = collections.Counter()
    for case in tree.getroot().iter("testcase"):
        name = case.get("name")
        batch = case.get("classname") or name
        chapter = next((l for l in labels.get(batch, labels.get(name, [])) if CHAPTER.match(l)),
                       "(no chapter)")
        result = outcome(case)
        counts.setdefault(chapter, {"passed": 0, "failed": 0, "skipped": 0})[result] += 1
        if result == "failed":
            message = case.find("failure").get("message", "") if case.find("failure") is not None \
                else ""
            where = f" [{batch}]" if batch != name else ""
            failed.append(f"{name}{where}" + (f": {message}" if message else ""))
        elif result == "skipped":
            skipped.append(name)
            reasons[case.find("skipped").get("message") if case.find("skipped") is not None
                    else "skipped"] += 1

    if args.skip_log:
        with open(args.skip_log, "w") as f:
            f.writelines(n + "\n" for n in skipped)
    if failed:
        print("failed tests:")
        for line in failed:
            print("  " + line)
        print()

    order = sorted(counts, key=lambda c: (c != "common", c))
    width = max([len("chapter")] + [len(c) for c in order])
    print(f"{'chapter':<{width}}  {'passed':>6}  {'failed':>6}  {'skipped':>7}")
    for c in order:
        k = counts[c]
        print(f"{c:<{width}}  {k['passed']:>6}  {k['failed']:>6}  {k['skipped']:>7}")
    total = {r: sum(k[r] for k in counts.values()) for r in ("passed", "failed", "skipped")}
    why = " (no GPU)" if args.no_gpu and total["skipped"] else ""
    if total["skipped"]:
        print("skipped: " + "; ".join(f"{n} {why_}" for why_, n in reasons.most_common()))
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
