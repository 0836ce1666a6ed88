// The kinds of the standard QoS policies (DDS-PSM-Cxx §7.5.2, DDS 1.4 §2.2.3) as PSM safe
// enums: `dds::core::policy::ReliabilityKind::RELIABLE`, `HistoryKind::KEEP_LAST`, ... The
// order of each enumeration is the DDS "strength" order the request/offered checks compare
// (VOLATILE < TRANSIENT_LOCAL < TRANSIENT < PERSISTENT, BEST_EFFORT < RELIABLE, ...).
//
// Threading: value types.
#pragma once

#include <dds/core/SafeEnumeration.hpp>

namespace dds::core::policy {

struct DurabilityKind_def {
  enum Type { VOLATILE, TRANSIENT_LOCAL, TRANSIENT, PERSISTENT };
};
using DurabilityKind = dds::core::safe_enum<DurabilityKind_def>;

struct PresentationAccessScopeKind_def {
  enum Type { INSTANCE, TOPIC, GROUP };
};
using PresentationAccessScopeKind = dds::core::safe_enum<PresentationAccessScopeKind_def>;

struct OwnershipKind_def {
  enum Type { SHARED, EXCLUSIVE };
};
using OwnershipKind = dds::core::safe_enum<OwnershipKind_def>;

struct LivelinessKind_def {
  enum Type { AUTOMATIC, MANUAL_BY_PARTICIPANT, MANUAL_BY_TOPIC };
};
using LivelinessKind = dds::core::safe_enum<LivelinessKind_def>;

struct ReliabilityKind_def {
  enum Type { BEST_EFFORT, RELIABLE };
};
using ReliabilityKind = dds::core::safe_enum<ReliabilityKind_def>;

struct DestinationOrderKind_def {
  enum Type { BY_RECEPTION_TIMESTAMP, BY_SOURCE_TIMESTAMP };
};
using DestinationOrderKind = dds::core::safe_enum<DestinationOrderKind_def>;

struct HistoryKind_def {
  enum Type { KEEP_LAST, KEEP_ALL };
};
using HistoryKind = dds::core::safe_enum<HistoryKind_def>;

}  // namespace dds::core::policy
