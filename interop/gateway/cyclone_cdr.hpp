// Samples of a type known only at run time, as Cyclone DDS's C API carries them: a sertype
// (Cyclone's per-type table) whose samples are encapsulated XCDR bytes plus their decoded
// JSON, so the gateway hands Cyclone the bytes its peers would write and reads theirs without
// generated C code. dds_write_ts/dds_dispose_ts/dds_unregister_instance_ts take a CdrSample*,
// dds_take fills CdrSample objects.
//
// Key handling is Cyclone's contract: every sample's key hash (the DDS key hash of
// <spindle/types/dynamic_data.hpp>) identifies its instance; a dispose or unregister carries
// the serialized key (encode_key). Bytes a peer sends that do not decode as the type are
// refused (Cyclone drops the sample) and counted in CdrSertypeStats.
//
// Threading: Cyclone calls the sertype from its receive and application threads at once;
// everything here is immutable after creation but the atomic counters.
#pragma once

#include <dds/dds.h>

#include <atomic>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <spindle/cdr/serialize.hpp>
#include <spindle/types/dynamic_data.hpp>

namespace spindle::gateway {

// One sample through the C API.
struct CdrSample {
  // Writing: the encapsulated sample (key_only false) or serialized key (true), in the
  // writer's encoding. Taking: what the peer sent.
  std::vector<std::byte> bytes;
  bool key_only = false;
  // Writing: the sample as JSON, or its key members at least (required: it gives the key).
  // Taking: the sample's key members (decode_key_of) or, for a key, a sample whose key
  // members hold it and every other member its default.
  std::shared_ptr<const types::Json> value;
};

struct CdrSertypeStats {
  std::atomic<uint64_t> refused{0};  // received bytes that did not decode as the type
};

// A new sertype for `type` (a struct or union of a TypeLibrary that outlives it), named as
// Cyclone's idlc names it (the scoped name). Ownership passes to dds_create_topic_sertype.
// `stats` (may be null) must outlive the sertype.
[[nodiscard]] struct ddsi_sertype* make_sertype(const types::Type& type, CdrSertypeStats* stats);

// The Cyclone data representation id (DDS_DATA_REPRESENTATION_XCDR1/2) of an encoding.
[[nodiscard]] dds_data_representation_id_t representation(cdr::Encoding e);

}  // namespace spindle::gateway
