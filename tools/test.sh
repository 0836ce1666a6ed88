#!/usr/bin/env bash
# The whole test suite, from a fresh Debian 12 machine: installs the dependencies, builds
# everything with ASan+UBSan and warnings as errors, runs every CTest test, then builds the
# libFuzzer targets with clang and runs each for a bounded time (SPINDLE_FUZZ_SECONDS).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install-deps.sh
jobs=$(nproc)

echo "== build (sanitize: ASan + UBSan, -Werror)"
cmake --preset sanitize >/dev/null
cmake --build --preset sanitize -j"$jobs"

echo "== tests"
status=0
ctest --preset sanitize -j"$jobs" --timeout 900 || status=1
# Tests that kill processes leave shared-memory segments behind: unlink dead owners' ones.
build/sanitize/tests/transport/shm_sweep || true

echo "== fuzz (clang libFuzzer, ${SPINDLE_FUZZ_SECONDS:-20} s per target)"
cmake --preset fuzz -DSPINDLE_FUZZ_SECONDS="${SPINDLE_FUZZ_SECONDS:-20}" >/dev/null
cmake --build --preset fuzz -j"$jobs" --target fuzzers
ctest --test-dir build/fuzz --output-on-failure --timeout 600 || status=1
exit $status
