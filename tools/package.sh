#!/usr/bin/env bash
# The Debian packages of Spindle DDS, from a fresh Debian 12 machine: installs the
# dependencies, builds the `package` preset (release, installed under /usr, no tests or
# benchmarks) and runs CPack. Prints the packages' paths; docs/install.md says what each one
# holds and how to install them.
#   tools/package.sh [-jN]      (default: -j$(nproc))
set -euo pipefail
cd "$(dirname "$0")/.."
jobs="-j$(nproc)"
[ $# -gt 0 ] && jobs=$1
bash tools/install-deps.sh
cmake --preset package >/dev/null
cmake --build --preset package "$jobs"
out=build/package/packages
rm -rf "$out"
(cd build/package && cpack -G DEB -B "$PWD/packages" >cpack.log 2>&1) ||
  { cat build/package/cpack.log; echo "package.sh: cpack failed" >&2; exit 1; }
echo "package.sh: the packages (sudo apt install ./${out}/*.deb installs them and their Depends):"
ls -1 "$out"/*.deb
