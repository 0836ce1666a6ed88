// spindle::policy::Consistency: the Spindle vendor QoS policy that picks the consistency
// level of a topic's data path (DESIGN §8). It goes into TopicQos, DataWriterQos and
// DataReaderQos with `<<` like a standard policy, and is matched request/offered: a writer
// offers a level, a reader requests one, and they match when
//   offered >= requested   in the order   UNORDERED < ATOMIC < VOLATILE < LOGGED.
//
//   UNORDERED  per-sender FIFO, delivered on receipt, nothing kept after delivery
//   ATOMIC     one total order per subgroup, delivered when stable (every member has it)
//   VOLATILE   ATOMIC + the last samples per instance kept in memory for late joiners;
//              the standard counterpart is Durability TRANSIENT_LOCAL
//   LOGGED     ATOMIC + delivered only once appended to a durable log (fsync per the
//              policy below), replayed on restart; the counterpart is TRANSIENT/PERSISTENT
//
// VOLATILE and LOGGED retain the last samples of each instance at every member and hand
// them to late readers; LOGGED also appends every sample to a durable log at each member
// before it is delivered there, and a restarted member recovers it (docs/storage.md).
//
// The fsync settings apply to LOGGED only and are ignored at other levels: EVERY_SAMPLE
// syncs before each delivery, PERIODIC at most every fsync_period (a crash loses at most
// that much), NEVER leaves it to the operating system.
//
// Threading: a value type.
#pragma once

#include <string>

#include <dds/core/Duration.hpp>
#include <dds/core/SafeEnumeration.hpp>
#include <dds/core/policy/CorePolicy.hpp>

namespace spindle::policy {

struct ConsistencyKind_def {
  enum Type { UNORDERED, ATOMIC, VOLATILE, LOGGED };
};
using ConsistencyKind = dds::core::safe_enum<ConsistencyKind_def>;

struct FsyncKind_def {
  enum Type { EVERY_SAMPLE, PERIODIC, NEVER };
};
using FsyncKind = dds::core::safe_enum<FsyncKind_def>;

class Consistency {
 public:
  explicit Consistency(ConsistencyKind::Type kind = ConsistencyKind::ATOMIC,
                       FsyncKind::Type fsync = FsyncKind::EVERY_SAMPLE,
                       const dds::core::Duration& fsync_period = dds::core::Duration::zero())
      : kind_(kind), fsync_(fsync), fsync_period_(fsync_period) {}
  static Consistency Unordered() { return Consistency(ConsistencyKind::UNORDERED); }
  static Consistency Atomic() { return Consistency(ConsistencyKind::ATOMIC); }
  static Consistency Volatile() { return Consistency(ConsistencyKind::VOLATILE); }
  // LOGGED with an fsync before every delivery.
  static Consistency Logged() { return Consistency(ConsistencyKind::LOGGED); }
  // LOGGED with an fsync at most every `period` (a crash loses at most the last period).
  static Consistency LoggedPeriodicFsync(const dds::core::Duration& period) {
    return Consistency(ConsistencyKind::LOGGED, FsyncKind::PERIODIC, period);
  }
  // LOGGED without explicit fsync (the page cache decides).
  static Consistency LoggedNoFsync() {
    return Consistency(ConsistencyKind::LOGGED, FsyncKind::NEVER);
  }

  Consistency& kind(ConsistencyKind::Type kind) noexcept {
    kind_ = kind;
    return *this;
  }
  Consistency& fsync(FsyncKind::Type fsync) noexcept {
    fsync_ = fsync;
    return *this;
  }
  Consistency& fsync_period(const dds::core::Duration& period) {
    fsync_period_ = period;
    return *this;
  }
  [[nodiscard]] ConsistencyKind kind() const noexcept { return kind_; }
  [[nodiscard]] FsyncKind fsync() const noexcept { return fsync_; }
  [[nodiscard]] const dds::core::Duration& fsync_period() const noexcept { return fsync_period_; }
  friend bool operator==(const Consistency&, const Consistency&) = default;

 private:
  ConsistencyKind kind_;
  FsyncKind fsync_;
  dds::core::Duration fsync_period_;
};

}  // namespace spindle::policy

namespace dds::core::policy {

SPINDLE_DDS_POLICY_TRAITS(spindle::policy::Consistency, 0x8001, "Consistency");

}  // namespace dds::core::policy
