/* gw_ping: the measuring side of the gateway benchmark (docs/dev/interop-bench.md), a plain
 * Cyclone DDS C program (GatewayBench::Sample from Cyclone's own idlc). It writes on
 * GatewayBenchPing and reads GatewayBenchPong in one RTPS domain; whatever answers there (a
 * gw_pong, or spindle-gateway passing the samples to a Spindle pong and back) is measured
 * the same way. Driven by lines on standard input:
 *
 *   gw_ping DOMAIN
 *
 *   lat SIZE N        N round trips of SIZE payload octets (each waits for its echo, the
 *                     round trip timed on this process's monotonic clock), after N/10 of
 *                     warm-up; prints
 *                     "lat size=S n=N p50_us=.. p90_us=.. p99_us=.. mean_us=.. min_us=.. max_us=.."
 *   thr SIZE SECONDS WINDOW
 *                     writes SIZE-octet samples for SECONDS, at most WINDOW of them not yet
 *                     acknowledged (the pong acknowledges every WINDOW/4-th and the last),
 *                     then waits for the last acknowledgement; prints
 *                     "thr size=S samples=N seconds=T samples_per_s=.. MBps=.."
 *   quit
 *
 * It prints "ready" once a first echo came back (discovery is done on every hop), or
 * "FAIL why" and exits 1; every wait is bounded. Reliable, KEEP_ALL both ways.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <dds/dds.h>

#include "GatewayBench.h"

#define MAX_TAKE 256

static dds_entity_t g_writer, g_reader, g_waitset;
static uint64_t g_seq; /* the last sequence number written: echoes of earlier ones are stale */

static void fail(const char* what, dds_return_t rc) {
  if (rc < 0)
    printf("FAIL %s: %s\n", what, dds_strretcode(rc));
  else
    printf("FAIL %s\n", what);
  fflush(stdout);
  exit(1);
}

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void write_sample(GatewayBench_Sample* s, uint64_t seq, uint32_t reply) {
  s->seq = seq;
  s->reply = reply;
  const dds_return_t rc = dds_write(g_writer, s);
  if (rc != DDS_RETCODE_OK) fail("write", rc);
}

/* Takes what is there; the highest seq among the pong's samples, or 0. */
static uint64_t take_highest(void) {
  static void* samples[MAX_TAKE];
  static dds_sample_info_t infos[MAX_TAKE];
  uint64_t high = 0;
  for (;;) {
    samples[0] = NULL;
    const dds_return_t n = dds_take(g_reader, samples, infos, MAX_TAKE, MAX_TAKE);
    if (n < 0) fail("take", n);
    for (dds_return_t i = 0; i < n; ++i) {
      const GatewayBench_Sample* s = samples[i];
      if (infos[i].valid_data && s->seq > high) high = s->seq;
    }
    if (n > 0) dds_return_loan(g_reader, samples, n);
    if (n < MAX_TAKE) return high;
  }
}

/* Waits (at most `limit_ns`) for data; 0 when none came. */
static int wait_data(int64_t limit_ns) {
  dds_attach_t fired;
  const dds_return_t n = dds_waitset_wait(g_waitset, &fired, 1, limit_ns);
  if (n < 0) fail("waitset", n);
  return n > 0;
}

/* Writes `seq` for an echo and returns once it is back; -1 after `limit_ns`. */
static int64_t round_trip(GatewayBench_Sample* s, int64_t limit_ns) {
  const uint64_t seq = ++g_seq;
  const int64_t t0 = now_ns();
  write_sample(s, seq, 1);
  for (;;) {
    if (take_highest() >= seq) return now_ns() - t0;
    const int64_t left = t0 + limit_ns - now_ns();
    if (left <= 0) return -1;
    wait_data(left);
  }
}

static int cmp_i64(const void* a, const void* b) {
  const int64_t x = *(const int64_t*)a, y = *(const int64_t*)b;
  return (x > y) - (x < y);
}

static void set_size(GatewayBench_Sample* s, uint32_t size) {
  free(s->payload._buffer);
  s->payload._buffer = calloc(size > 0 ? size : 1, 1);
  if (s->payload._buffer == NULL) fail("out of memory", 0);
  for (uint32_t i = 0; i < size; ++i)
    s->payload._buffer[i] = (uint8_t)i;
  s->payload._length = s->payload._maximum = size;
  s->payload._release = false;
}

static void latency(uint32_t size, uint32_t n) {
  GatewayBench_Sample s;
  memset(&s, 0, sizeof(s));
  set_size(&s, size);
  int64_t* rtt = malloc(sizeof(*rtt) * (n > 0 ? n : 1));
  if (rtt == NULL) fail("out of memory", 0);
  for (uint32_t i = 0; i < n / 10; ++i)
    if (round_trip(&s, DDS_SECS(5)) < 0) fail("lat: a warm-up echo did not come back in 5 s", 0);
  double sum = 0;
  for (uint32_t i = 0; i < n; ++i) {
    rtt[i] = round_trip(&s, DDS_SECS(5));
    if (rtt[i] < 0) fail("lat: an echo did not come back in 5 s", 0);
    sum += (double)rtt[i];
  }
  qsort(rtt, n, sizeof(*rtt), cmp_i64);
#define PCT(q) ((double)rtt[(size_t)((q) * (double)(n - 1))] / 1e3)
  printf(
      "lat size=%u n=%u p50_us=%.3f p90_us=%.3f p99_us=%.3f mean_us=%.3f min_us=%.3f max_us=%.3f\n",
      size, n, PCT(0.5), PCT(0.9), PCT(0.99), sum / n / 1e3, PCT(0.0), PCT(1.0));
#undef PCT
  fflush(stdout);
  free(rtt);
  free(s.payload._buffer);
}

