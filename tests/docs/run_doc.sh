#!/usr/bin/env bash
# run_doc.sh — runs the commands of a user document as a reader would, and checks what they
# print and the files they quote against the code (tests docs.*, tests/docs/CMakeLists.txt).
#
#   run_doc.sh DOC --source DIR --programs DIR --spindle EXE
#
# What it takes from DOC (Markdown):
#   ```sh runnable      a block of commands. They run in bash, in a folder laid out as a
#                       user's (build-examples/ holding the example programs, ../examples the
#                       sources), with `spindle` on PATH and no domain file anywhere; the block
#                       fails on the first command that fails, and ends by waiting for what it
#                       started in the background. A line `hostN$ CMD` runs CMD on host N:
#                       a network namespace at 10.0.0.N on one bridge, with a /dev/shm and pid
#                       namespace of its own. A line that ends in `# fails` must fail.
#   ```output           right after such a block: every line of it but `...` must be a line of
#                       what the block printed (stdout and stderr, in any order); `...` within
#                       a line stands for any text (the blanks around it included).
#   ```LANG file=PATH   the block is the file PATH of the source tree, byte for byte.
#   ```LANG excerpt=PATH  every line of the block is a line of PATH, in the same order
#                       (leading and trailing blanks aside).
#
# Each run is in namespaces of its own (network, mount, pid; a user namespace where not root):
# only loopback, a private /dev/shm, and nothing it starts outlives it. Exit status 0, 1 when
# a block failed, 77 (skipped) where namespaces cannot be made.
set -uo pipefail

doc="" source_dir="" programs="" spindle=""
while (($#)); do
  case $1 in
    --source) source_dir=$2; shift 2 ;;
    --programs) programs=$2; shift 2 ;;
    --spindle) spindle=$2; shift 2 ;;
    -*) echo "run_doc: unknown option '$1'" >&2; exit 2 ;;
    *) doc=$1; shift ;;
  esac
done
[[ -n $doc && -n $source_dir && -n $programs && -n $spindle ]] ||
  { echo "usage: run_doc.sh DOC --source DIR --programs DIR --spindle EXE" >&2; exit 2; }

if [[ ${RUN_DOC_INSIDE:-} != 1 ]]; then
  user=()
  [[ $(id -u) == 0 ]] || user=(--user --map-root-user)
  if ! unshare "${user[@]}" --net --mount --pid --fork true 2>/dev/null; then
    echo "run_doc: SKIP: cannot make network, mount and pid namespaces here"
    exit 77
  fi
  RUN_DOC_INSIDE=1 exec unshare "${user[@]}" --net --mount --pid --fork --kill-child \
    --mount-proc -- "$0" "$doc" --source "$source_dir" --programs "$programs" --spindle "$spindle"
fi

# Inside: pid 1's child of a new pid namespace, with only loopback. `ip netns add` keeps its
# namespaces in /run/netns: a folder of this run's own.
ip link set lo up
mkdir -p /run/netns && mount -t tmpfs tmpfs /run/netns
mount -t tmpfs -o size=1g,mode=1777 tmpfs /dev/shm
scratch=$(mktemp -d "${TMPDIR:-/tmp}/run_doc.XXXXXX")
mount -t tmpfs tmpfs "$scratch"
trap 'umount -l "$scratch"; rmdir "$scratch"' EXIT
mkdir -p "$scratch/build-examples" "$scratch/bin" "$scratch/home" "$scratch/blocks"
ln -s "$source_dir/examples" "$scratch/examples"
for p in sensor_publisher sensor_subscriber; do ln -s "$programs/$p" "$scratch/build-examples/$p"; done
ln -s "$spindle" "$scratch/bin/spindle"
# No domain file and no setting of the test run's: the defaults, as on a fresh machine.
unset SPINDLE_CONFIG SPINDLE_NODE_ID SPINDLE_TEST_JOIN_PORT SPINDLE_TEST_LOG_DIR
export HOME=$scratch/home XDG_CONFIG_HOME=$scratch/home/.config XDG_STATE_HOME=$scratch/home/.state
export PATH=$scratch/bin:$PATH
export SPINDLE_QOS_PATH=$source_dir/qos-profiles

hosts_made=0
make_hosts() {
  ((hosts_made)) && return 0
  ip link add br0 type bridge && ip link set br0 up || return 1
  local n
  for n in 1 2 3; do
    ip netns add "h$n" &&
      ip link add "v$n" type veth peer name "p$n" &&
      ip link set "v$n" netns "h$n" &&
      ip link set "p$n" master br0 && ip link set "p$n" up &&
      ip netns exec "h$n" ip addr add "10.0.0.$n/24" dev "v$n" &&
      ip netns exec "h$n" ip link set "v$n" up &&
      ip netns exec "h$n" ip link set lo up || return 1
  done
  hosts_made=1
}

