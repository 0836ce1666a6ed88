// The byte vectors of this folder, as Cyclone DDS itself serializes the samples of
// Vectors.idl (make.sh builds and runs it): for each sample and encoding (XCDR1, XCDR2) one
// file <name>-<xcdr1|xcdr2>-le.hex, the encapsulation header first. A writer and a reader of
// one participant; the reader's serialized sample (dds_takecdr) is what the writer sent.
// Cyclone 0.10 refuses XCDR1 for appendable and mutable types and for optional members:
// those have an XCDR2 file only. Little-endian hosts only. emit_key writes, besides, the
// serialized key a dispose of the sample carries (<name>-key-<rep>-le.hex): what the
// writer's serdata operations for the representation make of the sample as a key
// (from_sample, SDK_KEY).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dds/dds.h"
#include "dds/version.h"
#include "dds/ddsi/ddsi_serdata.h"
#include "dds/ddsi/ddsi_serdata_default.h"
#include "Vectors.h"

static dds_entity_t pp;

static void write_hex(const char *path, const char *what, const char *rep,
                      const unsigned char *buf, uint32_t n) {
  FILE *f = fopen(path, "w");
  if (f == NULL) { perror(path); exit(1); }
  fprintf(f, "# %s, %s, as Cyclone DDS %s serializes it\n", what, rep, DDS_VERSION);
  for (uint32_t i = 0; i < n; ++i)
    fprintf(f, "%02x%s", buf[i], (i == 3 || (i > 3 && (i - 3) % 16 == 0) || i + 1 == n) ? "\n" : " ");
  fclose(f);
}

static void emit_impl(const char *name, const char *what, const dds_topic_descriptor_t *desc,
                      const void *sample, int key);

static void emit(const char *name, const char *what, const dds_topic_descriptor_t *desc,
                 const void *sample) {
  emit_impl(name, what, desc, sample, 0);
}

static void emit_key(const char *name, const char *what, const dds_topic_descriptor_t *desc,
                     const void *sample) {
  emit_impl(name, what, desc, sample, 1);
}

static void emit_impl(const char *name, const char *what, const dds_topic_descriptor_t *desc,
                      const void *sample, int key) {
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
    if (key) {
      // The key as the writer's serdata operations for this representation make it (what
      // a dispose carries), on the topic's type as the taken sample names it.
      const struct ddsi_serdata_ops *ops = rep ? &ddsi_serdata_ops_xcdr2 : &ddsi_serdata_ops_cdr;
      struct ddsi_serdata *kd = ops->from_sample(sd->type, SDK_KEY, sample);
      uint32_t kn = ddsi_serdata_size(kd);
      unsigned char *kb = malloc(kn);
      ddsi_serdata_to_ser(kd, 0, kn, kb);
      char kpath[128];
      snprintf(kpath, sizeof kpath, "%s-key-%s-le.hex", name, rep ? "xcdr2" : "xcdr1");
      char kwhat[512];
      snprintf(kwhat, sizeof kwhat, "the serialized key of %s", what);
      write_hex(kpath, kwhat, rep ? "XCDR2" : "XCDR1 (CDR_LE)", kb, kn);
      free(kb);
      ddsi_serdata_unref(kd);
    }
    uint32_t n = ddsi_serdata_size(sd);
    unsigned char *buf = malloc(n);
    ddsi_serdata_to_ser(sd, 0, n, buf);
    char path[128];
    snprintf(path, sizeof path, "%s-%s-le.hex", name, rep ? "xcdr2" : "xcdr1");
    write_hex(path, what, rep ? "XCDR2" : "XCDR1 (CDR_LE)", buf, n);
    free(buf);
    ddsi_serdata_unref(sd);
  }
}

