#!/usr/bin/env bash
# The main job, from a fresh Debian 12 machine: installs the dependencies, builds Spindle
# DDS (release) and runs the demo.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release -j"$(nproc)" --target spindle-demo
exec build/release/tools/demo/spindle-demo "$@"
