/* cyclone_shapes: a plain Cyclone DDS C program (Debian cyclonedds-dev, ShapeType from
 * Cyclone's own idlc) on one topic of ShapeType, driven by lines on standard input, for the
 * gateway tests (gateway_test.cpp). No Spindle code in it.
 *
 *   cyclone_shapes DOMAIN TOPIC [PARTITION]
 *
 * Commands (one per line):
 *   write COLOR X Y SIZE   writes a sample (source timestamp: now)
 *   writets COLOR X Y SIZE NS  writes with source timestamp NS (nanoseconds since the epoch)
 *   dispose COLOR          disposes the instance
 *   unregister COLOR       unregisters it
 *   matched                prints "matched R W": how many writers its reader and readers its
 *                          writer are matched with
 *   quit
 * Output: "ready" once, then for every sample taken
 *   "data COLOR X Y SIZE NS" or "disposed COLOR NS" or "no_writers COLOR NS" (NS: its source
 *   timestamp). Errors go to stderr; a failed command exits 1.
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dds/dds.h>

#include "ShapeType.h"

static void die(const char* what, dds_return_t rc) {
  fprintf(stderr, "cyclone_shapes: %s: %s\n", what, dds_strretcode(rc));
  exit(1);
}

#define MAX_TAKE 4096 /* more than a test has waiting: one take sees every folded state once */

static void take_all(dds_entity_t reader) {
  static void* samples[MAX_TAKE];
  static dds_sample_info_t infos[MAX_TAKE];
  for (;;) {
    samples[0] = NULL;
    const dds_return_t n = dds_take(reader, samples, infos, MAX_TAKE, MAX_TAKE);
    if (n < 0) die("take", n);
    for (dds_return_t i = 0; i < n; ++i) {
      const ShapeType* s = (const ShapeType*)samples[i];
      const long long ts = (long long)infos[i].source_timestamp;
      if (infos[i].valid_data) {
        printf("data %s %d %d %d %lld\n", s->color, s->x, s->y, s->shapesize, ts);
      } else if (infos[i].instance_state == DDS_NOT_ALIVE_DISPOSED_INSTANCE_STATE) {
        printf("disposed %s %lld\n", s->color, ts);
      } else if (infos[i].instance_state == DDS_NOT_ALIVE_NO_WRITERS_INSTANCE_STATE) {
        printf("no_writers %s %lld\n", s->color, ts);
      }
      /* A dispose or unregister that came while data of the instance waited folds into their state: say it
         once, after the last of them. */
      int later = 0;
      for (dds_return_t j = i + 1; j < n; ++j)
        later = later || infos[j].instance_handle == infos[i].instance_handle;
      if (infos[i].valid_data && !later &&
          infos[i].instance_state == DDS_NOT_ALIVE_DISPOSED_INSTANCE_STATE)
        printf("disposed %s %lld\n", s->color, ts);
      if (infos[i].valid_data && !later &&
          infos[i].instance_state == DDS_NOT_ALIVE_NO_WRITERS_INSTANCE_STATE)
        printf("no_writers %s %lld\n", s->color, ts);
    }
    if (n > 0) dds_return_loan(reader, samples, n);
    if (n < MAX_TAKE) break;
  }
  fflush(stdout);
}

int main(int argc, char** argv) {
  if (argc != 3 && argc != 4) {
    fprintf(stderr, "usage: cyclone_shapes DOMAIN TOPIC [PARTITION]\n");
    return 2;
  }
  const dds_domainid_t domain = (dds_domainid_t)atoi(argv[1]);
  const dds_entity_t pp = dds_create_participant(domain, NULL, NULL);
  if (pp < 0) die("participant", pp);
  const dds_entity_t topic = dds_create_topic(pp, &ShapeType_desc, argv[2], NULL, NULL);
  if (topic < 0) die("topic", topic);
  dds_qos_t* qos = dds_create_qos();
  dds_qset_reliability(qos, DDS_RELIABILITY_RELIABLE, DDS_SECS(1));
  dds_qset_history(qos, DDS_HISTORY_KEEP_ALL, 0);
  /* unregister leaves the instance alive (the default would dispose it too) */
  dds_qset_writer_data_lifecycle(qos, false);
  dds_qos_t* pqos = dds_create_qos();
  if (argc == 4) {
    const char* parts[1] = {argv[3]};
    dds_qset_partition(pqos, 1, parts);
  }
  const dds_entity_t pub = dds_create_publisher(pp, pqos, NULL);
  const dds_entity_t sub = dds_create_subscriber(pp, pqos, NULL);
  dds_delete_qos(pqos);
  if (pub < 0) die("publisher", pub);
  if (sub < 0) die("subscriber", sub);
  const dds_entity_t writer = dds_create_writer(pub, topic, qos, NULL);
  if (writer < 0) die("writer", writer);
  const dds_entity_t reader = dds_create_reader(sub, topic, qos, NULL);
  if (reader < 0) die("reader", reader);
  dds_delete_qos(qos);
  printf("ready\n");
  fflush(stdout);

  char line[512];
  size_t used = 0;
  for (;;) {
    struct pollfd p = {.fd = 0, .events = POLLIN};
    const int r = poll(&p, 1, 5);
    take_all(reader);
    if (r <= 0) continue;
    const ssize_t got = read(0, line + used, sizeof line - 1 - used);
    if (got <= 0) break;
    used += (size_t)got;
    line[used] = '\0';
    char* nl;
    while ((nl = strchr(line, '\n')) != NULL) {
      *nl = '\0';
      char cmd[32] = {0}, color[129] = {0};
      int x = 0, y = 0, size = 0;
      long long ns = 0;
      const int fields = sscanf(line, "%31s %128s %d %d %d %lld", cmd, color, &x, &y, &size, &ns);
      ShapeType s;
      memset(&s, 0, sizeof s);
      memcpy(s.color, color, sizeof s.color - 1); /* color holds at most 128 characters */
      s.x = x;
      s.y = y;
      s.shapesize = size;
      dds_return_t rc = DDS_RETCODE_OK;
      if (strcmp(cmd, "write") == 0 && fields >= 5) {
        rc = dds_write(writer, &s);
      } else if (strcmp(cmd, "writets") == 0 && fields == 6) {
        rc = dds_write_ts(writer, &s, ns);
      } else if (strcmp(cmd, "dispose") == 0 && fields >= 2) {
        rc = dds_dispose(writer, &s);
      } else if (strcmp(cmd, "unregister") == 0 && fields >= 2) {
        rc = dds_unregister_instance(writer, &s);
      } else if (strcmp(cmd, "matched") == 0) {
        dds_subscription_matched_status_t rs;
        dds_publication_matched_status_t ws;
        dds_get_subscription_matched_status(reader, &rs);
        dds_get_publication_matched_status(writer, &ws);
        printf("matched %u %u\n", rs.current_count, ws.current_count);
        fflush(stdout);
      } else if (strcmp(cmd, "quit") == 0) {
        dds_delete(pp);
        return 0;
      } else if (fields > 0) {
        fprintf(stderr, "cyclone_shapes: bad command '%s'\n", line);
        return 1;
      }
      if (rc != DDS_RETCODE_OK) die(cmd, rc);
      const size_t rest = used - (size_t)(nl + 1 - line);
      memmove(line, nl + 1, rest);
      used = rest;
      line[used] = '\0';
    }
  }
  dds_delete(pp);
  return 0;
}
