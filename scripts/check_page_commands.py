#!/usr/bin/env python3
"""Runs every command a page tells its reader to run, from the repository root, and fails when
one of them does not do what the page says.

The commands are the lines of the page's ```sh blocks (a line ending in a backslash continues on
the next; a trailing "# comment" is dropped) and the inline code spans that start with a program
of the project or its tools (scripts/..., build/bin/..., build/tests/..., ctest, cmake,
compute-sanitizer, or VAR=value words before one of these) and give it arguments, and the spans
in which ncu, nsys or cuobjdump names a program of the build (a tool's bare name, or a pattern
with a <placeholder> or an NN for a chapter number, is not a command). A test
selector written alone (`-R Tiled16`, `-R "SplitK|Splitk"`, `-L host`) is run the way the page
means it: `scripts/test.sh --chapter NN <selector>` on chapter NN's pages, `scripts/test.sh
<selector>` elsewhere. Each distinct command runs once, with bash, and must

- exit 0, or 77 where it may need a GPU and this machine has none
  (`build/bin/staged_device_query` says which): executables and test programs in build/,
  compute-sanitizer, ncu, scripts/test.sh, scripts/gpu_suite.sh, scripts/tour.sh and
  scripts/my_gpu.py may;
- where it asks for more GPUs (`--gpus K`) than this machine has (`nvidia-smi -L` counts them),
  is skipped and says so;
- not report that no test matched ("No tests were found", GoogleTest's "no test matches", or
  test.sh's "no tests matched"), whatever its exit code.

OUTDIR in a command stands for a fresh temporary folder. What a command changes in the working
tree is put back afterwards: tracked files it rewrote (plots, diagrams) are checked out again and
files it added outside ignored folders (a --junit report, say) are removed; ignored folders (a
build) stay. Where compute-sanitizer or ncu is not installed, the command it would run (its
target and the target's arguments) runs alone instead, so that the target and its flags are
still checked; where another tool a command starts with (cuobjdump) is missing, the files the
command names must exist, and the report says so.

--skip REGEX leaves out the commands it matches (listed as skipped): on a GPU machine, for
example, `--skip gpu_suite` spares the full GPU suite's runs.

Usage: check_page_commands.py PAGE... [--build build] [--list] [--skip REGEX]
       check_page_commands.py --all [--build build] [--list] [--skip REGEX]
       check_page_commands.py --self-test
--all checks every page: README.md, docs/pages/*.md, docs/results/README.md and chapters/*/*.md.
Exit: 0 every command did as the page says, 1 otherwise, 2 bad usage.
"""
import argparse
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
INLINE_COMMAND = re.compile(r"`(" + ASSIGNMENTS + PROGRAM + r"\s[^`<]+)`")
# A profiler or binary tool inline is a command when it names a program of the build.
INLINE_TOOL = re.compile(r"`((?:ncu|nsys|cuobjdump)\s[^`<]*build/[^`<]+)`")
# A test selector alone: `-R Tiled16`, `-R "SplitK|Splitk"`, `-L host`.
INLINE_SELECTOR = re.compile(r"`((?:-R|-E|-L|-LE) [^`<>]+)`")
PLACEHOLDER = re.compile(r"(?<![A-Z])NN(?![A-Z])")
NEEDS_GPU = re.compile(r"(^|\s)(build/bin/|build/tests/|compute-sanitizer\s|ncu\s|nsys\s"
                       r"|scripts/gpu_suite\.sh|scripts/tour\.sh|scripts/test\.sh|scripts/my_gpu\.py"
                       r"|scripts/memory_table\.py --measure)")
NO_TESTS = re.compile(r"No tests were found|no test matches --gtest_filter|no tests matched")
# Tools that run a target (their options first): without them the target runs alone.
WRAPPERS = ("compute-sanitizer", "ncu", "nsys")
PAGES = ("README.md", "docs/pages/*.md", "docs/results/README.md", "chapters/*/*.md")


def selector_command(selector, page):
    """The test.sh command a selector written alone on @p page stands for."""
    chapter = re.match(r"chapters/(\d\d)_", str(page)) if page else None
    where = f"--chapter {chapter.group(1)} " if chapter else ""
    return f"scripts/test.sh {where}{selector}"


