#!/bin/sh
# spindle-demo when a member dies: member <node> is SIGKILLed mid-run (node 0 or 1 is a writer,
# node 2 only reads, so the writers' rings fill up until their writes time out). The demo must
# name the dead member, exit 1 without aborting (no uncaught exception in a survivor), and
# leave nothing of its run in /dev/shm and no socket behind (the killed member's segments are
# memfds: the kernel frees them with the last process that maps them).
#
#   member_dies.sh <path to spindle-demo> <tcp|shm> <node>
set -u
demo=$1
transport=$2
node=$3
out=$(mktemp)
trap 'rm -f "$out"' EXIT

"$demo" --samples 50000000 --transport "$transport" >"$out" 2>&1 &
pid=$!

# The member process of <node>: a descendant of the demo whose environment names it.
victim=""
i=0
while [ -z "$victim" ] && [ $i -lt 400 ]; do
  for p in $(pgrep -P "$pid") $(for c in $(pgrep -P "$pid"); do pgrep -P "$c"; done); do
    if tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "SPINDLE_NODE_ID=$node" &&
       tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -q -- '--member'; then
      victim=$p
    fi
  done
  i=$((i + 1))
  sleep 0.05
done
if [ -z "$victim" ]; then
  echo "member node $node never started"; cat "$out"; kill "$pid" 2>/dev/null; exit 1
fi
sleep 4  # let the members connect and exchange samples
kill -9 "$victim"
wait "$pid"
rc=$?
cat "$out"
fail=0
if [ "$rc" -ne 1 ]; then echo "CHECK FAILED: exit status $rc, expected 1"; fail=1; fi
if ! grep -q "FAIL node $node was killed by signal 9" "$out"; then
  echo "CHECK FAILED: the dead member is not named"; fail=1
fi
if grep -q -e "terminate called" -e "Aborted" -e "signal 6" "$out"; then
  echo "CHECK FAILED: a member aborted"; fail=1
fi
# Sockets too: each member's transport serves its segments on @spindle-demo-<pid>.d0.n<id>.
if grep -q " @spindle-demo-$pid\." /proc/net/unix; then
  echo "CHECK FAILED: a shared-memory socket of this run remains:"
  grep " @spindle-demo-$pid\." /proc/net/unix
  fail=1
fi
left=$(ls /dev/shm | grep -c "^spindle-demo-$pid\.")
if [ "$left" -ne 0 ]; then
  echo "CHECK FAILED: $left shared-memory segment(s) of this run remain:"
  ls /dev/shm | grep "^spindle-demo-$pid\."
  fail=1
fi
exit $fail
