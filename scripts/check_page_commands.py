#!/usr/bin/env python3
"""Runs every command a page tells its reader to run, from the repository root, and fails when
one of them does not do what the page says.

The commands are the lines of the page's ```sh blocks (a line ending in a backslash continues on
the next; a trailing "# comment" is dropped) and the inline code spans that start with a program
of the project or its tools (scripts/..., build/bin/..., build/tests/..., ctest, cmake,
compute-sanitizer, or VAR=value words before one of these) and give it arguments (a tool's bare
name, or a pattern with a <placeholder>, is not a command). Each distinct command runs once,
with bash, and must

- exit 0, or 77 where it may need a GPU and this machine has none
  (`build/bin/staged_device_query` says which): executables and test programs in build/,
  compute-sanitizer, scripts/gpu_suite.sh and scripts/tour.sh may;
- not report that no test matched ("No tests were found", or GoogleTest's "no test matches"),
  whatever its exit code.

OUTDIR in a command stands for a fresh temporary folder. Files a command leaves in the repository
root (a --junit report, say) are removed afterwards; folders (a build) stay. Where
compute-sanitizer is not installed, the command it would run (its target and the target's
arguments) runs alone instead, so that the target and its flags are still checked, and the report
says so.

--skip REGEX leaves out the commands it matches (listed as skipped): on a GPU machine, for
example, `--skip gpu_suite` spares the full GPU suite's runs.

Usage: check_page_commands.py PAGE [--build build] [--list] [--skip REGEX]
       check_page_commands.py --self-test
Exit: 0 every command did as the page says, 1 otherwise, 2 bad usage.
"""
import argparse
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
PROGRAM = r"(?:scripts/[^\s`]+|build/bin/[^\s`]+|build/tests/[^\s`]+|ctest|cmake|compute-sanitizer)"
ASSIGNMENTS = r"(?:[A-Z_][A-Z0-9_]*=[^\s`]*\s+)*"
# An inline span is a command when it gives arguments and no <placeholder>: `ctest` alone names
# the tool, `ctest -L <folder>` is a pattern.
INLINE_COMMAND = re.compile(r"`(" + ASSIGNMENTS + PROGRAM + r"\s[^`<>]+)`")
NEEDS_GPU = re.compile(r"(^|\s)(build/bin/|build/tests/|compute-sanitizer\s|scripts/gpu_suite\.sh"
                       r"|scripts/tour\.sh)")
NO_TESTS = re.compile(r"No tests were found|no test matches --gtest_filter")


def extract(markdown):
    """The commands of @p markdown, in order, each once."""
    commands = []
    in_sh = False
    pending = ""
    for line in markdown.splitlines():
        stripped = line.strip()
        if stripped.startswith("```"):
            in_sh = not in_sh and stripped in ("```sh", "```bash", "```shell")
            pending = ""
            continue
        if in_sh:
            if pending == "" and (not stripped or stripped.startswith("#")):
                continue
            text = pending + stripped
            if text.endswith("\\"):
                pending = text[:-1].rstrip() + " "
                continue
            pending = ""
            commands.append(re.sub(r"\s+#\s.*$", "", text).strip())
        else:
            commands += [m.group(1).strip() for m in INLINE_COMMAND.finditer(line)]
    seen = set()
    return [c for c in commands if not (c in seen or seen.add(c))]


def without_sanitizer(command):
    """@p command with `compute-sanitizer` and its options taken out (its target stays)."""
    words = shlex.split(command)
    at = words.index("compute-sanitizer")
    rest = words[at + 1:]
    while rest and rest[0].startswith("-"):
        rest = rest[1:] if "=" in rest[0] else rest[2:]
    return shlex.join(words[:at] + rest)


def gpu_here(build):
    """Whether this machine has a usable GPU (staged_device_query exits 77 where not)."""
    query = ROOT / build / "bin" / "staged_device_query"
    if not query.exists():
        return False
    return subprocess.run([str(query)], capture_output=True).returncode != 77


