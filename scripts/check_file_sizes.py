#!/usr/bin/env python3
"""Checks the size limits a staged chapter keeps, so that a reader can hold each file: no file of
a listed chapter folder over MAX_LINES lines, and its page's main path (chapters/NN_topic/
README.md, outside code blocks and comments) within its word budget.

Exit status: 0 within the limits, 1 a file is over one (each printed as FILE: message).
Usage: scripts/check_file_sizes.py | scripts/check_file_sizes.py --self-test
"""
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "docs" / "tools"))
import mdpages  # noqa: E402

MAX_LINES = 400
# Chapter folders held to the limits, and the word budget of each one's page.
CHAPTERS = {"chapters/03_mppsort": 4000}


def tracked(folder):
    """The files git tracks under @p folder (every file when this is not a checkout)."""
    try:
        out = subprocess.run(["git", "ls-files", "-z", folder], cwd=ROOT, check=True,
                             capture_output=True)
        return [ROOT / p for p in out.stdout.decode().split("\0") if p]
    except (OSError, subprocess.CalledProcessError):
        return [p for p in (ROOT / folder).rglob("*") if p.is_file()]


def check(files, page, max_words):
    problems = []
    for path in files:
        lines = path.read_text(errors="replace").count("\n")
        if lines > MAX_LINES:
            problems.append(f"{path}: {lines} lines (at most {MAX_LINES}: split it by idea)")
    if page is not None and page.exists():
        words = mdpages.word_count(page.read_text())
        if words > max_words:
            problems.append(f"{page}: {words} words outside code (at most {max_words} on the "
                            "main path; move the rest to a deeper page)")
    return problems


def self_test():
    with tempfile.TemporaryDirectory() as tmp:
        d = pathlib.Path(tmp)
        short, long_ = d / "a.cu", d / "b.cu"
        short.write_text("x\n" * MAX_LINES)
        long_.write_text("x\n" * (MAX_LINES + 1))
        page = d / "README.md"
        page.write_text("word " * 11 + "\n")
        cases = [("a file at the limit", [short], None, 0),
                 ("a file over it", [long_], None, 1),
                 ("a page over its word budget", [], page, 1),
                 ("a page within it", [], page, 0)]
        failures = 0
        for name, files, p, want in cases:
            got = 1 if check(files, p, 10 if name.endswith("budget") else 100) else 0
            print(f"self-test: {name}: {'fails' if got else 'passes'} "
                  f"({'as it should' if got == want else 'WRONG'})")
            failures += got != want
    return 1 if failures else 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    problems = []
    for folder, max_words in CHAPTERS.items():
        problems += check(tracked(folder), ROOT / folder / "README.md", max_words)
    for p in problems:
        print(p)
    print(f"check_file_sizes: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
