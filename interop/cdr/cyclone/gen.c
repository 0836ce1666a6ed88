// The byte vectors of this folder, as Cyclone DDS itself serializes the samples of
// Vectors.idl (make.sh builds and runs it): for each sample and encoding (XCDR1, XCDR2) one
// file <name>-<xcdr1|xcdr2>-le.hex, the encapsulation header first. A writer and a reader of
// one participant; the reader's serialized sample (dds_takecdr) is what the writer sent.
// Cyclone 0.10 refuses XCDR1 for appendable and mutable types and for optional members:
// those have an XCDR2 file only. Little-endian hosts only.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dds/dds.h"
#include "dds/version.h"
#include "dds/ddsi/ddsi_serdata.h"
#include "Vectors.h"

static dds_entity_t pp;

static void emit(const char *name, const char *what, const dds_topic_descriptor_t *desc,
                 const void *sample) {
  static int serial = 0;
  for (int rep = 0; rep < 2; ++rep) {
    dds_data_representation_id_t ids[1] = {rep == 0 ? DDS_DATA_REPRESENTATION_XCDR1
                                                    : DDS_DATA_REPRESENTATION_XCDR2};
    dds_qos_t *q = dds_create_qos();
    dds_qset_data_representation(q, 1, ids);
    char tn[64];
    snprintf(tn, sizeof tn, "t%d", ++serial);
    dds_entity_t t = dds_create_topic(pp, desc, tn, q, NULL);
    dds_delete_qos(q);
    if (t < 0) continue;  // XCDR1 of a type Cyclone writes in XCDR2 only
    dds_qos_t *wq = dds_create_qos();
    dds_qset_data_representation(wq, 1, ids);
    dds_qset_reliability(wq, DDS_RELIABILITY_RELIABLE, DDS_SECS(1));
    dds_qset_history(wq, DDS_HISTORY_KEEP_ALL, 0);
    dds_entity_t rd = dds_create_reader(pp, t, wq, NULL);
    dds_entity_t wr = dds_create_writer(pp, t, wq, NULL);
    dds_delete_qos(wq);
    if (rd < 0 || wr < 0) { printf("%s: endpoints refused\n", name); continue; }
    if (dds_write(wr, sample) != 0) { printf("%s: write failed\n", name); continue; }
    struct ddsi_serdata *sd = NULL;
    dds_sample_info_t si;
    int got = 0;
    for (int k = 0; k < 200 && got <= 0; ++k) { got = dds_takecdr(rd, &sd, 1, &si, DDS_ANY_STATE); if (got <= 0) dds_sleepfor(DDS_MSECS(5)); }
    if (got <= 0) { printf("%s: nothing taken\n", name); continue; }
    uint32_t n = ddsi_serdata_size(sd);
    unsigned char *buf = malloc(n);
    ddsi_serdata_to_ser(sd, 0, n, buf);
    char path[128];
    snprintf(path, sizeof path, "%s-%s-le.hex", name, rep ? "xcdr2" : "xcdr1");
    FILE *f = fopen(path, "w");
    if (f == NULL) { perror(path); exit(1); }
    fprintf(f, "# %s, %s, as Cyclone DDS %s serializes it\n", what,
            rep ? "XCDR2" : "XCDR1 (CDR_LE)", DDS_VERSION);
    for (uint32_t i = 0; i < n; ++i)
      fprintf(f, "%02x%s", buf[i], (i == 3 || (i > 3 && (i - 3) % 16 == 0) || i + 1 == n) ? "\n" : " ");
    fclose(f);
    free(buf);
    ddsi_serdata_unref(sd);
  }
}

int main(void) {
  pp = dds_create_participant(DDS_DOMAIN_DEFAULT, NULL, NULL);
  if (pp < 0) { printf("participant: %s\n", dds_strretcode(pp)); return 1; }
  Xv_FinalShape fs = {"BLUE", 10, 20, 30};
  emit("FinalShape", "Xv::FinalShape{color: \"BLUE\", x: 10, y: 20, shapesize: 30}", &Xv_FinalShape_desc, &fs);
  Xv_AppShape as = {"BLUE", 10, 20, 30};
  emit("AppShape", "Xv::AppShape{color: \"BLUE\", x: 10, y: 20, shapesize: 30}", &Xv_AppShape_desc, &as);
  Xv_MutShape ms = {"BLUE", 10, 20, 30};
  emit("MutShape", "Xv::MutShape{color: \"BLUE\", x: 10, y: 20, shapesize: 30}", &Xv_MutShape_desc, &ms);
  Xv_Wide w = {7, -2, 1.5, 3};
  emit("Wide", "Xv::Wide{o: 7, ll: -2, d: 1.5, s: 3}", &Xv_Wide_desc, &w);
  Xv_Inner items[2] = {{1, "a"}, {2, "bc"}};
  Xv_Outer o = {{2, 2, items, false}, {3, "def"}};
  emit("Outer", "Xv::Outer{items: [{a: 1, b: \"a\"}, {a: 2, b: \"bc\"}], one: {a: 3, b: \"def\"}}", &Xv_Outer_desc, &o);
  int32_t b = 5;
  Xv_Opt op1 = {1, &b, "x"};
  emit("Opt-present", "Xv::Opt{a: 1, b: 5, c: \"x\"}", &Xv_Opt_desc, &op1);
  Xv_Opt op2 = {1, NULL, NULL};
  emit("Opt-absent", "Xv::Opt{a: 1, b: absent, c: absent}", &Xv_Opt_desc, &op2);
  Xv_MutOpt mo1 = {1, &b, "x"};
  emit("MutOpt-present", "Xv::MutOpt{a: 1, b: 5, c: \"x\"}", &Xv_MutOpt_desc, &mo1);
  Xv_MutOpt mo2 = {1, NULL, NULL};
  emit("MutOpt-absent", "Xv::MutOpt{a: 1, b: absent, c: absent}", &Xv_MutOpt_desc, &mo2);
  Xv_WithUnion u1; u1.u._d = 1; u1.u._u.l = 42;
  emit("WithUnion-l", "Xv::WithUnion{u: {_d: 1, l: 42}}", &Xv_WithUnion_desc, &u1);
  Xv_WithUnion u2; u2.u._d = 2; u2.u._u.s = "hi";
  emit("WithUnion-s", "Xv::WithUnion{u: {_d: 2, s: \"hi\"}}", &Xv_WithUnion_desc, &u2);
  dds_delete(pp);
  return 0;
}
