#!/usr/bin/env python3
"""Checks every line of common/sanitize.args and chapters/*/sanitize.args before a GPU suite
runs them (scripts/gpu_suite.sh reads these files only on a machine with a GPU, after the build
and the tests). A line is: optional tags (`@tools=a,b` with tools from memcheck, racecheck,
synccheck and initcheck; `@alone`; each at most once), optional VAR=value words, then a program
of BUILD/bin or a test binary as a path relative to BUILD (tests/chNN_tests), then its
arguments; `< file` feeds a file of the repository to its stdin. Each program must exist in
BUILD, each `< file` in the repository, and a test binary's --gtest_filter must select at least
one of the tests it lists.
Exit 0 when every line holds, 1 otherwise (each problem on its own line), 2 on bad usage.
Usage: check_sanitize_args.py [--build build]
"""
import argparse
import os
import pathlib
import re
import sys

import check_test_labels

TOOLS = {"memcheck", "racecheck", "synccheck", "initcheck"}
TAG = re.compile(r"^@([a-z]+)(?:=(\S*))?$")
ASSIGNMENT = re.compile(r"^[A-Z_][A-Z0-9_]*=")


def parse(line):
    """(tools, alone, program, args, input file or None, problems) of one sanitize.args line."""
    words = line.split()
    tools, alone, problems = sorted(TOOLS), False, []
    seen = set()
    while words and words[0].startswith("@"):
        word = words.pop(0)
        m = TAG.match(word)
        name = m.group(1) if m else word
        if name in seen:
            problems.append(f"tag @{name} given twice")
        seen.add(name)
        if name == "tools" and m.group(2):
            tools = m.group(2).split(",")
            unknown = [t for t in tools if t not in TOOLS]
            if unknown:
                problems.append(f"unknown tool(s) {', '.join(unknown)} in @tools")
        elif name == "alone" and m.group(2) is None:
            alone = True
        else:
            problems.append(f"unknown tag {word}")
    while words and ASSIGNMENT.match(words[0]):
        words.pop(0)
    if not words:
        return tools, alone, None, [], None, problems + ["no program"]
    program, rest = words[0], words[1:]
    args, stdin = [], None
    while rest:
        word = rest.pop(0)
        if word == "<":
            if not rest:
                problems.append("'<' without a file")
                break
            stdin = rest.pop(0)
        else:
            args.append(word)
    return tools, alone, program, args, stdin, problems


def filter_selects(exe, args):
    """Whether the --gtest_filter among @p args selects a test of @p exe (True without one)."""
    filters = [a for a in args if a.startswith("--gtest_filter=")]
    return not filters or bool(check_test_labels.gtest_names(exe, filters[-1]))


def check_file(path, build, root):
    problems = []
    for number, line in enumerate(pathlib.Path(path).read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        _, _, program, args, stdin, found = parse(line)
        if program is not None:
            exe = os.path.join(build, program if "/" in program else os.path.join("bin", program))
            if not os.access(exe, os.X_OK):
                found.append(f"no program {exe}")
            elif "/" in program and not filter_selects(exe, args):
                found.append(f"the filter selects no test of {program}")
        if stdin is not None and not (root / stdin).is_file():
            found.append(f"no input file {stdin}")
        problems += [f"{path}:{number}: {p}" for p in found]
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    args = ap.parse_args()
    root = pathlib.Path(__file__).resolve().parent.parent
    os.chdir(root)
    files = ["common/sanitize.args"] + sorted(str(p) for p in root.glob("chapters/*/sanitize.args"))
    problems, lines = [], 0
    for f in files:
        f = os.path.relpath(f, root)
        lines += sum(1 for l in open(f) if l.strip() and not l.startswith("#"))
        problems += check_file(f, args.build, root)
    for p in problems:
        print(p)
    print(f"check_sanitize_args: {lines} lines in {len(files)} files, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
