#!/usr/bin/env bash
# The `logged` level's throughput (issue 22's benchmark), in one sitting: for 1 KB and 10 KB
# samples, one subscriber, spindle-perf with consistency atomic, then logged under each fsync
# policy (every sample's batch, every 10 ms, never), on shm and tcp; and the disk's own
# append speed in the same run (storage_bench: write alone, write+fdatasync per record, and
# the log's append with a sync per record, per 64, or none). Prints every line, then the
# ratios of each logged figure to atomic and to the raw write+fdatasync of the same size.
#
#   bench/perf/logged_vs_atomic.sh [REPS] [LOG_DIR]   (default 1, /var/tmp; ~2 min a rep)
set -euo pipefail
reps=${1:-1}
dir=${2:-/var/tmp}
here=$(cd "$(dirname "$0")/../.." && pwd)
perf=${SPINDLE_PERF:-$here/build/release/tools/perf/spindle-perf}
bench=${STORAGE_BENCH:-$here/build/release/bench/storage/storage_bench}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for ((r = 1; r <= reps; ++r)); do
  echo "# repetition $r, $(date -u +%H:%M:%S)"
  timeout 120 "$bench" --sizes 1024,10240 --duration 2 --dir "$dir" | tee -a "$out"
  for t in shm tcp; do
    for mode in atomic logged:every logged:periodic logged:never; do
      level=${mode%%:*}
      fsync=${mode#*:}
      [[ $level == atomic ]] && fsync=every
      timeout 300 "$perf" --transport "$t" --tests thr --sizes 1024,10240 --subs 1 \
        --duration 3 --warmup 1 --consistency "$level" --fsync "$fsync" --log-dir "$dir" 2>&1 |
        grep '^peer=' | grep MBps | tee -a "$out" || echo "# spindle $t $mode failed"
    done
  done
done
echo "# ratios (medians over the repetitions): logged / atomic, logged / raw-fdatasync"
awk '
  /^peer=/ && (/metric=MBps / || /metric=throughput_MBps /) {
    split($0, f, " "); peer = substr(f[1], 6); tr = substr(f[2], 11); size = substr(f[3], 6)
    v = substr(f[6], 7); key = peer " " tr " " size; n[key]++; vals[key, n[key]] = v
  }
  function median(key,   i, j, t, a, m) {
    m = n[key]; for (i = 1; i <= m; i++) a[i] = vals[key, i]
    for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
  }
  END {
    split("shm tcp", trs, " "); split("1024 10240", sizes, " ")
    split("spindle-logged spindle-logged-periodic spindle-logged-never", levels, " ")
    for (ti = 1; ti <= 2; ti++) for (si = 1; si <= 2; si++) for (li = 1; li <= 3; li++) {
      t = trs[ti]; s = sizes[si]; l = levels[li]
      k = l " " t " " s; a = "spindle " t " " s; raw = "raw-fdatasync disk " s
      if (!(k in n) || !(a in n) || !(raw in n)) continue
      printf "%s transport=%s size=%s MBps=%.1f ratio_to_atomic=%.2f ratio_to_raw_fdatasync=%.2f\n",
        l, t, s, median(k), median(k) / median(a), median(k) / median(raw)
    }
  }' "$out"