static void throughput(uint32_t size, double seconds, uint32_t window) {
  GatewayBench_Sample s;
  memset(&s, 0, sizeof(s));
  set_size(&s, size);
  if (window < 4) window = 4;
  const uint32_t every = window / 4;
  /* Start with nothing outstanding. */
  if (round_trip(&s, DDS_SECS(5)) < 0) fail("thr: the opening echo did not come back in 5 s", 0);
  const uint64_t first = g_seq + 1;
  uint64_t acked = g_seq;
  const int64_t t0 = now_ns();
  const int64_t end = t0 + (int64_t)(seconds * 1e9);
  while (now_ns() < end) {
    while (g_seq - acked >= window) {
      if (!wait_data(DDS_SECS(5))) fail("thr: no acknowledgement for 5 s", 0);
      const uint64_t h = take_highest();
      if (h > acked) acked = h;
    }
    ++g_seq;
    write_sample(&s, g_seq, (g_seq - first + 1) % every == 0 ? 2 : 0);
    if ((g_seq & 15) == 0) {
      const uint64_t h = take_highest();
      if (h > acked) acked = h;
    }
  }
  ++g_seq;
  write_sample(&s, g_seq, 2);
  const int64_t deadline = now_ns() + DDS_SECS(10);
  while (acked < g_seq) {
    const int64_t left = deadline - now_ns();
    if (left <= 0) fail("thr: the last acknowledgement did not come in 10 s", 0);
    wait_data(left);
    const uint64_t h = take_highest();
    if (h > acked) acked = h;
  }
  const double t = (double)(now_ns() - t0) / 1e9;
  const uint64_t n = g_seq - first + 1;
  printf("thr size=%u samples=%llu seconds=%.3f samples_per_s=%.1f MBps=%.3f\n", size,
         (unsigned long long)n, t, (double)n / t, (double)n * size / t / 1e6);
  fflush(stdout);
  free(s.payload._buffer);
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(
        stderr,
        "usage: gw_ping DOMAIN (commands on stdin: lat SIZE N, thr SIZE SECONDS WINDOW, quit)\n");
    return 2;
  }
  const dds_domainid_t domain = (dds_domainid_t)atoi(argv[1]);
  const dds_entity_t dp = dds_create_participant(domain, NULL, NULL);
  if (dp < 0) fail("participant", dp);
  dds_qos_t* q = dds_create_qos();
  dds_qset_reliability(q, DDS_RELIABILITY_RELIABLE, DDS_SECS(10));
  dds_qset_history(q, DDS_HISTORY_KEEP_ALL, 0);
  const dds_entity_t t_ping =
      dds_create_topic(dp, &GatewayBench_Sample_desc, "GatewayBenchPing", q, NULL);
  const dds_entity_t t_pong =
      dds_create_topic(dp, &GatewayBench_Sample_desc, "GatewayBenchPong", q, NULL);
  if (t_ping < 0 || t_pong < 0) fail("topic", t_ping < 0 ? t_ping : t_pong);
  g_writer = dds_create_writer(dp, t_ping, q, NULL);
  if (g_writer < 0) fail("writer", g_writer);
  g_reader = dds_create_reader(dp, t_pong, q, NULL);
  if (g_reader < 0) fail("reader", g_reader);
  dds_delete_qos(q);
  g_waitset = dds_create_waitset(dp);
  const dds_entity_t cond = dds_create_readcondition(g_reader, DDS_ANY_STATE);
  if (g_waitset < 0 || cond < 0) fail("waitset", g_waitset < 0 ? g_waitset : cond);
  const dds_return_t rc = dds_waitset_attach(g_waitset, cond, 0);
  if (rc < 0) fail("waitset attach", rc);

  /* Ready once an echo came back: the echoes of the earlier tries are stale then. */
  GatewayBench_Sample s;
  memset(&s, 0, sizeof(s));
  set_size(&s, 8);
  const int64_t deadline = now_ns() + DDS_SECS(60);
  while (round_trip(&s, DDS_MSECS(200)) < 0)
    if (now_ns() > deadline) fail("no echo within 60 s (is a pong or a gateway there?)", 0);
  free(s.payload._buffer);
  printf("ready\n");
  fflush(stdout);

  char line[256];
  while (fgets(line, sizeof(line), stdin) != NULL) {
    unsigned size = 0, n = 0, window = 0;
    double seconds = 0;
    if (sscanf(line, "lat %u %u", &size, &n) == 2 && n > 0) {
      latency(size, n);
    } else if (sscanf(line, "thr %u %lf %u", &size, &seconds, &window) == 3 && seconds > 0) {
      throughput(size, seconds, window);
    } else if (strncmp(line, "quit", 4) == 0) {
      break;
    } else {
      printf("FAIL unknown command: %s", line);
      fflush(stdout);
      return 1;
    }
  }
  dds_delete(dp);
  return 0;
}
