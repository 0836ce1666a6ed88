#!/usr/bin/env bash
# ddsperf_pong.sh: Cyclone DDS's `ddsperf ping` (Debian cyclonedds-tools) in an RTPS domain
# against gw_ddsperf_pong, a Spindle pong, through spindle-gateway (docs/dev/interop-bench.md,
# "ddsperf"). Run it under tools/contained (a network of its own, loopback only):
#
#   tools/contained -- bench/gateway/ddsperf_pong.sh BUILD_DIR [--topic T] [--pong-partition P]
#                      [--unreliable] -- DDSPERF_ARGS...
#
#   BUILD_DIR         the build tree holding spindle-gateway and gw_ddsperf_pong
#   --topic T         ddsperf's -T (KS, K32, K256, OU, UK16, UK1024, S16, S256, S4k, S32k)
#   --pong-partition  the partition of the gateway's pong topic (default '*': ddsperf's ping
#                     reads pongs in a partition named after its own participant GUID)
#   --unreliable      ddsperf's -u (DDSPerfU* topics, best effort)
#   DDSPERF_ARGS      ddsperf's arguments (give -T and -u there too), e.g. -D 10 ping 1000Hz
#
# Prints ddsperf's output, the pong's count and the gateway's counters; exits with ddsperf's
# status. Every wait is bounded.
set -uo pipefail
build=$(cd "${1:?usage: ddsperf_pong.sh BUILD_DIR [options] -- DDSPERF_ARGS}" && pwd); shift
topic=KS partition='*' reliability=reliable kind=R
while (($#)); do
  case $1 in
    --topic) topic=$2; shift 2 ;;
    --pong-partition) partition=$2; shift 2 ;;
    --unreliable) reliability=best_effort kind=U; shift ;;
    --) shift; break ;;
    *) echo "ddsperf_pong.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
# A network of its own (tools/contained): loopback and nothing else.
[[ $(ip -o link show | grep -vc ': lo:') == 0 ]] ||
  { echo "ddsperf_pong.sh: run it under tools/contained (this network has more than lo)" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
gateway=$build/interop/gateway/spindle-gateway
pong=$build/bench/gateway/gw_ddsperf_pong
for f in "$gateway" "$pong" /usr/bin/ddsperf; do
  [[ -x $f ]] || { echo "ddsperf_pong.sh: $f is missing" >&2; exit 2; }
done
ip link set lo multicast on || { echo "ddsperf_pong.sh: cannot turn on multicast on lo" >&2; exit 2; }
unset SPINDLE_CONFIG CYCLONEDDS_URI
dir=$(mktemp -d /tmp/ddsperf_pong.XXXXXX)
export XDG_STATE_HOME=$dir
type=$(case $topic in KS) echo KeyedSeq ;; K32) echo Keyed32 ;; K256) echo Keyed256 ;;
  OU) echo OneULong ;; UK16) echo Unkeyed16 ;; UK1024) echo Unkeyed1024 ;; *) echo "Struct${topic#S}" ;; esac)
cat >"$dir/gateway.yaml" <<YAML
spindle: {domain: 0}
rtps: {domain: 0}
idl: [$here/ddsperf_types.idl]
topics:
  - {name: DDSPerf${kind}Ping$topic, type: $type, direction: to_spindle,
     qos: {reliability: $reliability, history: 1}}
  - {name: DDSPerf${kind}Pong$topic, type: $type, direction: to_rtps, partitions: ['$partition'],
     qos: {reliability: $reliability, history: 1}}
YAML
pong_args=(-T "$topic"); [[ $kind == U ]] && pong_args+=(-u)
"$pong" "${pong_args[@]}" 0 >"$dir/pong.out" 2>&1 &
pong_pid=$!
"$gateway" --config "$dir/gateway.yaml" >"$dir/gateway.out" 2>&1 &
gw_pid=$!
for ((i = 0; i < 600; ++i)); do
  grep -q ': ready (' "$dir/gateway.out" && break
  kill -0 $gw_pid 2>/dev/null || break
  sleep 0.1
done
grep -q ': ready (' "$dir/gateway.out" || { echo "the gateway did not get ready:"; cat "$dir/gateway.out"; }
echo "# ddsperf $*"
timeout 120 ddsperf "$@"
rc=$?
echo "# ddsperf exit status $rc"
kill -TERM $gw_pid $pong_pid
wait $gw_pid $pong_pid
echo "# gw_ddsperf_pong:"; sed 's/^/  /' "$dir/pong.out"
echo "# spindle-gateway:"; sed 's/^/  /' "$dir/gateway.out"
rm -rf "$dir"
exit $rc
