#!/usr/bin/env python3
"""Shows a build's progress in a few lines instead of minutes of silence or pages of commands.

Reads the build's output (Ninja's, through `cmake --build`) on stdin, writes every line to LOG,
and prints one line such as

    build: 45% (68 of 151 steps), 1m12s

when the build starts, then at most every --every seconds while it advances, and a last line when
it ends. Ninja starts each step's line with [n/N]; other lines (warnings, errors) go to the log
only, and the caller shows the errors from there.

Usage: cmake --build ... 2>&1 | build_progress.py LOG [--every SECONDS] [--label build]
Exit status: 0 (the build's own status is the caller's: ${PIPESTATUS[0]} in bash).
"""
import argparse
import re
import sys
import time

STEP = re.compile(r"^\[(\d+)/(\d+)\]")


def progress_line(label, done, total, seconds):
    """The line printed for @p done of @p total steps after @p seconds."""
    minutes, secs = divmod(int(seconds), 60)
    elapsed = f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"
    if total == 0:
        return f"{label}: nothing to do ({elapsed})"
    return f"{label}: {100 * done // total}% ({done} of {total} steps), {elapsed}"


def follow(lines, log, out, every, label, clock=time.monotonic):
    """Copies @p lines to @p log and prints progress to @p out; returns (done, total)."""
    start = clock()
    last_print = None
    done = total = 0
    shown = None
    for line in lines:
        log.write(line)
        m = STEP.match(line)
        if not m:
            continue
        done, total = int(m.group(1)), int(m.group(2))
        now = clock()
        if last_print is None or now - last_print >= every:
            shown = (done, total)
            out.write(progress_line(label, done, total, now - start) + "\n")
            out.flush()
            last_print = now
    if shown != (done, total) or total == 0:
        out.write(progress_line(label, done, total, clock() - start) + "\n")
        out.flush()
    return done, total


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("log", help="file that receives the whole output")
    ap.add_argument("--every", type=float, default=10.0, help="seconds between progress lines")
    ap.add_argument("--label", default="build", help="the word the lines start with")
    args = ap.parse_args()
    with open(args.log, "w") as log:
        follow(sys.stdin, log, sys.stdout, args.every, args.label)
    return 0


if __name__ == "__main__":
    sys.exit(main())
