// The endpoint table: every writer and reader announced in the domain and not retired, and
// which writer-reader pairs match (DDS §2.2.3: same topic name and type, a common
// partition, compatible requested/offered QoS). Each change returns what it means for the
// endpoints of this node — matched, unmatched, incompatible — and the participant turns
// that into entity events. Every member applies the same records in the same (delivery)
// order, so every member's table agrees.
//
// Threading: a plain object with no locks; the participant calls it under its own mutex.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <dds/core/policy/CorePolicy.hpp>

#include "discovery/records.hpp"

namespace spindle::discovery {

using NodeId = std::uint32_t;

// What one change means for this node's endpoints.
struct Change {
  enum class Kind : std::uint8_t {
    matched,       // writer and reader now match
    unmatched,     // a match ended (an endpoint retired or its node left)
    incompatible,  // same topic, type and partition, but RxO says no: `policies`
  };
  Kind kind = Kind::matched;
  std::uint64_t writer = 0;
  std::uint64_t reader = 0;
  bool local_writer = false;                             // the writer is this node's
  bool local_reader = false;                             // the reader is this node's
  std::vector<dds::core::policy::QosPolicyId> policies;  // incompatible only
};

// The matching rule for a writer and a reader of the same topic name: nullopt when they do
// not meet (another type, no common partition); else the ids of the policies whose
// requested/offered rule they break, empty when they match.
[[nodiscard]] std::optional<std::vector<dds::core::policy::QosPolicyId>> match_policies(
    const WriterRecord& w, const ReaderRecord& r);

class EndpointTable {
 public:
  // `is_local(guid)`: whether an endpoint belongs to this node's participant (and is alive).
  explicit EndpointTable(std::function<bool(std::uint64_t guid)> is_local)
      : is_local_(std::move(is_local)) {}

  // A record (new, or a repeat that replaces the old one). Pairs already matched stay so.
  [[nodiscard]] std::vector<Change> add(WriterRecord w);
  [[nodiscard]] std::vector<Change> add(ReaderRecord r);
  // An endpoint retired: its matches end.
  [[nodiscard]] std::vector<Change> retire(std::uint64_t guid, bool writer);
  // Every endpoint whose guid `belongs(guid)` (a member that left): retired.
  [[nodiscard]] std::vector<Change> retire_if(const std::function<bool(std::uint64_t)>& belongs);

  [[nodiscard]] const WriterRecord* writer(std::uint64_t guid) const;
  [[nodiscard]] const ReaderRecord* reader(std::uint64_t guid) const;
  // Readers matched with `writer` (any node's).
  [[nodiscard]] std::vector<std::uint64_t> readers_of(std::uint64_t writer) const;
  [[nodiscard]] const std::map<std::uint64_t, WriterRecord>& writer_records() const noexcept {
    return writers_;
  }
  [[nodiscard]] const std::map<std::uint64_t, ReaderRecord>& reader_records() const noexcept {
    return readers_;
  }
  [[nodiscard]] std::size_t writers() const noexcept { return writers_.size(); }
  [[nodiscard]] std::size_t readers() const noexcept { return readers_.size(); }

 private:
  void match(const WriterRecord& w, const ReaderRecord& r, std::vector<Change>& out);

  std::function<bool(std::uint64_t)> is_local_;
  std::map<std::uint64_t, WriterRecord> writers_;
  std::map<std::uint64_t, ReaderRecord> readers_;
  std::set<std::pair<std::uint64_t, std::uint64_t>> matched_;  // (writer, reader)
};

}  // namespace spindle::discovery
