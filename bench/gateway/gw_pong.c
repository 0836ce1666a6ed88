/* gw_pong: the reference pong of the gateway benchmark (docs/dev/interop-bench.md), a plain
 * Cyclone DDS C program: reads GatewayBenchPing and answers on GatewayBenchPong in one RTPS
 * domain as the sample's `reply` says (1: echo it whole, 2: acknowledge it with an empty
 * payload, 0: nothing). gw_pong_spindle.cpp does the same in a Spindle domain.
 *
 *   gw_pong DOMAIN
 *
 * Prints "ready" once its reader and writer exist; runs until SIGTERM or SIGINT.
 * Reliable, KEEP_ALL both ways.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dds/dds.h>

#include "GatewayBench.h"

#define MAX_TAKE 256

static volatile sig_atomic_t g_stop = 0;

static void on_signal(int sig) {
  (void)sig;
  g_stop = 1;
}

static void fail(const char* what, dds_return_t rc) {
  fprintf(stderr, "gw_pong: %s: %s\n", what, dds_strretcode(rc));
  exit(1);
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: gw_pong DOMAIN\n");
    return 2;
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_signal;
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);

  const dds_entity_t dp = dds_create_participant((dds_domainid_t)atoi(argv[1]), NULL, NULL);
  if (dp < 0) fail("participant", dp);
  dds_qos_t* q = dds_create_qos();
  dds_qset_reliability(q, DDS_RELIABILITY_RELIABLE, DDS_SECS(10));
  dds_qset_history(q, DDS_HISTORY_KEEP_ALL, 0);
  const dds_entity_t t_ping =
      dds_create_topic(dp, &GatewayBench_Sample_desc, "GatewayBenchPing", q, NULL);
  const dds_entity_t t_pong =
      dds_create_topic(dp, &GatewayBench_Sample_desc, "GatewayBenchPong", q, NULL);
  if (t_ping < 0 || t_pong < 0) fail("topic", t_ping < 0 ? t_ping : t_pong);
  const dds_entity_t writer = dds_create_writer(dp, t_pong, q, NULL);
  if (writer < 0) fail("writer", writer);
  const dds_entity_t reader = dds_create_reader(dp, t_ping, q, NULL);
  if (reader < 0) fail("reader", reader);
  dds_delete_qos(q);
  const dds_entity_t ws = dds_create_waitset(dp);
  const dds_entity_t cond = dds_create_readcondition(reader, DDS_ANY_STATE);
  if (ws < 0 || cond < 0) fail("waitset", ws < 0 ? ws : cond);
  dds_return_t rc = dds_waitset_attach(ws, cond, 0);
  if (rc < 0) fail("waitset attach", rc);
  printf("ready\n");
  fflush(stdout);

  static void* samples[MAX_TAKE];
  static dds_sample_info_t infos[MAX_TAKE];
  GatewayBench_Sample ack;
  memset(&ack, 0, sizeof(ack));
  ack.reply = 2;
  while (!g_stop) {
    dds_attach_t fired;
    rc = dds_waitset_wait(ws, &fired, 1, DDS_MSECS(200));
    if (rc < 0) fail("waitset", rc);
    for (;;) {
      samples[0] = NULL;
      const dds_return_t n = dds_take(reader, samples, infos, MAX_TAKE, MAX_TAKE);
      if (n < 0) fail("take", n);
      for (dds_return_t i = 0; i < n; ++i) {
        const GatewayBench_Sample* s = samples[i];
        if (!infos[i].valid_data) continue;
        if (s->reply == 1) {
          rc = dds_write(writer, s);
        } else if (s->reply == 2) {
          ack.seq = s->seq;
          rc = dds_write(writer, &ack);
        }
        if (rc < 0) fail("write", rc);
      }
      if (n > 0) dds_return_loan(reader, samples, n);
      if (n < MAX_TAKE) break;
    }
  }
  dds_delete(dp);
  return 0;
}