def extract(markdown, page=None):
    """The commands of @p markdown (the text of @p page, relative to the root), in order, each
    once."""
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
            commands += [m.group(1).strip() for m in INLINE_TOOL.finditer(line)]
            commands += [selector_command(m.group(1).strip(), page)
                         for m in INLINE_SELECTOR.finditer(line)]
    seen = set()
    return [c for c in commands
            if not PLACEHOLDER.search(c) and not (c in seen or seen.add(c))]


def without_wrapper(command, tool="compute-sanitizer"):
    """@p command with @p tool (compute-sanitizer, ncu, nsys) and its words taken out up to its
    target, the first word naming a program of the build (build/...); "" when it names none."""
    words = shlex.split(command)
    at = words.index(tool)
    target = next((i for i in range(at + 1, len(words)) if words[i].startswith("build/")), None)
    return "" if target is None else shlex.join(words[:at] + words[target:])


def program(command):
    """The program @p command starts (after VAR=value words)."""
    words = [w for w in shlex.split(command) if not re.match(r"[A-Z_][A-Z0-9_]*=", w)]
    return words[0] if words else ""


def tree_state(workdir):
    """Tracked files that differ from HEAD and untracked files not ignored, with their content
    hashes (None for a deleted file)."""
    listed = subprocess.run(["git", "status", "--porcelain", "-z", "--untracked-files=all"],
                            cwd=workdir, capture_output=True, text=True)
    state = {}
    for entry in listed.stdout.split("\0"):
        if len(entry) < 4:
            continue
        name = entry[3:]
        path = pathlib.Path(workdir) / name
        state[name] = (entry[:2], hash(path.read_bytes()) if path.is_file() else None)
    return state


def restore(workdir, before):
    """Puts back what a command changed since @p before (tree_state): rewritten tracked files
    are checked out, added files removed. Returns the names restored."""
    after = tree_state(workdir)
    changed = sorted(n for n in after if after[n] != before.get(n))
    for name in changed:
        if after[name][0] == "??":
            (pathlib.Path(workdir) / name).unlink()
        elif name not in before:
            subprocess.run(["git", "checkout", "--", name], cwd=workdir, capture_output=True)
    return changed


def gpu_here(build):
    """Whether this machine has a usable GPU (staged_device_query exits 77 where not)."""
    query = ROOT / build / "bin" / "staged_device_query"
    if not query.exists():
        return False
    return subprocess.run([str(query)], capture_output=True).returncode != 77


def gpu_count():
    """How many GPUs `nvidia-smi -L` lists here (0 without it)."""
    if shutil.which("nvidia-smi") is None:
        return 0
    done = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True)
    return sum(line.startswith("GPU ") for line in done.stdout.splitlines()) \
        if done.returncode == 0 else 0


