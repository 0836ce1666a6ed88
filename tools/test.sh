#!/usr/bin/env bash
# The whole test suite, from a fresh Debian 12 machine: installs the dependencies, builds
# everything with ASan+UBSan and warnings as errors, runs every CTest test, then builds the
# libFuzzer targets with clang and runs each for a bounded time (SPINDLE_FUZZ_SECONDS).
# Each phase prints its time, and the run ends with a table of them (docs/dev/building.md says
# what a cold 2-core machine takes and how the build's time was cut).
#
# The tests and the fuzzers run inside tools/contained: their own pid, mount (a private
# /dev/shm, /tmp and /run/netns) and network namespace (only loopback), under a memory
# limit. Nothing they start outlives them or reaches the machine's network, and each run
# fails, naming it, where something was left behind (a process, a segment, a namespace, a
# temporary file): docs/dev/building.md, "What the test run isolates".
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)

phases=()
phase_start=$SECONDS
# phase_done NAME: records how long the phase that just ended took, and prints it.
phase_done() {
  local took=$((SECONDS - phase_start))
  phases+=("$(printf '%-10s %3d min %02d s' "$1" $((took / 60)) $((took % 60)))")
  echo "== $1 took $((took / 60)) min $((took % 60)) s"
  phase_start=$SECONDS
}
# The CTest logs of this run (the sanitize suite and the fuzzers): the last line adds them up.
logs=()
summary() {
  echo "== time per phase"
  for p in "${phases[@]}"; do echo "   $p"; done
  printf '   %-10s %3d min %02d s\n' total $((SECONDS / 60)) $((SECONDS % 60))
  if [ "${#logs[@]}" -gt 0 ]; then
    local total failed skipped
    total=$(cat "${logs[@]}" | awk '/tests failed out of/ { n += $NF } END { print n + 0 }')
    failed=$(cat "${logs[@]}" | awk '/tests failed out of/ { n += $(NF - 5) } END { print n + 0 }')
    skipped=$(cat "${logs[@]}" | grep -cE '^[[:space:]]*[0-9]+ - .*\((Skipped|Not Run|Disabled)\)$' || true)
    echo "== all CTest runs"
    echo "test.sh: $((total - failed - skipped)) passed, ${failed} failed, ${skipped} skipped"
  fi
}
trap summary EXIT

echo "== install"
bash tools/install-deps.sh
phase_done install

echo "== build (sanitize: ASan + UBSan, -Werror)"
cmake --preset sanitize >/dev/null
cmake --build --preset sanitize -j"$jobs"
phase_done build

echo "== tests"
status=0
logs+=(build/sanitize/ctest.log)
tools/contained -- ctest --preset sanitize -j"$jobs" --timeout 900 2>&1 | tee build/sanitize/ctest.log ||
  status=1
phase_done ctest

echo "== fuzz (clang libFuzzer, ${SPINDLE_FUZZ_SECONDS:-20} s per target)"
cmake --preset fuzz -DSPINDLE_FUZZ_SECONDS="${SPINDLE_FUZZ_SECONDS:-20}" >/dev/null
cmake --build --preset fuzz -j"$jobs" --target fuzzers
phase_done fuzz-build
logs+=(build/fuzz/ctest.log)
tools/contained -- ctest --test-dir build/fuzz -j"$jobs" --output-on-failure --timeout 600 2>&1 |
  tee build/fuzz/ctest.log || status=1
phase_done fuzz
exit $status