def run(command, has_gpu, workdir=ROOT):
    """Runs @p command; returns (ok, what happened)."""
    note = ""
    if "compute-sanitizer" in command and shutil.which("compute-sanitizer") is None:
        command = without_sanitizer(command)
        note = " (compute-sanitizer is not installed: ran its target alone)"
    with tempfile.TemporaryDirectory() as outdir:
        before = set(os.listdir(workdir))
        concrete = re.sub(r"\bOUTDIR\b", outdir, command)
        done = subprocess.run(["bash", "-c", concrete], cwd=workdir, capture_output=True,
                              text=True, stdin=subprocess.DEVNULL)
        for name in set(os.listdir(workdir)) - before:
            path = pathlib.Path(workdir) / name
            if path.is_file():  # a report the command wrote; a build folder stays
                path.unlink()
    output = done.stdout + done.stderr
    allowed = {0} if has_gpu or not NEEDS_GPU.search(command) else {0, 77}
    if NO_TESTS.search(output):
        return False, f"exit {done.returncode}, but no test matched{note}"
    if done.returncode not in allowed:
        tail = "\n".join("      " + l for l in output.strip().splitlines()[-8:])
        return False, f"exit {done.returncode}, expected {sorted(allowed)}{note}\n{tail}"
    return True, f"exit {done.returncode}{note}"


def check(page, build, list_only=False, skip=None):
    """Runs the commands of @p page (but those @p skip matches); returns the number that failed."""
    commands = extract(pathlib.Path(page).read_text())
    if list_only:
        print("\n".join(commands))
        return 0
    has_gpu = gpu_here(build)
    print(f"check_page_commands: {page}: {len(commands)} commands, "
          f"{'a GPU' if has_gpu else 'no GPU'} here")
    failed = 0
    for command in commands:
        if skip and re.search(skip, command):
            print(f"  skip {command}: --skip {skip}")
            continue
        ok, what = run(command, has_gpu)
        print(f"  {'ok  ' if ok else 'FAIL'} {command}: {what}")
        failed += not ok
    print(f"check_page_commands: {failed} of {len(commands)} failed")
    return failed


def self_test(build):
    """A page of right and wrong commands: each wrong one must fail, each right one pass."""
    tests = ROOT / build / "tests" / "common_tests"
    cases = [
        ("true", True),
        ("false", False),
        ("echo 'No tests were found!!!'", False),
        (f"ctest --test-dir {build} -R NoSuchTestAnywhere", False),
        (f"{build}/tests/common_tests --gtest_filter=GenerateTyped.SortedAndReverseAreMonotone",
         False),
        (f"{build}/tests/common_tests --gtest_filter='GenerateTyped/*.SortedAndReverseAreMonotone'",
         True),
    ]
    page = "```sh\n" + "\n".join(c for c, _ in cases) + "\n```\n"
    listed = extract(page + "Inline: `ctest --test-dir build -L host`, `build/test.log`, "
                     "`build/bin/` and `ctest`.\n")
    failures = 0
    if listed != [c for c, _ in cases] + ["ctest --test-dir build -L host"]:
        print(f"self-test: extracted {listed}")
        failures += 1
    if without_sanitizer("A=1 compute-sanitizer --tool racecheck --error-exitcode 99 x --n 5") \
            != "A=1 x --n 5":
        print("self-test: compute-sanitizer's options are not taken out")
        failures += 1
    for command, want in cases:
        if ("common_tests" in command or "ctest" in command) and not tests.exists():
            print(f"self-test: {command}: not run ({tests} is not built)")
            continue
        ok, what = run(command, has_gpu=False)
        right = ok == want
        failures += not right
        print(f"self-test: {command}: {'passes' if ok else 'fails'} "
              f"({'as it should' if right else 'WRONG'}; {what.splitlines()[0]})")
    return 1 if failures else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("page", nargs="?", help="the Markdown page")
    ap.add_argument("--build", default="build", help="the build directory (relative to the root)")
    ap.add_argument("--list", action="store_true", help="only print the commands found")
    ap.add_argument("--skip", help="leave out the commands this regular expression matches")
    ap.add_argument("--self-test", action="store_true",
                    help="check the checker: wrong commands must fail, right ones pass")
    args = ap.parse_args()
    if args.self_test:
        return self_test(args.build)
    if not args.page:
        ap.error("a page is needed (or --self-test)")
    return 1 if check(args.page, args.build, args.list, args.skip) else 0


if __name__ == "__main__":
    sys.exit(main())