def run(command, has_gpu, workdir=ROOT, outdir=None, gpus=None):
    """Runs @p command (OUTDIR: @p outdir, shared by the commands of one check, or a fresh
    folder) on a machine with @p gpus GPUs (None: count them); returns (ok, what happened)."""
    note = ""
    wanted = re.search(r"(?:^|\s)--gpus[ =](\d+)\b", command)
    if has_gpu and wanted:
        gpus = gpu_count() if gpus is None else gpus
        if int(wanted.group(1)) > gpus:
            return True, f"skipped: needs {wanted.group(1)} GPUs; this machine has {gpus}"
    for tool in WRAPPERS:
        if re.search(rf"(^|\s){tool}\s", command) and shutil.which(tool) is None:
            command = without_wrapper(command, tool)
            if not command:
                return False, f"{tool} is not installed, and the command names no build/ target"
            note = f" ({tool} is not installed: ran its target alone)"
    if "OUTDIR/" in command and outdir is not None and not any(outdir.iterdir()):
        if not has_gpu:
            return True, "skipped: OUTDIR is empty (the GPU suite that fills it needs a GPU)"
        return False, "OUTDIR is empty: the command that fills it did not run first"
    tool = program(command)
    if "/" not in tool and shutil.which(tool) is None and tool not in ("cd", "python3"):
        missing = [w for w in shlex.split(command)
                   if "/" in w and not w.startswith("-") and not (workdir / w).exists()]
        if missing:
            return False, f"{tool} is not installed, and {', '.join(missing)} does not exist"
        return True, f"skipped: {tool} is not installed here (the files it names exist)"
    with tempfile.TemporaryDirectory() as scratch:
        before = tree_state(workdir)
        concrete = re.sub(r"\bOUTDIR\b", str(outdir or scratch), command)
        done = subprocess.run(["bash", "-c", concrete], cwd=workdir, capture_output=True,
                              text=True, stdin=subprocess.DEVNULL)
        restored = restore(workdir, before)
        if restored:
            note += f" (put back: {', '.join(restored[:3])}{' ...' if len(restored) > 3 else ''})"
    output = done.stdout + done.stderr
    allowed = {0} if has_gpu or not NEEDS_GPU.search(command) else {0, 77}
    if NO_TESTS.search(output):
        return False, f"exit {done.returncode}, but no test matched{note}"
    if done.returncode not in allowed:
        tail = "\n".join("      " + l for l in output.strip().splitlines()[-8:])
        return False, f"exit {done.returncode}, expected {sorted(allowed)}{note}\n{tail}"
    return True, f"exit {done.returncode}{note}"


def page_commands(pages):
    """(page, command) for the commands of @p pages, each command once (on its first page)."""
    seen = set()
    found = []
    for page in pages:
        path = pathlib.Path(page)
        relative = path.resolve().relative_to(ROOT) if path.resolve().is_relative_to(ROOT) \
            else path
        for command in extract(path.read_text(), relative):
            if command not in seen:
                seen.add(command)
                found.append((page, command))
    return found


def check(pages, build, list_only=False, skip=None):
    """Runs the commands of @p pages (but those @p skip matches); returns the number that
    failed."""
    commands = page_commands(pages)
    if list_only:
        print("\n".join(command for _, command in commands))
        return 0
    has_gpu = gpu_here(build)
    print(f"check_page_commands: {len(pages)} page(s), {len(commands)} commands, "
          f"{'a GPU' if has_gpu else 'no GPU'} here")
    failed = 0
    shown = None
    # One OUTDIR for every command: a page's `cp OUTDIR/results/...` reads what its
    # `scripts/gpu_suite.sh OUTDIR` wrote.
    with tempfile.TemporaryDirectory() as outdir:
        for page, command in commands:
            if page != shown:
                print(f"{page}:")
                shown = page
            if skip and re.search(skip, command):
                print(f"  skip {command}: --skip {skip}")
                continue
            ok, what = run(command, has_gpu, outdir=pathlib.Path(outdir))
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
    if without_wrapper("A=1 compute-sanitizer --tool racecheck --error-exitcode 99 "
                       "build/bin/x --n 5") != "A=1 build/bin/x --n 5":
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
    ap.add_argument("pages", nargs="*", help="the Markdown pages")
    ap.add_argument("--all", action="store_true", help="every page of the project")
    ap.add_argument("--build", default="build", help="the build directory (relative to the root)")
    ap.add_argument("--list", action="store_true", help="only print the commands found")
    ap.add_argument("--skip", help="leave out the commands this regular expression matches")
    ap.add_argument("--self-test", action="store_true",
                    help="check the checker: wrong commands must fail, right ones pass")
    args = ap.parse_args()
    if args.self_test:
        return self_test(args.build)
    pages = args.pages
    if args.all:
        pages += sorted(str(p.relative_to(ROOT)) for pattern in PAGES for p in ROOT.glob(pattern))
    if not pages:
        ap.error("a page is needed (or --all, or --self-test)")
    missing = [p for p in pages if not pathlib.Path(p).is_file()]
    if missing:
        ap.error(f"no such page: {', '.join(missing)}")
    return 1 if check(pages, args.build, args.list, args.skip) else 0


if __name__ == "__main__":
    sys.exit(main())