# The blocks, as records: kind ("run", "output", "file", "excerpt"), path, first line, text.
blocks=$scratch/blocks
awk -v dir="$blocks" '
  function close_block() { if (out != "") close(out); out = "" }
  /^```/ {
    if (in_block) { in_block = 0; close_block(); next }
    in_block = 1; info = substr($0, 4); kind = ""; path = ""
    if (info == "sh runnable") kind = "run"
    else if (info == "output") kind = "output"
    else if (match(info, /^[^ ]+ file=/)) { kind = "file"; path = substr(info, RSTART + RLENGTH) }
    else if (match(info, /^[^ ]+ excerpt=/)) { kind = "excerpt"; path = substr(info, RSTART + RLENGTH) }
    if (kind != "") {
      n++; out = sprintf("%s/%03d.%s", dir, n, kind)
      printf "%s\n%d\n", path, NR > (out ".meta"); close(out ".meta")
      printf "" > out
    }
    next
  }
  in_block && out != "" { print > out }
' "$doc"

# Whether a line of FILE is WANT, where `...` in WANT stands for any text.
printed() {
  awk -v want="$1" '
    BEGIN { n = split(want, seg, / *\.\.\. */) }
    {
      sub(/[ \t]+$/, "")
      if (n == 1) { if ($0 == want) found = 1; next }
      if (index($0, seg[1]) != 1) next
      rest = substr($0, length(seg[1]) + 1)
      for (i = 2; i < n; i++) {
        p = index(rest, seg[i]); if (p == 0) next
        rest = substr(rest, p + length(seg[i]))
      }
      if (length(rest) >= length(seg[n]) && substr(rest, length(rest) - length(seg[n]) + 1) == seg[n])
        found = 1
    }
    END { exit found ? 0 : 1 }' "$2"
}

failed=0 ran=0 checked=0
last_output=""
fail() { echo "FAIL: $doc:$1: $2"; failed=1; }

for block in "$blocks"/*; do
  case $block in *.meta|*.sh|*.log) continue ;; esac
  kind=${block##*.}
  { read -r path; read -r line; } <"$block.meta"
  case $kind in
    file)
      if cmp -s "$block" "$source_dir/$path"; then checked=$((checked + 1))
      else fail "$line" "the block differs from $path:"; diff "$block" "$source_dir/$path" | head -20; fi
      ;;
    excerpt)
      # Every line of the block, in order, among the file's lines.
      if awk 'function trim(s) { gsub(/^[ \t]+|[ \t]+$/, "", s); return s }
              NR == FNR { want[++n] = trim($0); next }
              k < n && trim($0) == want[k + 1] { k++ }
              END { exit k == n ? 0 : 1 }' "$block" "$source_dir/$path"; then
        checked=$((checked + 1))
      else
        fail "$line" "a line of the block is not in $path (or not in its order)"
      fi
      ;;
    run)
      script=$block.sh
      {
        echo "set -e"
        echo "on() { local n=\$1; shift; ip netns exec \"h\$n\" unshare --mount --pid --fork --kill-child --mount-proc bash -c 'mount -t tmpfs -o size=1g,mode=1777 tmpfs /dev/shm && exec bash \"\$@\"' on \"\$@\"; }"
        k=0
        while IFS= read -r cmd; do
          if [[ $cmd =~ ^host([0-9])\$\ (.*)$ ]]; then
            make_hosts || { echo "exit 77"; break; }
            host=${BASH_REMATCH[1]} rest=${BASH_REMATCH[2]} bg=""
            if [[ $rest =~ ^(.*[^[:space:]])[[:space:]]*\&[[:space:]]*(#.*)?$ ]]; then
              rest=${BASH_REMATCH[1]} bg=" &"
            fi
            k=$((k + 1))
            printf '%s\n' "$rest" >"$block.$k.line"
            echo "on $host $block.$k.line$bg"
          elif [[ $cmd =~ ^(.*[^[:space:]])[[:space:]]+#[[:space:]]*fails[[:space:]]*$ ]]; then
            printf 'if %s; then echo "run_doc: it did not fail" >&2; exit 1; fi\n' "${BASH_REMATCH[1]}"
          else
            printf '%s\n' "$cmd"
          fi
        done <"$block"
        echo "wait"
      } >"$script"
      echo "--- $doc:$line"
      sed 's/^/  $ /' "$block"
      (cd "$scratch/build-examples" && timeout 90 bash "$script") >"$block.log" 2>&1
      status=$?
      sed 's/^/  | /' "$block.log"
      if ((status == 77)); then
        echo "run_doc: SKIP: cannot make the hosts' network namespaces"; exit 77
      fi
      ((status == 0)) || fail "$line" "the block exited with status $status"
      ran=$((ran + 1))
      last_output=$block.log
      ;;
    output)
      if [[ -z $last_output ]]; then fail "$line" "an output block with no runnable block before it"; continue; fi
      while IFS= read -r want; do
        want=${want%"${want##*[![:space:]]}"}
        [[ -z $want || $want == "..." ]] && continue
        if ! printed "$want" "$last_output"; then
          fail "$line" "not printed: '$want'"
        fi
      done <"$block"
      checked=$((checked + 1))
      last_output=""
      ;;
  esac
done

echo "run_doc: $doc: $ran command blocks run, $checked blocks checked$( ((failed)) && echo ", FAILED")"
exit $failed
