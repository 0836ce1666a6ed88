#!/usr/bin/env bash
# What security costs (issue 52's benchmark), in one sitting: Spindle DDS over tcp with and
# without a security section (docs/security.md), the 64 B round trip, 10 KiB throughput to one
# subscriber, and the time a participant takes to join through the join port (the TLS
# handshake included when secured). Each repetition runs the plain and the secured domain
# back to back; every line is in the peers' format, and the last lines give the ratio secured
# / plain of each figure's median over the repetitions.
#
#   bench/security/security_cost.sh [REPS]     (default 3; about a minute a repetition)
#
# The secured runs use a throwaway CA and one certificate (CN=spindle-perf) made here with
# the openssl command line, as docs/security.md shows; they are removed at the end.
set -euo pipefail
reps=${1:-3}
here=$(cd "$(dirname "$0")/../.." && pwd)
perf=${SPINDLE_PERF:-$here/build/release/tools/perf/spindle-perf}
pki=$(mktemp -d)
figures=$(mktemp)
trap 'rm -rf "$pki" "$figures"' EXIT
ec=(-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes)
openssl req -x509 "${ec[@]}" -days 2 -subj "/CN=spindle-perf CA" -keyout "$pki/ca.key" \
  -out "$pki/ca.pem" 2>/dev/null
openssl req "${ec[@]}" -subj "/CN=spindle-perf" -keyout "$pki/member.key" \
  -out "$pki/member.csr" 2>/dev/null
openssl x509 -req -in "$pki/member.csr" -CA "$pki/ca.pem" -CAkey "$pki/ca.key" \
  -CAcreateserial -days 2 -out "$pki/member.pem" 2>/dev/null
chmod 600 "$pki/member.key" "$pki/ca.key"
echo "# $(date -u +%FT%TZ) $(nproc) CPUs, $(git -C "$here" rev-parse --short HEAD)," \
  "$(grep -qw aes /proc/cpuinfo && echo AES-NI || echo 'no AES-NI')"
for ((r = 1; r <= reps; ++r)); do
  echo "# repetition $r, $(date -u +%H:%M:%S)"
  for mode in plain secure; do
    secured=()
    [[ $mode == secure ]] && secured=(--security "$pki")
    {
      timeout 300 "$perf" --transport tcp --tests lat --sizes 64 --duration 3 "${secured[@]}" ||
        echo "# $mode lat failed"
      timeout 300 "$perf" --transport tcp --tests thr --sizes 10240 --subs 1 --duration 3 \
        "${secured[@]}" || echo "# $mode thr failed"
      timeout 300 "$perf" --transport tcp --tests churn --sizes 64 --duration 4 "${secured[@]}" |
        grep 'metric=join_ms' || echo "# $mode join failed"
    } 2>&1 | grep -E '^(peer=|#)' | tee -a "$figures"
  done
done
# secured / plain, per (size, subs, metric): the medians over the repetitions.
awk '
  /^peer=/ {
    split($0, f, " ")
    for (i in f) { split(f[i], kv, "="); v[kv[1]] = kv[2] }
    key = v["size"] " " v["subs"] " " v["metric"]
    n[v["peer"], key]++
    x[v["peer"], key, n[v["peer"], key]] = v["value"]
    keys[key] = 1
  }
  function median(p, k,    m, i, j, t, a) {
    m = n[p, k]
    for (i = 1; i <= m; i++) a[i] = x[p, k, i]
    for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
  }
  END {
    for (k in keys) {
      if (!n["spindle", k] || !n["spindle-secure", k]) continue
      split(k, s, " ")
      plain = median("spindle", k); secure = median("spindle-secure", k)
      printf "peer=spindle-secure/spindle transport=tcp size=%s subs=%s metric=%s_ratio value=%.3f\n", s[1], s[2], s[3], plain ? secure / plain : 0
    }
  }' "$figures" | sort
