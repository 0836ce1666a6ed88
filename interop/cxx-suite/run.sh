#!/usr/bin/env bash
# run.sh — builds cyclonedds-cxx's standard-API test suite and its examples against Spindle DDS
# and runs them; prints per-file figures and the totals against issue 49's criterion 2
# (docs/dev/cxx-suite.md).
#
#   interop/cxx-suite/run.sh [options] [CYCLONEDDS_CXX]
#
# CYCLONEDDS_CXX: a cyclonedds-cxx git repository (bare or not: the tests are taken from tag
# 0.10.2, the roundtrip and throughput examples, which 0.10.x lacks, from tag 11.0.1), or an
# unpacked source tree of 0.10.2 (its examples/ is used as found). Default: $CYCLONEDDS_CXX,
# else the machine's mirror /work/.mirror/eclipse-cyclonedds+cyclonedds-cxx/repo. Nothing is
# downloaded: without a copy the script says how to get one.
#
# Options:
#   --prefix DIR     use the Spindle DDS installed there (default: build this tree, install it
#                    into WORK/prefix)
#   --work DIR       where everything goes (default: build/cxx-suite in this tree)
#   --only A,B       build and run only these test files (names from suite.txt)
#   --no-tests       skip the test files       --no-examples  skip the examples
#   --timeout S      limit per test executable run (default 600)
#   --jobs N         build jobs (default 1: the development machine is shared)
#
# Every test executable runs under tools/contained (its own pid, mount and network
# namespaces) and timeout; a case that crashes or hangs is recorded as such and the rest of
# its file runs on. Results: WORK/results/ (one log per file, summary.txt, examples.txt).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
tests_ref=0.10.2
examples_ref=11.0.1
prefix="" work="$root/build/cxx-suite" only="" do_tests=1 do_examples=1 limit=600 jobs=1
source="${CYCLONEDDS_CXX:-/work/.mirror/eclipse-cyclonedds+cyclonedds-cxx/repo}"
while (($#)); do
  case $1 in
    --prefix) prefix=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --no-tests) do_tests=0; shift ;;
    --no-examples) do_examples=0; shift ;;
    --timeout) limit=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    -h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
    *) source=$1; shift ;;
  esac
done
mkdir -p "$work"
work="$(cd "$work" && pwd)"
say() { printf '== %s\n' "$*"; }
die() { printf 'run.sh: %s\n' "$*" >&2; exit 1; }

# --- 1. Spindle DDS, installed -----------------------------------------------------------
spindle_is="installed in $prefix"
if [[ -z $prefix ]]; then
  prefix=$work/prefix
  spindle_is="$(git -C "$root" describe --always --dirty) (this tree)"
  say "building Spindle DDS (release, no tests) into $prefix"
  cmake -S "$root" -B "$work/spindle" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DSPINDLE_BUILD_TESTS=OFF -DSPINDLE_BUILD_BENCH=OFF >"$work/spindle-configure.log" 2>&1 ||
    die "configuring Spindle failed: $work/spindle-configure.log"
  cmake --build "$work/spindle" -j "$jobs" >"$work/spindle-build.log" 2>&1 ||
    die "building Spindle failed: $work/spindle-build.log"
  cmake --install "$work/spindle" --prefix "$prefix" >"$work/spindle-install.log" 2>&1 ||
    die "installing Spindle failed: $work/spindle-install.log"
fi
[[ -f $prefix/lib/cmake/Spindle/SpindleConfig.cmake ]] || die "no Spindle DDS installed in $prefix"
prefix="$(cd "$prefix" && pwd)"
[[ $spindle_is == installed* ]] && spindle_is="installed in $prefix"

# --- 2. their sources: pristine copy, then the edited one ----------------------------------
# Prepared in src.new, then put in place of src; a file that did not change keeps its time, so
# that a second run rebuilds only what changed.
final=$work/src src=$work/src.new
rm -rf "$src"
mkdir -p "$src/pristine" "$src/edited"
if [[ -d $source/src/ddscxx/tests ]] && ! git -C "$source" rev-parse --verify -q "$tests_ref^{commit}" >/dev/null 2>&1; then
  say "cyclonedds-cxx from the source tree $source"
  cp -r "$source/src/ddscxx/tests" "$src/pristine/tests"
  [[ -d $source/examples ]] && cp -r "$source/examples" "$src/pristine/examples"
