// The sertype and serdata of cyclone_cdr.hpp: Cyclone DDS 0.10's ddsi_sertype_ops and
// ddsi_serdata_ops over encapsulated bytes and a decoded JSON value.
#include "cyclone_cdr.hpp"

#include <dds/ddsi/ddsi_serdata.h>
#include <dds/ddsi/ddsi_sertype.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <new>

#include "fragchain.h"

namespace spindle::gateway {
namespace {

using types::Json;

struct CdrSertype : ddsi_sertype {
  const types::Type* dyn = nullptr;
  bool keyed = false;
  CdrSertypeStats* stats = nullptr;
};

struct CdrSerdata : ddsi_serdata {
  std::vector<std::byte> bytes;  // as on the wire: the encapsulated sample or serialized key
  std::vector<std::byte> key;    // the serialized key (keyed types), for to_untyped
  std::shared_ptr<const Json> value;
  cdr::KeyHash keyhash{};
};

const CdrSertype& sertype_of(const ddsi_sertype* t) {
  return *static_cast<const CdrSertype*>(t);
}

const CdrSerdata& serdata_of(const ddsi_serdata* d) {
  return *static_cast<const CdrSerdata*>(d);
}

uint32_t hash32(const cdr::KeyHash& h) {
  uint32_t v = 0;
  std::memcpy(&v, h.data(), sizeof v);
  uint32_t w = 0;
  std::memcpy(&w, h.data() + 4, sizeof w);
  return v ^ (w * 0x9e3779b1U);
}

cdr::Encoding encoding_of(const std::vector<std::byte>& bytes) {
  return bytes.size() >= 2 && static_cast<uint8_t>(bytes[1]) > 3 ? cdr::Encoding::Xcdr2
                                                                 : cdr::Encoding::Xcdr1;
}

CdrSerdata* new_serdata(const CdrSertype& tp, ddsi_serdata_kind kind) {
  auto* d = new (std::nothrow) CdrSerdata();
  if (d == nullptr) return nullptr;
  ddsi_serdata_init(d, &tp, kind);
  return d;
}

// Completes a serdata whose bytes are set: decodes them (a sample — checked whole, but only
// its key kept as JSON, the bytes going on as they are — or a key) unless the value
// is known, and derives key, key hash and Cyclone's hash. Null (and the serdata freed) when
// the bytes are not the type's.
ddsi_serdata* finish(const CdrSertype& tp, CdrSerdata* d) {
  try {
    if (!d->value) {
      // A keyless type's key has no members: there is nothing to read in it.
      d->value =
          std::make_shared<const Json>(d->kind != SDK_KEY ? types::decode_key_of(*tp.dyn, d->bytes)
                                       : tp.keyed         ? types::decode_key(*tp.dyn, d->bytes)
                                                          : Json(nullptr));
    }
    if (tp.keyed) {
      d->keyhash = types::key_hash(*tp.dyn, *d->value);
      d->key = d->kind == SDK_KEY ? d->bytes
                                  : types::encode_key(*tp.dyn, *d->value, encoding_of(d->bytes));
    }
  } catch (const std::exception& e) {
    const uint64_t n =
        tp.stats != nullptr ? tp.stats->refused.fetch_add(1, std::memory_order_relaxed) : 0;
    if (n < 10) {
      std::fprintf(stderr, "spindle-gateway: a %s of %s from the RTPS domain was refused: %s\n",
                   d->kind == SDK_KEY ? "key" : "sample", tp.type_name, e.what());
    }
    delete d;
    return nullptr;
  }
  // Encoded bytes are kept padded to 4 so that Cyclone may read up to the next multiple of 4.
  const size_t size = d->bytes.size();
  d->bytes.resize((size + 3) & ~size_t{3});
  d->bytes.resize(size);
  if (!tp.keyed) d->keyhash = cdr::KeyHash{};
  d->ops = tp.serdata_ops;
  static_cast<ddsi_serdata*>(d)->hash = hash32(d->keyhash) ^ tp.serdata_basehash;
  return d;
}

// --- serdata ops ---------------------------------------------------------------------------

bool sd_eqkey(const ddsi_serdata* a, const ddsi_serdata* b) {
  return serdata_of(a).keyhash == serdata_of(b).keyhash;
}

uint32_t sd_get_size(const ddsi_serdata* d) {
  return static_cast<uint32_t>(serdata_of(d).bytes.size());
}

ddsi_serdata* sd_from_ser(const ddsi_sertype* type, ddsi_serdata_kind kind,
                          const nn_rdata* fragchain, size_t size) {
  const CdrSertype& tp = sertype_of(type);
  CdrSerdata* d = new_serdata(tp, kind);
  if (d == nullptr) return nullptr;
  d->bytes.reserve((size + 3) & ~size_t{3});
  d->bytes.resize(size);
  spindle_gw_copy_fragchain(fragchain, size, reinterpret_cast<unsigned char*>(d->bytes.data()));
  return finish(tp, d);
}

ddsi_serdata* sd_from_ser_iov(const ddsi_sertype* type, ddsi_serdata_kind kind,
                              ddsrt_msg_iovlen_t niov, const ddsrt_iovec_t* iov, size_t size) {
  const CdrSertype& tp = sertype_of(type);
  CdrSerdata* d = new_serdata(tp, kind);
  if (d == nullptr) return nullptr;
  d->bytes.reserve((size + 3) & ~size_t{3});
  for (ddsrt_msg_iovlen_t i = 0; i < niov && d->bytes.size() < size; ++i) {
    const auto* p = static_cast<const std::byte*>(iov[i].iov_base);
    const size_t n = std::min<size_t>(iov[i].iov_len, size - d->bytes.size());
    d->bytes.insert(d->bytes.end(), p, p + n);
  }
  return finish(tp, d);
}

ddsi_serdata* sd_from_keyhash(const ddsi_sertype*, const ddsi_keyhash*) {
  return nullptr;  // a key hash alone cannot give back a key of this type; Cyclone drops it
}

ddsi_serdata* sd_from_sample(const ddsi_sertype* type, ddsi_serdata_kind kind, const void* sample) {
  const CdrSertype& tp = sertype_of(type);
  const auto& s = *static_cast<const CdrSample*>(sample);
  if (!s.value) return nullptr;
  CdrSerdata* d = new_serdata(tp, kind);
  if (d == nullptr) return nullptr;
  d->value = s.value;
  try {
    if (kind == SDK_KEY && !s.key_only) {
      d->bytes = types::encode_key(*tp.dyn, *s.value, encoding_of(s.bytes));
    } else if (kind == SDK_DATA && s.key_only) {
      delete d;
      return nullptr;
    } else {
      d->bytes = s.bytes;
    }
  } catch (const std::exception&) {
    delete d;
    return nullptr;
  }
  if (kind == SDK_EMPTY) d->bytes.clear();
  if (kind == SDK_EMPTY) {
    d->ops = tp.serdata_ops;
    return d;
  }
  return finish(tp, d);
}

void sd_to_ser(const ddsi_serdata* d, size_t off, size_t sz, void* buf) {
  const auto& s = serdata_of(d);
  // Up to the next multiple of 4: the padding bytes are zero (reserved and zeroed).
  const size_t have = s.bytes.size() > off ? std::min(sz, s.bytes.size() - off) : 0;
  if (have > 0) std::memcpy(buf, s.bytes.data() + off, have);
  if (have < sz) std::memset(static_cast<char*>(buf) + have, 0, sz - have);
}

ddsi_serdata* sd_to_ser_ref(const ddsi_serdata* d, size_t off, size_t sz, ddsrt_iovec_t* ref) {
  const auto& s = serdata_of(d);
  if (off + sz > s.bytes.capacity()) return nullptr;
  ref->iov_base = const_cast<std::byte*>(s.bytes.data() + off);
  ref->iov_len = static_cast<ddsrt_iov_len_t>(sz);
  return ddsi_serdata_ref(d);
}

void sd_to_ser_unref(ddsi_serdata* d, const ddsrt_iovec_t*) {
  ddsi_serdata_unref(d);
}

bool sd_to_sample(const ddsi_serdata* d, void* sample, void**, void*) {
  const auto& s = serdata_of(d);
  auto& out = *static_cast<CdrSample*>(sample);
  out.bytes = s.bytes;
  out.key_only = s.kind == SDK_KEY;
  out.value = s.value;
  return true;
}

ddsi_serdata* sd_to_untyped(const ddsi_serdata* d) {
  const auto& s = serdata_of(d);
  const CdrSertype& tp = sertype_of(s.type);
  CdrSerdata* u = new_serdata(tp, SDK_KEY);
  if (u == nullptr) return nullptr;
  u->bytes = s.key;
  u->key = s.key;
  u->value = s.value;
  u->keyhash = s.keyhash;
  static_cast<ddsi_serdata*>(u)->hash = static_cast<const ddsi_serdata&>(s).hash;
  u->type = nullptr;
  u->timestamp.v = INT64_MIN;
  return u;
}

// An untyped serdata is a key (sd_to_untyped): the same copy as a typed one.
bool sd_untyped_to_sample(const ddsi_sertype*, const ddsi_serdata* d, void* sample, void** bufptr,
                          void* buflim) {
  return sd_to_sample(d, sample, bufptr, buflim);
}

void sd_free(ddsi_serdata* d) {
  delete static_cast<CdrSerdata*>(d);
}

size_t sd_print(const ddsi_sertype*, const ddsi_serdata* d, char* buf, size_t size) {
  const auto& s = serdata_of(d);
  try {
    // (strings of a peer's sample need not be UTF-8: replaced, never thrown into Cyclone)
    const std::string text =
        s.value ? s.value->dump(-1, ' ', false, Json::error_handler_t::replace) : "(empty)";
    return static_cast<size_t>(std::snprintf(buf, size, "%s", text.c_str()));
  } catch (const std::exception&) {
    return static_cast<size_t>(std::snprintf(buf, size, "(unprintable)"));
  }
}

void sd_get_keyhash(const ddsi_serdata* d, ddsi_keyhash* buf, bool force_md5) {
  const auto& s = serdata_of(d);
  std::memset(buf->value, 0, sizeof buf->value);
  if (s.type == nullptr) return;
  const CdrSertype& tp = sertype_of(s.type);
  if (!tp.keyed || !s.value) return;
  try {
    // The key members as big-endian XCDR1 (the RTPS key hash), their MD5 when asked or longer
    // than 16 bytes.
    const auto stream =
        types::encode_key(*tp.dyn, *s.value, cdr::Encoding::Xcdr1, cdr::Endianness::Big);
    // (less the padding encode_key adds, which the options count)
    const size_t pad = static_cast<size_t>(stream[3]) & 3U;
    const std::span<const std::byte> body(stream.data() + cdr::kEncapsulationSize,
                                          stream.size() - cdr::kEncapsulationSize - pad);
    if (force_md5 || body.size() > sizeof buf->value) {
      const auto h = cdr::md5(body);
      std::memcpy(buf->value, h.data(), sizeof buf->value);
    } else {
      std::memcpy(buf->value, body.data(), body.size());
    }
  } catch (const std::exception&) {
  }
}

const ddsi_serdata_ops kSerdataOps = [] {
  ddsi_serdata_ops ops{};
  ops.eqkey = sd_eqkey;
  ops.get_size = sd_get_size;
  ops.from_ser = sd_from_ser;
  ops.from_ser_iov = sd_from_ser_iov;
  ops.from_keyhash = sd_from_keyhash;
  ops.from_sample = sd_from_sample;
  ops.to_ser = sd_to_ser;
  ops.to_ser_ref = sd_to_ser_ref;
  ops.to_ser_unref = sd_to_ser_unref;
  ops.to_sample = sd_to_sample;
  ops.to_untyped = sd_to_untyped;
  ops.untyped_to_sample = sd_untyped_to_sample;
  ops.free = sd_free;
  ops.print = sd_print;
  ops.get_keyhash = sd_get_keyhash;
  return ops;
}();

// --- sertype ops ---------------------------------------------------------------------------

void st_free(ddsi_sertype* t) {
  ddsi_sertype_fini(t);
  delete static_cast<CdrSertype*>(t);
}

void st_zero_samples(const ddsi_sertype*, void* samples, size_t count) {
  auto* s = static_cast<CdrSample*>(samples);
  for (size_t i = 0; i < count; ++i)
    s[i] = CdrSample{};
}

void st_realloc_samples(void** ptrs, const ddsi_sertype*, void* old, size_t oldcount,
                        size_t count) {
  auto* fresh = new CdrSample[count];
  auto* prev = static_cast<CdrSample*>(old);
  for (size_t i = 0; i < std::min(oldcount, count); ++i)
    fresh[i] = std::move(prev[i]);
  delete[] prev;
  for (size_t i = 0; i < count; ++i)
    ptrs[i] = &fresh[i];
}

void st_free_samples(const ddsi_sertype*, void** ptrs, size_t count, dds_free_op_t op) {
  if (count == 0 || ptrs[0] == nullptr) return;
  if ((op & DDS_FREE_ALL_BIT) != 0) {
    delete[] static_cast<CdrSample*>(ptrs[0]);
    return;
  }
  if ((op & DDS_FREE_CONTENTS_BIT) != 0) {
    for (size_t i = 0; i < count; ++i)
      *static_cast<CdrSample*>(ptrs[i]) = CdrSample{};
  }
}

bool st_equal(const ddsi_sertype* a, const ddsi_sertype* b) {
  return sertype_of(a).dyn == sertype_of(b).dyn && std::strcmp(a->type_name, b->type_name) == 0;
}

uint32_t st_hash(const ddsi_sertype* t) {
  return static_cast<uint32_t>(std::hash<std::string>{}(t->type_name));
}

size_t st_serialized_size(const ddsi_sertype*, const void* sample) {
  return static_cast<const CdrSample*>(sample)->bytes.size();
}

bool st_serialize_into(const ddsi_sertype*, const void* sample, void* dst, size_t size) {
  const auto& s = *static_cast<const CdrSample*>(sample);
  if (s.bytes.size() > size) return false;
  std::memcpy(dst, s.bytes.data(), s.bytes.size());
  return true;
}

const ddsi_sertype_ops kSertypeOps = [] {
  ddsi_sertype_ops ops{};
  ops.version = ddsi_sertype_v0;
  ops.arg = nullptr;
  ops.free = st_free;
  ops.zero_samples = st_zero_samples;
  ops.realloc_samples = st_realloc_samples;
  ops.free_samples = st_free_samples;
  ops.equal = st_equal;
  ops.hash = st_hash;
  ops.get_serialized_size = st_serialized_size;
  ops.serialize_into = st_serialize_into;
  return ops;
}();

}  // namespace

ddsi_sertype* make_sertype(const types::Type& type, CdrSertypeStats* stats) {
  const types::Type& r = types::resolve(type);
  auto* st = new CdrSertype();
  st->dyn = &r;
  st->keyed = r.kind == types::TypeKind::Struct && !types::key_paths(r).empty();
  st->stats = stats;
  std::string name = r.name;
  if (name.rfind("::", 0) == 0) name.erase(0, 2);
  ddsi_sertype_init(st, name.c_str(), &kSertypeOps, &kSerdataOps, !st->keyed);
  uint32_t allowed = 0;
  if ((r.representations & cdr::bit_of(cdr::Encoding::Xcdr1)) != 0)
    allowed |= DDS_DATA_REPRESENTATION_FLAG_XCDR1;
  if ((r.representations & cdr::bit_of(cdr::Encoding::Xcdr2)) != 0)
    allowed |= DDS_DATA_REPRESENTATION_FLAG_XCDR2;
  st->allowed_data_representation = allowed;
  return st;
}

dds_data_representation_id_t representation(cdr::Encoding e) {
  return e == cdr::Encoding::Xcdr2 ? DDS_DATA_REPRESENTATION_XCDR2 : DDS_DATA_REPRESENTATION_XCDR1;
}

}  // namespace spindle::gateway
