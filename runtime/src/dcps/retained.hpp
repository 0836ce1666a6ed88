// spindle::dcps::RetainedTopic: the DCPS side of a retained topic (docs/storage.md) — the
// storage::History of one topic at this member, fed by the Router with every message of the
// topic delivered here, and what a late reader gets of it.
//
// A writer's messages are retained when it offers consistency VOLATILE or more, or
// durability TRANSIENT_LOCAL or more (qos::effective_consistency): TRANSIENT_LOCAL and
// VOLATILE keep per (writer, instance) while the writer lives; TRANSIENT, PERSISTENT and
// LOGGED keep per instance, after the writer is gone. The depth and limits are
// DURABILITY_SERVICE's where it is set (always at the service levels), else the writer's
// HISTORY and RESOURCE_LIMITS. A reader that requests TRANSIENT_LOCAL or more (or consistency
// VOLATILE or more) receives, once, the entries of the writers it would match (type, partition,
// requested/offered QoS), oldest first, at the view boundary where its matches start.
//
// The state transfer to a joiner carries every retained topic: the records of the writers
// whose entries are kept but who are gone, then the entries, in order (encode_state()).
//
// Threading: safe from any thread; on_sample on the protocol thread (the Router, a leaf
// lock of its own); the rest under the participant's lock or at a view boundary.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "dcps/router.hpp"
#include "discovery/records.hpp"
#include "storage/history.hpp"

namespace spindle::dcps {

using discovery::ReaderRecord;
using discovery::WriterRecord;

// Whether a writer's messages are retained, and how (nullopt: not retained).
[[nodiscard]] std::optional<storage::WriterTerms> retention_terms(
    const dds::pub::qos::DataWriterQos& q);
// Whether a reader asks for retained history.
[[nodiscard]] bool wants_history(const dds::sub::qos::DataReaderQos& q);

// One retained message as a late reader receives it.
struct Historical {
  storage::Entry entry;
  std::int32_t strength = 0;  // the writer's OWNERSHIP_STRENGTH
  dds::core::Duration lifespan = dds::core::Duration::infinite();  // the writer's LIFESPAN
};

class RetainedTopic final : public TopicSink {
 public:
  explicit RetainedTopic(std::uint64_t topic) : topic_(topic) {}

  [[nodiscard]] std::uint64_t topic() const noexcept { return topic_; }
  // A writer whose messages are kept (its record, for matching late readers).
  void add_writer(const WriterRecord& w, const storage::WriterTerms& terms);
  void retire(std::uint64_t writer);
  // The entries `r` matches, oldest first.
  [[nodiscard]] std::vector<Historical> history_for(const ReaderRecord& r) const;
  // The records of the writers that are gone but whose entries are kept.
  [[nodiscard]] std::vector<WriterRecord> gone_writers() const;
  [[nodiscard]] const storage::History& history() const noexcept { return history_; }
  void restore(storage::Entry e) { history_.restore(std::move(e)); }

  // TopicSink (protocol thread).
  void on_sample(const ParsedSample& sample, NodeId sender) override;
  void on_batch_end() override {}

 private:
  const std::uint64_t topic_;
  storage::History history_;
  mutable std::mutex mu_;  // a leaf
  std::map<std::uint64_t, WriterRecord> records_;
  std::map<std::uint64_t, bool> gone_;
};

// One entry of a retained topic in the state transfer (docs/membership.md, record kind 4):
//   u64 topic | u64 seq | u64 writer | 16 bytes key hash | u8 change kind | message bytes
// little-endian; decode_entry() checks the size and the kind and says what is wrong.
void encode_entry(std::uint64_t topic, const storage::Entry& e, std::vector<std::byte>& out);
[[nodiscard]] std::optional<storage::Entry> decode_entry(std::span<const std::byte> bytes,
                                                         std::uint64_t& topic, std::string& error);

}  // namespace spindle::dcps