elif git -C "$source" rev-parse --verify -q "$tests_ref^{commit}" >/dev/null 2>&1; then
  say "cyclonedds-cxx $tests_ref (tests, helloworld) and $examples_ref (roundtrip, throughput) from $source"
  x=$src/extract
  mkdir -p "$x/tests" "$x/examples"
  git -C "$source" archive "$tests_ref" src/ddscxx/tests examples/helloworld | tar -x -C "$x/tests"
  mv "$x/tests/src/ddscxx/tests" "$src/pristine/tests"
  mkdir -p "$src/pristine/examples"
  mv "$x/tests/examples/helloworld" "$src/pristine/examples/"
  if git -C "$source" rev-parse --verify -q "$examples_ref^{commit}" >/dev/null; then
    git -C "$source" archive "$examples_ref" examples/roundtrip examples/throughput |
      tar -x -C "$x/examples"
    mv "$x/examples/examples/"* "$src/pristine/examples/"
  fi
  rm -rf "$x"
else
  cat >&2 <<EOF
run.sh: no cyclonedds-cxx sources at '$source'.
Get them where the network is reachable, then pass the path (or set CYCLONEDDS_CXX):
  git clone https://github.com/eclipse-cyclonedds/cyclonedds-cxx.git
  interop/cxx-suite/run.sh \$PWD/cyclonedds-cxx
(the repository with its tags; or an unpacked 0.10.2 release archive, whose examples/ holds
helloworld only).
EOF
  exit 1
fi
cp -r "$src/pristine/." "$src/edited/"
say "applying edits.txt"
"$here/apply-edits.sh" "$here/edits.txt" "$src/edited" >"$work/edits.log" ||
  { cat "$work/edits.log"; die "edits.txt does not fit these sources"; }
cat "$work/edits.log"
if [[ -d $final ]]; then
  (cd "$src" && find . -type f) | while read -r f; do
    cmp -s "$src/$f" "$final/$f" 2>/dev/null && touch -r "$final/$f" "$src/$f"
  done
fi
rm -rf "$final"
mv "$src" "$final"
src=$final

