#!/usr/bin/env bash
# The Debian packages as a user gets them (cmake/SpindlePackage.cmake, docs/install.md):
#   1. CPack builds them from this build tree (its install: in CI the sanitize tree, so the
#      programs are the instrumented ones and the application is linked with FLAGS);
#   2. none holds a file of Debian's Cyclone DDS packages (cyclonedds-tools' /usr/bin/idlc),
#      spindle-dev holds no header of the test simulator, and the programs have manual pages;
#   3. dpkg installs them into an empty root (--root), their Depends forced once each is
#      found satisfied on this machine;
#   4. the installed `spindle --version` and `spindle-idlc --version` print the version;
#   5. a program built against the installed spindle-dev with CMake (find_package(Spindle),
#      spindle_idl_generate()) publishes, and the installed `spindle subscribe --json`
#      prints three of its samples;
#   6. the same program built with pkg-config and the installed spindle-idlc takes a sample
#      of its own;
#   7. dpkg --purge leaves nothing in the root but dpkg's own database.
#
#   package_test.sh BUILD WORK APP VERSION PREFIX LIBDIR CXX CMAKE CPACK [FLAGS]
# BUILD: the configured, built tree; WORK: a scratch folder (removed when the test passes);
# APP: tests/package/app; PREFIX and LIBDIR: the tree's CMAKE_INSTALL_PREFIX and
# CMAKE_INSTALL_LIBDIR; FLAGS: compile and link flags of the application (the sanitizers of
# an instrumented tree). The domain is the one of SPINDLE_CONFIG (the test's own join port).
set -euo pipefail
build=$1 work=$2 app=$3 version=$4 prefix=$5 libdir=$6 cxx=$7 cmake=$8 cpack=$9 flags=${10:-}
start=$SECONDS
step() { echo "== [$((SECONDS - start)) s] $*"; }
fail() {
  echo "package_test: $*" >&2
  exit 1
}
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT

rm -rf "$work"
mkdir -p "$work"

step "cpack: the .deb packages of $build"
pkgs=$work/packages
"$cpack" -G DEB --config "$build/CPackConfig.cmake" -B "$pkgs" >"$work/cpack.log" 2>&1 ||
  { cat "$work/cpack.log"; fail "cpack failed"; }
