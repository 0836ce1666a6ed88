#!/usr/bin/env bash
# Large samples (100 KiB, 1 MiB), one subscriber, Spindle DDS beside the peers in one
# sitting: each repetition runs the peers (Cyclone DDS UDP, Fast DDS with a 64 MiB SHM
# segment; /work/shared/peers/run_peers.sh) and then spindle-perf on shm and tcp, twice:
# with the domain's default 1 KiB slot (samples go by RDMC: peer=spindle-rdmc) and with
# slots sized for the sample (SMC: peer=spindle-smc). Prints the lines of every run.
#
#   bench/perf/large_vs_peers.sh [REPS]      (default 3; about 2.5 minutes a repetition)
set -euo pipefail
reps=${1:-3}
here=$(cd "$(dirname "$0")/../.." && pwd)
perf=${SPINDLE_PERF:-$here/build/release/tools/perf/spindle-perf}
peers=${PEERS_SCRIPT:-/work/shared/peers/run_peers.sh}
for ((r = 1; r <= reps; ++r)); do
  echo "# repetition $r, $(date -u +%H:%M:%S)"
  PEERS="cyclonedds:udp fastdds:shm64MiB+udp" SIZES="102400 1048576" SUBS=1 TESTS=thr DUR=3 \
    timeout 600 bash "$peers" 2>/dev/null | grep '^peer=' | grep MBps || echo "# peers failed"
  for t in shm tcp; do
    for mode in rdmc smc; do
      slot=1024
      [[ $mode == smc ]] && slot=0
      timeout 300 "$perf" --transport "$t" --tests thr --sizes 102400,1048576 --subs 1 \
        --duration 3 --warmup 1 --slot-size "$slot" 2>&1 | grep MBps |
        sed "s/^peer=spindle /peer=spindle-$mode /" || echo "# spindle $t $mode failed"
    done
  done
done