# --- 3. the suite: files and their cases ------------------------------------------------------
count_cases() { # the gtest cases a file opens (TEST, TEST_F, TEST_P, TYPED_TEST)
  grep -cE '^[[:space:]]*(TEST|TEST_F|TEST_P|TYPED_TEST)[[:space:]]*\(' "$1"
}
declare -a files=() built=()
declare -A cases=() nobuild=()
while read -r name class why; do
  [[ -z $name || $name == \#* || $class == out ]] && continue
  [[ -n $only && ",$only," != *",$name,"* ]] && continue
  [[ -f $src/pristine/tests/$name.cpp ]] || die "suite.txt names $name.cpp, which these sources lack"
  files+=("$name")
  cases[$name]=$(count_cases "$src/pristine/tests/$name.cpp")
  if [[ $class == nobuild ]]; then nobuild[$name]=$why; else built+=("$name"); fi
done <"$here/suite.txt"

# --- 4. build -----------------------------------------------------------------------------
build=$work/harness
say "configuring and building the harness in $build"
list=$(IFS=';'; echo "${built[*]}")
((do_tests)) || list=""
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
  -DCXX_SUITE_SOURCE="$src/edited" "-DCXX_SUITE_TESTS=$list" >"$work/harness-configure.log" 2>&1 ||
  die "configuring the harness failed: $work/harness-configure.log"
targets=()
((do_tests)) && targets+=("${built[@]}")
((do_examples)) && targets+=(helloworld_publisher helloworld_subscriber roundtrip_ping roundtrip_pong
  throughput_publisher throughput_subscriber repro_keep_all_limits)
# Only the targets this configuration has (an unpacked 0.10.2 tree has no roundtrip/throughput).
known=$(ninja -C "$build" -t targets all 2>/dev/null | sed 's/:.*//')
present=()
for t in "${targets[@]}"; do grep -qx "$t" <<<"$known" && present+=("$t"); done
ninja -C "$build" -j "$jobs" -k 0 "${present[@]}" >"$work/harness-build.log" 2>&1
# Their tests must see Spindle's headers and compat/, never an installed Cyclone DDS's.
if ninja -C "$build" -t deps 2>/dev/null | grep -E '^ +/usr(/local)?/include/(dds|org)/' | head -3 | grep .; then
  die "a test file included an installed Cyclone DDS header (above)"
fi

results=$work/results
rm -rf "$results"
mkdir -p "$results"
# Under tools/contained, from an empty folder, with a private state folder and no domain file:
# every program finds its peers through the domain's join port on the namespace's loopback.
mkdir -p "$work/run"
run_contained() { # run_contained LIMIT CMD...
  local limit=$1
  shift
  (cd "$work/run" && timeout -k 10 "$limit" "$root/tools/contained" --no-check -- \
    env -u SPINDLE_CONFIG -u SPINDLE_NODE_ID XDG_STATE_HOME="$work/state" "$@")
}

# --- 5. run the tests -----------------------------------------------------------------------
# Runs one executable; where a case crashes or hangs, notes it and runs the cases after it.
run_file() { # run_file NAME -> results/NAME.log, results/NAME.cases ("STATE Suite.Case" lines)
  local name=$1 exe=$build/tests/$1 log=$results/$1.log out=$results/$1.cases skip="" rc attempt
  : >"$log"
  : >"$out"
  for attempt in $(seq 1 50); do
    run_contained "$limit" "$exe" --gtest_color=no --gtest_also_run_disabled_tests \
      ${skip:+"--gtest_filter=-$skip"} >"$log.part" 2>&1
    rc=$?
    cat "$log.part" >>"$log"
    # OK / FAILED / SKIPPED per case; a case RUN and never ended is the one that stopped it.
    local stuck
    stuck=$(awk -v out="$out" '
      /^\[ RUN      \] / { current = $4 }
      /^\[       OK \] / && $4 == current { print "passed " current >> out; current = "" }
      /^\[  FAILED  \] / && $4 == current { print "failed " current >> out; current = "" }
      /^\[  SKIPPED \] / && $4 == current { print "skipped " current >> out; current = "" }
      END { print current }' "$log.part")
    rm -f "$log.part"
    [[ -z $stuck ]] && break
    local how=crashed
    ((rc == 124 || rc == 137)) && how=hung
    echo "$how $stuck" >>"$out"
    echo "run.sh: $stuck $how (exit $rc); running the cases after it" >>"$log"
    skip+="${skip:+:}$(awk '{print $2}' "$out" | paste -sd: -)"
    skip=$(tr ':' '\n' <<<"$skip" | sort -u | paste -sd: -)
  done
}

declare -A compiled=() passed=() failed=() failing=()
if ((do_tests)); then
  for name in "${files[@]}"; do
    if [[ -n ${nobuild[$name]-} ]]; then
      compiled[$name]=0 passed[$name]=0 failed[$name]=0 failing[$name]="(not built: ${nobuild[$name]})"
      continue
    fi
    if [[ ! -x $build/tests/$name ]]; then
      compiled[$name]=0 passed[$name]=0 failed[$name]=0 failing[$name]="(does not compile)"
      continue
    fi
    # The cases the executable holds, as Suite.Case lines.
    run_contained 60 "$build/tests/$name" --gtest_list_tests | awk '
      /^[A-Za-z_]/ { suite = $1 }
      /^  [A-Za-z_]/ { print suite $1 }' >"$results/$name.list"
    compiled[$name]=$(wc -l <"$results/$name.list")
    say "running $name (${compiled[$name]} cases)"
    run_file "$name"
    # A case that never reported (the process ended after the last one that did) did not pass.
    awk '{ print $2 }' "$results/$name.cases" | sort >"$results/$name.seen"
    sort "$results/$name.list" | comm -23 - "$results/$name.seen" | sed 's/^/notrun /' \
      >>"$results/$name.cases"
    rm -f "$results/$name.seen"
    passed[$name]=$(grep -c '^passed ' "$results/$name.cases")
    failed[$name]=$((compiled[$name] - passed[$name]))
    failing[$name]=$(grep -v '^passed ' "$results/$name.cases" |
      awk '{ sub(/^[^.]*\./, "", $2); printf "%s%s%s", sep, $2, ($1 == "failed" ? "" : " (" $1 ")"); sep = ", " }')
  done

  {
    echo "cyclonedds-cxx $tests_ref against Spindle DDS ${spindle_is}, $(date -u '+%Y-%m-%d %H:%M UTC')"
    printf '%-30s %6s %9s %7s %7s  %s\n' file cases compiled passed failed "failing cases"
    tc=0 tco=0 tp=0 tf=0
    for name in "${files[@]}"; do
      printf '%-30s %6s %9s %7s %7s  %s\n' "$name" "${cases[$name]}" "${compiled[$name]}" \
        "${passed[$name]}" "${failed[$name]}" "${failing[$name]}"
      tc=$((tc + cases[$name])) tco=$((tco + compiled[$name]))
      tp=$((tp + passed[$name])) tf=$((tf + failed[$name]))
    done
    printf '%-30s %6s %9s %7s %7s\n' total "$tc" "$tco" "$tp" "$tf"
    echo
    [[ -n $only ]] && echo "(--only: a part of the suite; the criterion counts all 466 cases)"
    pct=$(awk -v p="$tp" -v c="$tco" 'BEGIN { printf "%.1f", c ? 100 * p / c : 0 }')
    verdict() { if (($1)); then echo met; else echo "NOT met"; fi; }
    echo "criterion: >= 440 of 466 cases compile: $tco of $tc — $(verdict $((tco >= 440)))"
    echo "criterion: >= 85 % of the compiled cases pass: $tp of $tco = $pct % — $(verdict \
      "$(awk -v p="$tp" -v c="$tco" 'BEGIN { print (c && p >= 0.85 * c) ? 1 : 0 }')")"
  } | tee "$results/summary.txt"
fi

# --- 6. the examples ------------------------------------------------------------------------
# A scenario runs the programs of one example in one contained namespace (so that they share a
# loopback and find each other as on one host): FIRST in the background, then each of THEN in
# turn, each bounded in time; it works when every pattern of CHECKS (separated by ';;') is
# found in their output and no program died of a signal or hung.
scenario() { # scenario NAME LIMIT CHECKS FIRST THEN...
  local name=$1 limit=$2 checks=$3 first=$4 log=$results/example-$1.log rc program script
  shift 4
  if [[ ! -d $src/edited/examples/${name%%-*} ]]; then
    printf '%-22s %s\n' "$name" "not in these sources" | tee -a "$results/examples.txt"
    return
  fi
  for program in "$first" "$@"; do
    if [[ ! -x $build/examples/${program%% *} ]]; then
      printf '%-22s %s\n' "$name" "does not build: ${program%% *} (harness-build.log)" |
        tee -a "$results/examples.txt"
      return
    fi
  done
  script="cd '$build/examples'; ./$first >first.out 2>&1 & pa=\$!; sleep 0.5"
  for program in "$@"; do
    script+="; echo '== ./$program'; timeout $limit ./$program 2>&1; echo \"== exit \$?\""
  done
  script+="; timeout 15 tail --pid=\$pa -f /dev/null; kill \$pa 2>/dev/null; wait \$pa"
  script+="; echo \"== ./$first (exit \$?)\"; cat first.out; rm -f first.out"
  run_contained "$((limit * $# + 40))" bash -c "$script" >"$log" 2>&1
  rc=$?
  local ok=1 pattern
  while IFS= read -r pattern; do
    [[ -n $pattern ]] && ! grep -qE -- "$pattern" "$log" && ok=0
  done < <(sed 's/;;/\n/g' <<<"$checks")
  # 124: timeout; 128+n: a signal
  grep -qE '^== (exit|.*\(exit) (12[4-9]|13[0-9]|14[0-9])\)?$' "$log" && ok=0
  if ((ok && rc == 0)); then
    printf '%-22s %s\n' "$name" "works" | tee -a "$results/examples.txt"
  else
    printf '%-22s %s\n' "$name" "FAILS (see $log)" | tee -a "$results/examples.txt"
  fi
}
if ((do_examples)); then
  : >"$results/examples.txt"
  say "examples"
  scenario helloworld 30 'Message received;;\[Publisher\] Done' \
    helloworld_subscriber helloworld_publisher
  # ping measures for 5 s after a 5 s warm-up, then `ping quit` disposes its instance: pong ends.
  scenario roundtrip-waitset 40 '# Overall;;# Quitting Pong' \
    'roundtrip_pong' 'roundtrip_ping 0 5 10' 'roundtrip_ping quit'
  scenario roundtrip-listener 40 '# Overall;;# Quitting Pong' \
    'roundtrip_pong -l' 'roundtrip_ping -l 0 5 10' 'roundtrip_ping quit'
  # The subscriber prints 3 one-second cycles and its totals; the publisher writes for 10 s at
  # most and stops when its reader is gone. RELIABLE KEEP_ALL: every sample arrives, in order
  # (the subscriber counts a jump in the sequence as "out of order").
  scenario throughput-waitset 40 'Total received: [1-9];;^Out of order: 0 samples' \
    'throughput_subscriber 3 0' 'throughput_publisher 8192 0 1 10'
  scenario throughput-listener 40 'Total received: [1-9];;^Out of order: 0 samples' \
    'throughput_subscriber 3 -1' 'throughput_publisher 8192 0 1 10'
  scenario throughput-polling 40 'Total received: [1-9];;^Out of order: 0 samples' \
    'throughput_subscriber 3 100' 'throughput_publisher 8192 0 1 10'
fi
