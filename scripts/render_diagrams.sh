#!/usr/bin/env bash
# Renders every docs/diagrams/*.dot to the committed SVG beside it, with Graphviz (`dot -Tsvg`).
# Each SVG records the SHA-256 of the .dot it came from, so --check can tell a stale diagram
# from a fresh one on any machine (layouts differ a little between Graphviz versions and fonts;
# the recorded source does not).
# Usage: scripts/render_diagrams.sh [--check] [FILE.dot ...]
#   (no option)  render the given .dot files (default: all), rewriting their .svg
#   --check      render nothing; exit 1 naming each .dot whose .svg is missing or was rendered
#                from another version of the .dot
set -euo pipefail
cd "$(dirname "$0")/.."

check=0
if [[ "${1:-}" == "--check" ]]; then
  check=1
  shift
elif [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
  sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi
if (($#)); then
  files=("$@")
else
  shopt -s nullglob
  files=(docs/diagrams/*.dot)
fi

stale=0
for dot_file in "${files[@]}"; do
  svg_file="${dot_file%.dot}.svg"
  sum=$(sha256sum "$dot_file" | cut -d' ' -f1)
  stamp="<!-- rendered from $(basename "$dot_file") sha256:$sum by scripts/render_diagrams.sh -->"
  if ((check)); then
    if [[ ! -f "$svg_file" ]]; then
      echo "diagrams: $svg_file is missing: run scripts/render_diagrams.sh" >&2
      stale=1
    elif ! grep -qF "sha256:$sum " "$svg_file"; then
      echo "diagrams: $svg_file is older than $dot_file: run scripts/render_diagrams.sh" >&2
      stale=1
    fi
    continue
  fi
  if ! command -v dot >/dev/null 2>&1; then
    echo "diagrams: Graphviz's dot is not installed (apt-get install graphviz)" >&2
    exit 2
  fi
  # The stamp goes after the XML prolog; the generator line names the Graphviz version.
  dot -Tsvg "$dot_file" | awk -v stamp="$stamp" 'NR == 1 { print; print stamp; next } { print }' \
    > "$svg_file.tmp"
  mv "$svg_file.tmp" "$svg_file"
  echo "diagrams: $svg_file"
done
if ((check)); then
  if ((stale)); then exit 1; fi
  echo "diagrams: ${#files[@]} SVGs match their .dot sources"
fi
