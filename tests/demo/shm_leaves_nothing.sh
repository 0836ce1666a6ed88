#!/bin/sh
# spindle-demo over shared memory leaves no segment of its run in /dev/shm (each member's
# transport removes its own when the participant goes).
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
left=$(ls /dev/shm | grep -c "^spindle-demo-$pid\.")
if [ "$left" -ne 0 ]; then
  echo "CHECK FAILED: $left shared-memory segment(s) of this run remain:"
  ls /dev/shm | grep "^spindle-demo-$pid\."
  fail=1
fi
if grep -q "removed .* shared-memory segment" "$out"; then
  echo "CHECK FAILED: the parent had to remove segments a member left"; fail=1
fi
exit $fail
