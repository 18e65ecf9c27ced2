#!/usr/bin/env bash
# Builds the documentation site (Doxygen, warnings are errors) and prints where it is.
# Works on a fresh clone: installs Doxygen, Graphviz and what the build needs with apt where it can
# (Debian/Ubuntu, as root or with sudo), and needs no CUDA Toolkit (docs/ is configured alone).
# Usage: scripts/docs.sh [--check] [BUILD_DIR]        (default BUILD_DIR: build-docs)
#   --check   first check the pages as CI does: code blocks match their source regions
#             (scripts/snippets.py --check), every link and image resolves and no raw Doxygen
#             syntax shows (scripts/check_markdown.py), tables of contents match the headings
#             (scripts/toc.py --check), diagrams match their .dot sources
#             (scripts/render_diagrams.sh --check), figures match the CSVs and every figure is
#             sourced (scripts/update_results.py --check, scripts/check_figures.py)
# Exit: 0 built, 1 a check or the build failed, 2 bad usage, or something is missing and could not
# be installed.
set -euo pipefail
cd "$(dirname "$0")/.."

check=0
build=""
while (( $# )); do
  case "$1" in
    --check) check=1 ;;
    -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "docs: unknown option '$1'" >&2; grep '^# Usage:' "$0" | sed 's/^# //' >&2; exit 2 ;;
    *)
      if [[ -n "$build" ]]; then
        echo "docs: one build folder, not '$build' and '$1'" >&2
        grep '^# Usage:' "$0" | sed 's/^# //' >&2
        exit 2
      fi
      build=$1 ;;
  esac
  shift
done
build=${build:-build-docs}

missing=()
command -v doxygen >/dev/null 2>&1 || missing+=(doxygen)
command -v dot >/dev/null 2>&1 || missing+=(graphviz)
command -v python3 >/dev/null 2>&1 || missing+=(python3)
command -v cmake >/dev/null 2>&1 || missing+=(cmake)
if ! command -v ninja >/dev/null 2>&1 && ! command -v make >/dev/null 2>&1; then
  missing+=(ninja-build)
fi
if ((${#missing[@]})); then
  sudo=""
  if [[ $(id -u) -ne 0 ]] && command -v sudo >/dev/null 2>&1; then sudo="sudo"; fi
  if command -v apt-get >/dev/null 2>&1 && { [[ $(id -u) -eq 0 ]] || [[ -n "$sudo" ]]; }; then
    echo "docs: installing ${missing[*]}"
    if ! { $sudo apt-get update -qq &&
           DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null; }
    then
      echo "docs: could not install ${missing[*]} with apt-get" >&2
      exit 2
    fi
  else
    echo "docs: missing ${missing[*]}: install them with your package manager" \
         "(Doxygen 1.9.4 or newer; Graphviz is needed only to redraw docs/diagrams)" >&2
    exit 2
  fi
fi
echo "docs: Doxygen $(doxygen --version)"

if ((check)); then
  python3 scripts/snippets.py --check
  python3 scripts/check_markdown.py
  python3 scripts/toc.py --check
  scripts/render_diagrams.sh --check
  python3 scripts/update_results.py --check >/dev/null
  python3 scripts/check_figures.py
fi

generator=()
if [[ ! -f "$build/CMakeCache.txt" ]] && command -v ninja >/dev/null 2>&1; then
  generator=(-G Ninja)
fi
cmake -S docs -B "$build" "${generator[@]}" >/dev/null
cmake --build "$build"
[[ "$build" == /* ]] || build="$(pwd)/$build"  # a relative build dir is under the repository
echo "docs: open $build/html/index.html"
