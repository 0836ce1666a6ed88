#!/bin/sh
# spindle-demo over shared memory leaves nothing of its run in /dev/shm and no socket (its
# segments are memfds, freed by the kernel with the last process that maps them).
#
#   shm_leaves_nothing.sh <path to spindle-demo>
set -u
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$1" --samples 2000 --transport shm >"$out" 2>&1 &
pid=$!
wait "$pid"
rc=$?
cat "$out"
fail=0
if [ "$rc" -ne 0 ]; then echo "CHECK FAILED: exit status $rc"; fail=1; fi
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
