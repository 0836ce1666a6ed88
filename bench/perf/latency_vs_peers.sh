#!/usr/bin/env bash
# Issue 33's figures in one sitting: the 64 B round trip (p50, p99) and 64 B to 3
# subscribers, Spindle DDS over shm, auto (the default) and tcp beside Cyclone DDS over UDP
# (/work/shared/peers/run_peers.sh), the raw transports and a bare loopback TCP socket
# ping-pong (spindle_transport_bench, the physical reference). Every line is in the peers'
# format; each repetition runs all of them back to back.
#
#   bench/perf/latency_vs_peers.sh [REPS]     (default 3; about a minute a repetition)
#
# Each repetition ends with issue 50's ratios side by side ("# verdict"): the raw tcp
# transport's and Spindle DCPS tcp's 64 B round trip against the bare socket's (p50, and p99
# against its p99), 10 KiB and 1 MiB to one subscriber over shm with loans (spindle-perf
# --loan) against the raw shm transport's stream of the same size, and 64 B to 3
# subscribers, each, against Cyclone.
#
# POLL_IDLE=1 holds /dev/cpu_dma_latency at 0 (no vCPU halt) for the whole run, as the
# peers' script does: compare latencies only under one setting.
set -euo pipefail
reps=${1:-3}
here=$(cd "$(dirname "$0")/../.." && pwd)
perf=${SPINDLE_PERF:-$here/build/release/tools/perf/spindle-perf}
raw=${SPINDLE_TRANSPORT_BENCH:-$here/build/release/bench/transport/spindle_transport_bench}
peers=${PEERS_SCRIPT:-/work/shared/peers/run_peers.sh}
source "$here/bench/perf/poll_idle.sh"
echo "# $(date -u +%FT%TZ) $(nproc) CPUs, $(git -C "$here" rev-parse --short HEAD)"
lines=$(mktemp)
trap 'rm -f "$lines"' EXIT
# The value of the first line matching peer, transport, size and metric in $lines.
value() {
  awk -v p="peer=$1" -v t="transport=$2" -v s="size=$3" -v m="metric=$4" \
    '$1 == p && $2 == t && $3 == s && $5 == m { sub("value=", "", $6); print $6; exit }' "$lines"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b == 0) print "?"; else printf "%.2f", a / b }'; }
for ((r = 1; r <= reps; ++r)); do
  echo "# repetition $r, $(date -u +%H:%M:%S)"
  : >"$lines"
  {
    # The peers' script holds POLL_IDLE itself when asked; here the outer hold covers it.
    # Cyclone alone is needed: with it installed, the peers' script installs nothing (the
    # others it would fetch need a network that tools/contained does not have).
    no_install=${NO_INSTALL:-$(dpkg -s cyclonedds-tools >/dev/null 2>&1 && echo 1 || echo "")}
    NO_INSTALL=$no_install PEERS="cyclonedds:udp" SIZES=64 SUBS=3 DUR=3 POLL_IDLE=0 \
      timeout 300 bash "$peers" 2>/dev/null | grep '^peer=' || echo "# peers failed"
    timeout 300 "$raw" --transport socket,tcp,shm --sizes 64,10240 --iterations 5000 2>/dev/null |
      grep '^peer=' | grep -v cpu_pct || echo "# raw transports failed"
    timeout 120 "$raw" --transport shm --sizes 1048576 2>/dev/null | grep '^peer=' |
      grep -v cpu_pct || echo "# raw shm 1 MiB failed"
    for t in shm auto tcp; do
      timeout 120 "$perf" --transport "$t" --tests lat,thr --sizes 64 --subs 3 --duration 3 \
        --warmup 1 2>&1 | grep '^peer=' || echo "# spindle $t failed"
    done
    for size in 10240 1048576; do
      timeout 120 "$perf" --loan --transport shm --tests thr --sizes "$size" --subs 1 \
        --duration 3 --warmup 1 2>&1 | grep '^peer=' || echo "# spindle --loan $size failed"
    done
  } | tee "$lines"
  sock50=$(value bare-socket tcp 64 latency_us_p50)
  sock99=$(value bare-socket tcp 64 latency_us_p99)
  echo "# verdict $r: raw tcp 64 B p50 $(ratio "$(value spindle-raw tcp 64 latency_us_p50)" "$sock50")x" \
    "the socket's (target <= 1.3); DCPS tcp p50 $(ratio "$(value spindle tcp 64 latency_us_p50)" "$sock50")x" \
    "(<= 2), p99 $(ratio "$(value spindle tcp 64 latency_us_p99)" "$sock99")x the socket's p99 (<= 2.5)"
  echo "# verdict $r: 10 KiB -> 1 sub over shm with loans" \
    "$(ratio "$(value spindle-loan shm 10240 throughput_MBps)" "$(value spindle-raw shm 10240 throughput_MBps)")x" \
    "the raw shm stream (>= 0.30), 1 MiB" \
    "$(ratio "$(value spindle-loan shm 1048576 throughput_MBps)" "$(value spindle-raw shm 1048576 throughput_MBps)")x" \
    "(>= 0.30); 64 B -> 3 subs, each: tcp" \
    "$(ratio "$(value spindle tcp 64 throughput_msgs_s)" "$(value cyclonedds udp 64 throughput_msgs_s)")x" \
    "Cyclone (>= 1.0), shm $(ratio "$(value spindle shm 64 throughput_msgs_s)" "$(value cyclonedds udp 64 throughput_msgs_s)")x (>= 1.5)"
done
