#!/usr/bin/env bash
# Checks the build dependencies and installs the missing ones where it can (Debian/Ubuntu, as root
# or with sudo): CMake >= 3.25, Ninja, Python 3, GoogleTest, and with --docs Doxygen and Graphviz.
# The CUDA Toolkit (nvcc, CCCL, cuBLAS) cannot come from here: without it this script says so.
# Usage: scripts/deps.sh [--docs]     Exit: 0 ready, 2 something is missing and could not be installed.
set -euo pipefail

want_docs=0
[[ "${1:-}" == "--docs" ]] && want_docs=1

# nvcc is often installed but not on PATH.
if ! command -v nvcc >/dev/null 2>&1 && [[ -x /usr/local/cuda/bin/nvcc ]]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi

missing=()
command -v cmake >/dev/null 2>&1 || missing+=(cmake)
command -v ninja >/dev/null 2>&1 || missing+=(ninja-build)
command -v python3 >/dev/null 2>&1 || missing+=(python3)
if [[ ! -f /usr/include/gtest/gtest.h && ! -f /usr/local/include/gtest/gtest.h ]]; then
  missing+=(libgtest-dev)
fi
if (( want_docs )); then
  command -v doxygen >/dev/null 2>&1 || missing+=(doxygen)
  command -v dot >/dev/null 2>&1 || missing+=(graphviz)
fi

if (( ${#missing[@]} )); then
  sudo=""
  [[ $(id -u) -ne 0 ]] && command -v sudo >/dev/null 2>&1 && sudo="sudo"
  if command -v apt-get >/dev/null 2>&1 && { [[ $(id -u) -eq 0 ]] || [[ -n "$sudo" ]]; }; then
    echo "deps: installing ${missing[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "deps: missing ${missing[*]}; install them with your package manager" >&2
    exit 2
  fi
fi

if ! command -v nvcc >/dev/null 2>&1; then
  echo "deps: nvcc not found: install the CUDA Toolkit (12.4 or newer) and put its bin/ on PATH" >&2
  exit 2
fi
cmake_version=$(cmake --version | head -n1 | awk '{print $3}')
if [[ "$(printf '%s\n3.25.0\n' "$cmake_version" | sort -V | head -n1)" != "3.25.0" ]]; then
  echo "deps: CMake $cmake_version is too old; 3.25 or newer is needed" >&2
  exit 2
fi