mapfile -t debs < <(ls "$pkgs"/*.deb)
names=()
for deb in "${debs[@]}"; do
  name=$(dpkg-deb -f "$deb" Package)
  names+=("$name")
  printf '   %-16s %6d KiB  Depends: %s\n' "$name" "$(du -k "$deb" | cut -f1)" \
    "$(dpkg-deb -f "$deb" Depends)"
done
for want in spindle-runtime spindle-dev spindle-tools; do
  [[ " ${names[*]} " == *" $want "* ]] || fail "no package $want among ${names[*]}"
done

step "no file in common with Cyclone DDS's packages; no simulator header"
# Our paths as they are under /usr, the prefix of a distribution's packages.
for deb in "${debs[@]}"; do
  dpkg-deb -c "$deb" | awk '$1 !~ /^d/ { sub(/^\./, "", $6); print $6 }' |
    sed "s|^${prefix}/|/usr/|"
done | sort >"$work/ours.txt"
grep -q '/bin/spindle-idlc$' "$work/ours.txt" || fail "no bin/spindle-idlc in the packages"
for page in spindle spindle-idlc spindle-perf spindle-log; do
  grep -q "/share/man/man1/$page.1\$" "$work/ours.txt" || fail "no manual page $page.1 in the packages"
done
for bad in /bin/idlc /include/spindle/transport/sim.hpp; do
  if grep -q "$bad\$" "$work/ours.txt"; then fail "the packages hold $bad"; fi
done
for other in cyclonedds-tools cyclonedds-dev libddsc0debian; do
  dpkg-query -W "$other" >/dev/null 2>&1 || continue
  common=$(dpkg -L "$other" | sort | comm -12 - "$work/ours.txt")
  [ -z "$common" ] || fail "files also in $other: $common"
  echo "   none of $(wc -l <"$work/ours.txt") files is in $other"
done

step "each Depends satisfied on this machine"
declare -A ops=([">="]=ge ["<="]=le ["="]=eq [">>"]=gt ["<<"]=lt)
for deb in "${debs[@]}"; do
  IFS=',' read -ra deps <<<"$(dpkg-deb -f "$deb" Depends)"
  for dep in "${deps[@]}"; do
    ok=0
    IFS='|' read -ra alts <<<"$dep"
    for alt in "${alts[@]}"; do
      read -r pkg op ver <<<"$(echo "$alt" | sed -E 's/[()]/ /g')"
      pkg=${pkg%%:*}
      if [[ " ${names[*]} " == *" $pkg "* ]]; then
        # One of ours: the same version.
        [[ $op == "=" && $ver == "$version" ]] && ok=1
        continue
      fi
      have=$(dpkg-query -W -f='${db:Status-Abbrev}${Version}' "$pkg" 2>/dev/null || true)
      [[ $have == ii* ]] || continue
      [[ -z $op ]] || dpkg --compare-versions "${have:3}" "${ops[$op]}" "$ver" || continue
      ok=1
    done
    ((ok)) || fail "$(dpkg-deb -f "$deb" Package): Depends '$dep' is not satisfied here"
  done
done

step "dpkg --root: install into an empty root"
root=$work/root
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates" "$root/var/lib/dpkg/triggers"
touch "$root/var/lib/dpkg/status" "$root/var/lib/dpkg/available"
dpkg_root=(dpkg --root="$root" --log=/dev/null)
"${dpkg_root[@]}" --force-depends -i "${debs[@]}" >"$work/dpkg-install.log" 2>&1 ||
  { cat "$work/dpkg-install.log"; fail "dpkg -i failed"; }
installed=$("${dpkg_root[@]}" -l | awk '$1 == "ii" { print $2 }' | sort | tr '\n' ' ')
echo "   installed: $installed"
[[ $installed == "$(printf '%s\n' "${names[@]}" | sort | tr '\n' ' ')" ]] ||
  fail "dpkg -l shows '$installed', not ${names[*]}"
here=$root$prefix
export SPINDLE_QOS_PATH=$here/share/spindle/qos-profiles

step "the installed programs' versions"
for program in spindle spindle-idlc; do
  out=$("$here/bin/$program" --version)
  echo "   $program --version: $out"
  [[ $out == "$program $version" ]] || fail "$program --version printed '$out'"
done

step "an application built with CMake against the installed spindle-dev"
"$cmake" -S "$app" -B "$work/cmake-app" -G Ninja -DCMAKE_PREFIX_PATH="$here" \
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_CXX_COMPILER="$cxx" \
  "-DCMAKE_CXX_FLAGS=$flags" "-DCMAKE_EXE_LINKER_FLAGS=$flags" >"$work/cmake-app.log" 2>&1 ||
  { cat "$work/cmake-app.log"; fail "configuring the application failed"; }
spindle_dir=$(sed -n 's/^Spindle_DIR:PATH=//p' "$work/cmake-app/CMakeCache.txt")
[[ $spindle_dir == "$here"/* ]] || fail "find_package(Spindle) found $spindle_dir, not the root's"
"$cmake" --build "$work/cmake-app" -j1 >>"$work/cmake-app.log" 2>&1 ||
  { cat "$work/cmake-app.log"; fail "building the application failed"; }

step "the installed spindle subscribe takes the application's samples"
"$work/cmake-app/package_app" publish 90 >"$work/publish.log" 2>&1 &
pids+=($!)
rc=0
timeout 120 "$here/bin/spindle" subscribe PackageGreetings --json --count 3 --wait 60 \
  >"$work/subscribe.out" 2>"$work/subscribe.err" || rc=$?
cat "$work/subscribe.out"
if ((rc != 0)); then
  cat "$work/subscribe.err" "$work/publish.log"
  fail "spindle subscribe exited with $rc"
fi
got=$(grep -c '"topic":"PackageGreetings".*"text":"hello from the package"' "$work/subscribe.out" || true)
((got == 3)) || fail "spindle subscribe printed $got samples of the application, not 3"
kill "${pids[@]}" 2>/dev/null || true
wait "${pids[@]}" 2>/dev/null || true
pids=()

step "the installed spindle on a domain with no file: ls, ps, typeof, subscribe, status --http"
# Issue 51's acceptance: in a network namespace of its own (loopback only) with no domain
# file, while the application publishes ShapeType on Square. Where this test may not make a
# namespace, the test's own domain file (its join port) stands in for it, and it says so.
accept=$work/acceptance.sh
cat >"$accept" <<'ACCEPT'
set -euo pipefail
here=$1 work=$2 app=$3
spindle=$here/bin/spindle
"$app" shapes 120 >"$work/shapes.log" 2>&1 &
shapes=$!
status=
trap 'kill $shapes $status 2>/dev/null || true; wait' EXIT
check() { # NAME PATTERN COMMAND...: runs it, prints its output, fails unless PATTERN is in it
  local name=$1 pattern=$2
  shift 2
  local out
  out=$(timeout 120 "$@" 2>&1) || { echo "$out"; echo "FAILED: $name exited with $?"; exit 1; }
  echo "$out" | sed 's/^/     /'
  grep -Eq "$pattern" <<<"$out" || { echo "FAILED: $name: no '$pattern'"; exit 1; }
}
# The topic is up once subscribe prints its samples.
check "spindle subscribe Square --json --count 5" '"topic":"Square".*"color":"BLUE"' \
  "$spindle" subscribe Square --json --count 5 --wait 60
n=$(timeout 60 "$spindle" subscribe Square --json --count 5 --wait 60 | grep -c '"topic":"Square"')
[ "$n" = 5 ] || { echo "FAILED: subscribe --count 5 printed $n samples"; exit 1; }
check "spindle ls" 'Square +ShapeType +1 ' "$spindle" ls
check "spindle ps" 'member +[^ ]+ +[0-9]+ +package_app' "$spindle" ps
check "spindle typeof Square" '@key string<128> color;' "$spindle" typeof Square
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$spindle" status --http "127.0.0.1:$port" >"$work/status.log" 2>&1 &
status=$!
check "GET /status.json of spindle status --http" '"Square"' python3 - "$port" <<'GET'
import sys, time, urllib.request
url = "http://127.0.0.1:%s/status.json" % sys.argv[1]
body = "no answer from " + url
for _ in range(300):
    try:
        body = urllib.request.urlopen(url, timeout=5).read().decode()
        if '"Square"' in body:
            break
    except OSError:
        pass
    time.sleep(0.2)
print(body)
GET
ACCEPT
if unshare --net true 2>/dev/null; then
  echo "   in a network namespace of its own, no domain file"
  unshare --net env -u SPINDLE_CONFIG bash -c 'ip link set lo up && exec bash "$@"' _ \
    "$accept" "$here" "$work" "$work/cmake-app/package_app" ||
    fail "the installed spindle on the application's domain"
else
  echo "   no network namespace here (unshare --net refused): the test's domain file instead"
  bash "$accept" "$here" "$work" "$work/cmake-app/package_app" ||
    fail "the installed spindle on the application's domain"
fi

step "an application built with pkg-config and spindle-idlc"
export PKG_CONFIG_PATH=$here/$libdir/pkgconfig
[[ $(pkg-config --modversion spindle) == "$version" ]] || fail "pkg-config --modversion spindle"
[[ $(realpath "$(pkg-config --variable=prefix spindle)") == "$(realpath "$here")" ]] ||
  fail "spindle.pc's prefix is $(pkg-config --variable=prefix spindle), not $here"
echo "   $(pkg-config --cflags --libs spindle)"
gen=$work/pkg-config-app
"$here/bin/spindle-idlc" -o "$gen" "$app/greeting.idl" "$app/shapes.idl"
# shellcheck disable=SC2046,SC2086 # the flags are lists of words
"$cxx" $flags -I"$gen" "$app/app.cpp" "$gen/greeting.cpp" "$gen/shapes.cpp" -o "$gen/package_app" \
  $(pkg-config --cflags --libs spindle) || fail "compiling with pkg-config failed"
"$gen/package_app" loopback || fail "the pkg-config build of the application failed"

step "dpkg --purge leaves nothing behind"
"${dpkg_root[@]}" --purge "${names[@]}" >"$work/dpkg-purge.log" 2>&1 ||
  { cat "$work/dpkg-purge.log"; fail "dpkg --purge failed"; }
left=$(cd "$root" && find . -mindepth 1 -not -path ./var -not -path ./var/lib \
  -not -path ./var/lib/dpkg -not -path './var/lib/dpkg/*')
[ -z "$left" ] || fail "left in the root after --purge: $left"
left=$(ls "$root/var/lib/dpkg/info" | grep -v '^format$' || true)
[ -z "$left" ] || fail "left in dpkg's database: $left"
if "${dpkg_root[@]}" -l 2>/dev/null | grep -q '^[a-z][a-z] *spindle'; then
  fail "dpkg -l still lists a spindle package"
fi

step "passed"
rm -rf "$work"
