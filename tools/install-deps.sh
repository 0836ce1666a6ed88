#!/usr/bin/env bash
# Installs every Debian 12 package Spindle DDS needs to build, test and benchmark,
# plus the ANTLR 4.9 tool jar that matches Debian's C++ runtime. Idempotent: a second
# run installs nothing and returns quickly.
set -euo pipefail

PACKAGES=(
  # toolchain
  build-essential cmake ninja-build pkg-config git ccache
  clang clang-format clang-tidy libclang-rt-14-dev llvm
  # transports
  libibverbs-dev librdmacm-dev libboost-dev libasio-dev
  # idlc: ANTLR runtime (4.9) + the Java the 4.9 tool jar runs on
  libantlr4-runtime-dev uuid-dev default-jre-headless maven
  # CDR, configuration, CLI, logging
  libfastcdr-dev libssl-dev libyaml-cpp-dev libcli11-dev libspdlog-dev libfmt-dev
  # dynamic types: JSON in and out
  nlohmann-json3-dev
  # interop: the RTPS gateway (Cyclone DDS C API), its test peer (Cyclone idlc) and ddsperf
  cyclonedds-dev cyclonedds-tools
  # the durable log's CRC32C (ISA-L)
  libisal-dev
  # tests and benchmarks
  catch2 libbenchmark-dev python3 iproute2 procps
  # spindle perf --plot
  gnuplot-nox
  # the programs' manual pages (cmake/SpindleManPages.cmake)
  help2man
  # the .deb packages (tools/package.sh, test package.deb): CPack's Depends from the ELF
  # files (file, dpkg-shlibdeps)
  file dpkg-dev
  # the page of `spindle status --http`, loaded headless by spindle_cli.status_page
  chromium
)

SUDO=""
if [ "$(id -u)" != 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: run as root or install sudo" >&2; exit 1; }
  SUDO=sudo
fi

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  if ! $SUDO apt-get -o DPkg::Lock::Timeout=300 install -y -q --no-install-recommends "${missing[@]}"; then
    $SUDO apt-get -o DPkg::Lock::Timeout=300 update -q
    $SUDO apt-get -o DPkg::Lock::Timeout=300 install -y -q --no-install-recommends "${missing[@]}"
  fi
fi

# Debian ships the ANTLR 4.7.2 tool but the 4.9 C++ runtime; generated code must come
# from the tool of the runtime's version, so fetch that jar from Maven Central.
runtime_version=$(dpkg-query -W -f='${Version}' libantlr4-runtime-dev | sed -E 's/^([0-9]+\.[0-9]+(\.[0-9]+)?).*/\1/')
jar="${HOME}/.m2/repository/org/antlr/antlr4/${runtime_version}/antlr4-${runtime_version}-complete.jar"
if [ ! -f "$jar" ]; then
  echo "install-deps: fetching ANTLR tool ${runtime_version} to match the C++ runtime" >&2
  mvn -q -B dependency:get -Dartifact="org.antlr:antlr4:${runtime_version}:jar:complete" -Dtransitive=false
fi
[ -f "$jar" ] || { echo "install-deps: ANTLR tool jar $jar missing after download" >&2; exit 1; }
echo "install-deps: ok (ANTLR tool and runtime ${runtime_version})" >&2
