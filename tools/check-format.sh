#!/usr/bin/env bash
# Fails when a tracked C++ source differs from clang-format's output (.clang-format).
# tools/check-format.sh --fix reformats instead.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.h' | grep -v '^tests/idlc/golden/')
[ "${#files[@]}" -gt 0 ] || exit 0
if [ "${1:-}" = "--fix" ]; then
  clang-format -i "${files[@]}"
else
  clang-format --dry-run --Werror "${files[@]}"
fi
