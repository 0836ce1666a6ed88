#!/usr/bin/env bash
# Regenerates the golden files from the current idlc: tests/idlc/golden/update.sh <build-dir>
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
idlc=${1:?build directory}/idlc/spindle-idlc
for idl in avionics ShapeType Sequence; do
  "$idlc" -o "$here" "$here/../../../idl/$idl.idl"
done
