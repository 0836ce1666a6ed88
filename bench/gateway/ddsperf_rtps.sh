#!/usr/bin/env bash
# ddsperf_rtps.sh: the checks of docs/dev/interop-bench.md ("ddsperf") that need no Spindle
# application. Run it under tools/contained (a network of its own, loopback only):
#
#   tools/contained -- bench/gateway/ddsperf_rtps.sh direct [DDSPERF_PING_ARGS...]
#       ddsperf ping against ddsperf pong, no gateway (the reference); default args: -D 4 ping 1000Hz
#   tools/contained -- bench/gateway/ddsperf_rtps.sh pong BUILD_DIR
#       ddsperf ping (RTPS domain 1) -> spindle-gateway -> ddsperf pong (RTPS domain 0): does
#       the pong answer a ping whose writer is the gateway's?
#   tools/contained -- bench/gateway/ddsperf_rtps.sh sub BUILD_DIR
#       ddsperf pub (RTPS domain 1) -> spindle-gateway -> ddsperf sub (RTPS domain 0)
#
# Exit status: the ping's (direct), else 0 once everything ran. Every wait is bounded.
set -uo pipefail
mode=${1:?usage: ddsperf_rtps.sh direct|pong|sub [BUILD_DIR | DDSPERF_ARGS...]}; shift
here=$(cd "$(dirname "$0")" && pwd)
[[ $(ip -o link show | grep -vc ': lo:') == 0 ]] ||
  { echo "ddsperf_rtps.sh: run it under tools/contained (this network has more than lo)" >&2; exit 2; }
command -v ddsperf >/dev/null || { echo "ddsperf_rtps.sh: ddsperf is missing (cyclonedds-tools)" >&2; exit 2; }
ip link set lo multicast on || { echo "ddsperf_rtps.sh: cannot turn on multicast on lo" >&2; exit 2; }
unset SPINDLE_CONFIG CYCLONEDDS_URI
dir=$(mktemp -d /tmp/ddsperf_rtps.XXXXXX)
export XDG_STATE_HOME=$dir
trap 'rm -rf "$dir"' EXIT

if [[ $mode == direct ]]; then
  (($#)) || set -- -D 4 ping 1000Hz
  timeout 120 ddsperf pong >/dev/null 2>&1 &
  pong=$!
  echo "# ddsperf $*   (against ddsperf pong)"
  timeout 60 ddsperf "$@" | grep -v 'rss:'
  rc=${PIPESTATUS[0]}
  kill -TERM $pong
  wait $pong
  exit "$rc"
fi

build=$(cd "${1:?ddsperf_rtps.sh $mode: BUILD_DIR is missing}" && pwd)
gateway=$build/interop/gateway/spindle-gateway
[[ -x $gateway ]] || { echo "ddsperf_rtps.sh: $gateway is missing" >&2; exit 2; }
{
  echo "rtps: [{domain: 0, name: a}, {domain: 1, name: b}]"
  echo "idl: [$here/ddsperf_types.idl]"
  echo "topics:"
  case $mode in
    pong)
      echo "  - {name: DDSPerfRPingKS, type: KeyedSeq, direction: to_a, qos: {reliability: reliable, history: 1}}"
      echo "  - {name: DDSPerfRPongKS, type: KeyedSeq, direction: to_b, partitions: ['*'], qos: {reliability: reliable, history: 1}}" ;;
    sub)
      echo "  - {name: DDSPerfRDataKS, type: KeyedSeq, direction: to_a, qos: {reliability: reliable, history: all}}" ;;
    *) echo "ddsperf_rtps.sh: unknown mode '$mode' (direct, pong, sub)" >&2; exit 2 ;;
  esac
} >"$dir/gateway.yaml"
"$gateway" --config "$dir/gateway.yaml" >"$dir/gateway.out" 2>&1 &
gw=$!
for ((i = 0; i < 600; ++i)); do
  grep -q ': ready (' "$dir/gateway.out" && break
  kill -0 $gw 2>/dev/null || break
  sleep 0.1
done
if [[ $mode == pong ]]; then
  timeout 60 ddsperf -i 0 -D 6 pong >"$dir/far.out" 2>&1 &
  far=$!
  sleep 0.5
  echo "# ddsperf -i 1 -D 5 ping 100Hz   (against ddsperf -i 0 -D 6 pong through the gateway)"
  timeout 60 ddsperf -i 1 -D 5 ping 100Hz | grep -v 'rss:'
  wait $far
  echo "# ddsperf -i 0 -D 6 pong (each line once, with its count):"
  grep -v 'rss:' "$dir/far.out" | sort | uniq -c
else
  timeout 60 ddsperf -i 0 -D 7 sub >"$dir/far.out" 2>&1 &
  far=$!
  sleep 0.5
  echo "# ddsperf -i 1 -D 5 pub 1000Hz   (into ddsperf -i 0 -D 7 sub through the gateway)"
  timeout 60 ddsperf -i 1 -D 5 pub 1000Hz | grep -v 'rss:'
  wait $far
  echo "# ddsperf -i 0 -D 7 sub:"
  grep -v 'rss:' "$dir/far.out"
fi
kill -TERM $gw
wait $gw
echo "# spindle-gateway:"
sed 's/^/  /' "$dir/gateway.out"
exit 0