int main(void) {
  pp = dds_create_participant(DDS_DOMAIN_DEFAULT, NULL, NULL);
  if (pp < 0) { printf("participant: %s\n", dds_strretcode(pp)); return 1; }
  Xv_FinalShape fs = {"BLUE", 10, 20, 30};
  emit_key("FinalShape", "Xv::FinalShape{color: \"BLUE\", x: 10, y: 20, shapesize: 30}", &Xv_FinalShape_desc, &fs);
  Xv_AppShape as = {"BLUE", 10, 20, 30};
  emit_key("AppShape", "Xv::AppShape{color: \"BLUE\", x: 10, y: 20, shapesize: 30}", &Xv_AppShape_desc, &as);
  Xv_MutShape ms = {"BLUE", 10, 20, 30};
  emit_key("MutShape", "Xv::MutShape{color: \"BLUE\", x: 10, y: 20, shapesize: 30}", &Xv_MutShape_desc, &ms);
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
  {
    uint8_t so[3] = {1, 2, 3};
    int16_t ss[2] = {-1, 2};
    int32_t sl[2] = {7, 8};
    int64_t sll[1] = {-9};
    char *sstr[2] = {"p", "qr"};
    Xv_Color se[2] = {Xv_GREEN, Xv_BLUE};
    Xv_MutMix m;
    memset(&m, 0, sizeof m);
    m.id = 11; m.o = 0xab; m.s = -3; m.ll = 1234567890123LL; m.d = 2.5; m.b = true; m.e = Xv_BLUE;
    m.str = "str";
    m.so = (dds_sequence_octet){3, 3, so, false};
    m.ss = (dds_sequence_short){2, 2, ss, false};
    m.sl = (dds_sequence_long){2, 2, sl, false};
    m.sll = (dds_sequence_long_long){1, 1, sll, false};
    m.sstr = (dds_sequence_string){2, 2, sstr, false};
    m.se._maximum = 2; m.se._length = 2; m.se._buffer = se; m.se._release = false;
    m.la[0] = 1; m.la[1] = 2; m.la[2] = 3;
    m.nested.a = 4; m.nested.b = "n";
    m.fin.color = "RED"; m.fin.x = 1; m.fin.y = 2; m.fin.shapesize = 3;
    m.u._d = 1; m.u._u.l = 5;
    emit_key("MutMix", "Xv::MutMix{id: 11, o: 0xab, s: -3, ll: 1234567890123, d: 2.5, b: true, e: BLUE, "
         "str: \"str\", so: [1, 2, 3], ss: [-1, 2], sl: [7, 8], sll: [-9], sstr: [\"p\", \"qr\"], "
         "se: [GREEN, BLUE], la: [1, 2, 3], nested: {a: 4, b: \"n\"}, "
         "fin: {color: \"RED\", x: 1, y: 2, shapesize: 3}, u: {_d: 1, l: 5}}", &Xv_MutMix_desc, &m);
  }
  {
    Xv_Color se[2] = {Xv_RED, Xv_BLUE};
    int32_t l1[2] = {1, 2};
    int32_t l2[1] = {3};
    dds_sequence_long ssl[2] = {{2, 2, l1, false}, {1, 1, l2, false}};
    Xv_FinalShape sf[1] = {{"G", 4, 5, 6}};
    Xv_Seqs q;
    memset(&q, 0, sizeof q);
    q.se._maximum = 2; q.se._length = 2; q.se._buffer = se;
    q.ia[0].a = 1; q.ia[0].b = "x"; q.ia[1].a = 2; q.ia[1].b = "yz";
    q.sa[0] = "s"; q.sa[1] = "tu";
    q.ssl._maximum = 2; q.ssl._length = 2; q.ssl._buffer = ssl;
    q.la[0] = 9; q.la[1] = 10;
    q.sf._maximum = 1; q.sf._length = 1; q.sf._buffer = sf;
    emit("Seqs", "Xv::Seqs{se: [RED, BLUE], ia: [{a: 1, b: \"x\"}, {a: 2, b: \"yz\"}], "
         "sa: [\"s\", \"tu\"], ssl: [[1, 2], [3]], la: [9, 10], "
         "sf: [{color: \"G\", x: 4, y: 5, shapesize: 6}]}", &Xv_Seqs_desc, &q);
  }
  {
    double d = 0.25;
    Xv_Inner in = {6, "in"};
    Xv_FinalOpt f1 = {3, &d, &in};
    emit("FinalOpt-present", "Xv::FinalOpt{a: 3, d: 0.25, in: {a: 6, b: \"in\"}}", &Xv_FinalOpt_desc, &f1);
    Xv_FinalOpt f2 = {3, NULL, NULL};
    emit("FinalOpt-absent", "Xv::FinalOpt{a: 3, d: absent, in: absent}", &Xv_FinalOpt_desc, &f2);
  }
  {
    Xv_WithAU a1; memset(&a1, 0, sizeof a1); a1.u._d = 1; a1.u._u.l = 77; a1.tail = 0xee;
    emit("WithAU-l", "Xv::WithAU{u: {_d: 1, l: 77}, tail: 0xee}", &Xv_WithAU_desc, &a1);
    Xv_WithAU a2; memset(&a2, 0, sizeof a2); a2.u._d = 2; a2.u._u.in.a = 8; a2.u._u.in.b = "ab"; a2.tail = 0xee;
    emit("WithAU-in", "Xv::WithAU{u: {_d: 2, in: {a: 8, b: \"ab\"}}, tail: 0xee}", &Xv_WithAU_desc, &a2);
  }
  {
    Xv_KeyMix k = {.pad = 1, .id = -5, .note = "n", .name = "nm", .s = 7,
                   .in = {.a = 3, .b = 4, .c = "cc"}};
    emit_key("KeyMix", "Xv::KeyMix{pad: 1, id: -5, note: \"n\", name: \"nm\", s: 7, in: {a: 3, b: 4, c: \"cc\"}}", &Xv_KeyMix_desc, &k);
    Xv_AppKey a = {.pad = 9, .id = 1234567890123LL, .name = "app"};
    emit_key("AppKey", "Xv::AppKey{pad: 9, id: 1234567890123, name: \"app\"}", &Xv_AppKey_desc, &a);
    Xv_MutKey m = {.s = -2, .note = "mut", .id = 42};
    emit_key("MutKey", "Xv::MutKey{s: -2, note: \"mut\", id: 42}", &Xv_MutKey_desc, &m);
  }
  dds_delete(pp);
  return 0;
}
