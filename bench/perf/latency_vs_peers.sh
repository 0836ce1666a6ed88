#!/usr/bin/env bash
# Issue 33's figures in one sitting: the 64 B round trip (p50, p99) and 64 B to 3
# subscribers, Spindle DDS over shm, auto (the default) and tcp beside Cyclone DDS over UDP
# (/work/shared/peers/run_peers.sh), the raw transports and a bare loopback TCP socket
# ping-pong (spindle_transport_bench, the physical reference). Every line is in the peers'
# format; each repetition runs all of them back to back.
#
#   bench/perf/latency_vs_peers.sh [REPS]     (default 3; about 2 minutes a repetition)
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
for ((r = 1; r <= reps; ++r)); do
  echo "# repetition $r, $(date -u +%H:%M:%S)"
  # The peers' script holds POLL_IDLE itself when asked; here the outer hold covers it.
  PEERS="cyclonedds:udp" SIZES=64 SUBS=3 DUR=3 POLL_IDLE=0 \
    timeout 300 bash "$peers" 2>/dev/null | grep '^peer=' || echo "# peers failed"
  timeout 300 "$raw" --transport socket,tcp,shm --sizes 64 --iterations 5000 2>/dev/null |
    grep '^peer=' | grep latency || echo "# raw transports failed"
  for t in shm auto tcp; do
    timeout 120 "$perf" --transport "$t" --tests lat,thr --sizes 64 --subs 3 --duration 3 \
      --warmup 1 2>&1 | grep '^peer=' || echo "# spindle $t failed"
  done
done
