#!/usr/bin/env bash
# The latency-versus-CPU knob (engine.idle_spin: how long a protocol thread busy-polls after
# its last work before it sleeps), measured in one sitting: spindle-perf's 64 B round trip
# and the CPU of both processes, back to back and at steady low rates, for several spins,
# on shm and tcp. Each line is spindle-perf's, prefixed with the run's settings:
#
#   idle_spin_us=<us> rate_hz=<hz|0: back to back> peer=spindle transport=... metric=... value=...
#
#   bench/perf/idle_spin_curve.sh [SPINS] [RATES]   (defaults below; ~4 s a run)
# POLL_IDLE=1 holds /dev/cpu_dma_latency at 0 (no vCPU halt) as ../shared/peers does.
set -euo pipefail
spins=${1:-0,20,100,1000,10000}
rates=${2:-0,1000,100}
here=$(cd "$(dirname "$0")/../.." && pwd)
perf=${SPINDLE_PERF:-$here/build/release/tools/perf/spindle-perf}
source "$here/bench/perf/poll_idle.sh"
echo "# $(date -u +%FT%TZ) $(nproc) CPUs"
for t in shm tcp; do
  for spin in ${spins//,/ }; do
    for rate in ${rates//,/ }; do
      timeout 120 "$perf" --transport "$t" --tests lat --sizes 64 --duration 3 --warmup 1 \
        --idle-spin "$spin" --rate "$rate" 2>&1 | grep '^peer=' |
        sed "s/^/idle_spin_us=$spin rate_hz=$rate /" || echo "# $t spin $spin rate $rate failed"
    done
  done
done
