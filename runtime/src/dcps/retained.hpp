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
// whose entries are kept but who are gone, then the entries, in order.
//
// `logged` (consistency LOGGED, or durability PERSISTENT): the topic also has a durable log
// at this member (storage/log.hpp, one per topic and node: storage/settings.hpp). Every
// message of a logged writer is appended as it is delivered, and the batch is synced as the
// strictest logged writer's fsync policy asks (EVERY_SAMPLE: before the batch reaches any
// reader; PERIODIC: once the period passed; NEVER: the system's business) — the Router hands
// the batch to readers only after store() and end_batch() said yes. A log that fails (disk
// full, I/O error) keeps what it acknowledged; its topic's logged messages then reach no
// reader here, and this member's logged writers of the topic get the error (log_failure()).
// The log's records (docs/storage.md): kind 1 a message (header and payload), kind 2 a
// logged writer's discovery record, kind 3 a snapshot mark (what follows replaces the
// history: a joiner's state transfer). Opening the log replays it into the history.
//
// Threading: safe from any thread; store()/end_batch() on the protocol thread (the Router,
// under a leaf lock of its own); the rest under the participant's lock, at a view boundary
// or before the engine starts. mu_ is a leaf; the log is used under it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "dcps/router.hpp"
#include "discovery/records.hpp"
#include "storage/history.hpp"
#include "storage/log.hpp"
#include "storage/settings.hpp"

namespace spindle::dcps {

using discovery::ReaderRecord;
using discovery::WriterRecord;

// Whether a writer's messages are retained, and how (nullopt: not retained).
[[nodiscard]] std::optional<storage::WriterTerms> retention_terms(
    const dds::pub::qos::DataWriterQos& q);
// Whether a writer's messages go to the durable log (consistency LOGGED, durability PERSISTENT).
[[nodiscard]] bool logs(const dds::pub::qos::DataWriterQos& q);
// Whether a reader asks for retained history.
[[nodiscard]] bool wants_history(const dds::sub::qos::DataReaderQos& q);

// One retained message as a late reader receives it.
struct Historical {
  storage::Entry entry;
  std::int32_t strength = 0;  // the writer's OWNERSHIP_STRENGTH
  dds::core::Duration lifespan = dds::core::Duration::infinite();  // the writer's LIFESPAN
};

class RetainedTopic final : public TopicStore {
 public:
  explicit RetainedTopic(std::uint64_t topic) : topic_(topic) {}

  [[nodiscard]] std::uint64_t topic() const noexcept { return topic_; }
  // A writer whose messages are kept (its record, for matching late readers); a logged one's
  // record goes to the log (open_log() first).
  void add_writer(const WriterRecord& w, const storage::WriterTerms& terms);
  void retire(std::uint64_t writer);
  // The entries `r` matches, oldest first.
  [[nodiscard]] std::vector<Historical> history_for(const ReaderRecord& r) const;
  // The records of the writers that are gone but whose entries are kept.
  [[nodiscard]] std::vector<WriterRecord> gone_writers() const;
  [[nodiscard]] const storage::History& history() const noexcept { return history_; }
  // A joiner's state transfer: begin_restore() drops what this member recovered from its log
  // (the domain's history is newer) and marks a snapshot in the log; restore() puts back one
  // entry (and logs it, when its writer is logged); end_restore() writes and syncs the log.
  void begin_restore();
  void restore(storage::Entry e);
  void end_restore();
  // A refresh (docs/storage.md, "Refresh"): the history as it stood at the last view boundary
  // at a member whose history is whole replaces this one, which missed messages. Entries of
  // writers that went since, and whose entries go with them, are left out (this member already
  // took the retirement).
  void refresh(std::vector<storage::Entry> entries);

  // The durable log, at the first logged writer (or a log found at start): opened in `dir`
  // and replayed into the history; `epoch` is the installed view's. Idempotent. On failure
  // the topic has no log and log_failure() says why. Returns what recovery found.
  //  - Damage: a damaged stretch of the log is skipped (storage: skip_damage) and the log goes
  //    on — every intact record before and after it is replayed, and the report lists the
  //    stretch. The samples lost in the stretches since the last snapshot mark are counted
  //    (lost_samples()) from the orders on both sides: within a view the log's sequence
  //    numbers count one per record, so a stretch between a:s1 and a:s2 lost s2 - s1 - 1;
  //    one across views lost at least the new view's records before it (s2 - 1), and one.
  //    What cannot be skipped (a missing segment, a bad stretch with nothing in order after it
  //    in the newest segment) is set aside by repair, and its records count as lost too.
  //  - Identity: with `identity`, a log of another domain or home is refused: its directory
  //    is moved aside to <dir>.foreign (nothing deleted) and the topic starts a new log; the
  //    report's identity_note says what happened.
  storage::RecoveryReport open_log(const std::filesystem::path& dir,
                                   const storage::LogSettings& settings, std::uint64_t epoch,
                                   const std::optional<storage::LogIdentity>& identity = {});
  // Samples the replayed log lost in damaged stretches (0: none). A reader that receives this
  // topic's history and matches one of its writers counts them as SAMPLE_LOST.
  [[nodiscard]] std::uint64_t lost_samples() const;
  [[nodiscard]] std::uint64_t lost_samples_for(const ReaderRecord& r) const;
  // The view whose deliveries follow (the logged records' order).
  void set_view(std::uint64_t epoch);
  // Why the log failed or could not open; empty while it works (or there is none).
  [[nodiscard]] std::string log_failure() const;
  [[nodiscard]] bool logging() const;
  // The log's retention (control thread, now and then).
  void apply_retention();

  // TopicStore (protocol thread).
  bool store(const ParsedSample& sample) override;
  bool end_batch() override;

 private:
  bool end_batch_locked();  // mu_ held
  // Queues one record in this member's order (mu_ held); false once the log failed.
  bool append(std::uint16_t kind, std::vector<std::byte> payload);
  // Appends the queued records with one write (mu_ held); false (and failed) on an error.
  bool flush();
  void fail(const std::string& why);          // mu_ held
  void replay(const storage::RecordView& r);  // mu_ held, open_log()
  // Opens and replays (mu_ held); throws the LogError of an open that failed.
  void open_and_replay(const storage::LogOptions& o, storage::RecoveryReport& report);

  const std::uint64_t topic_;
  storage::History history_;
  mutable std::mutex mu_;  // a leaf
  std::map<std::uint64_t, WriterRecord> records_;
  std::map<std::uint64_t, bool> gone_;
  // The log (logged topics), and what it needs.
  std::optional<storage::Log> log_;
  std::string log_error_;
  std::set<std::uint64_t> logged_;                                        // logged writers
  spindle::policy::FsyncKind fsync_ = spindle::policy::FsyncKind::NEVER;  // strictest
  std::chrono::nanoseconds fsync_period_{0};
  std::chrono::steady_clock::time_point last_sync_{};
  bool unsynced_ = false;  // appended since the last sync
  std::uint64_t epoch_ = 0;
  std::uint64_t lost_ = 0;  // samples lost in damaged stretches of the replayed log
  storage::Order last_{};
  struct Pending {
    storage::Order order;
    std::uint16_t kind = 0;
    std::vector<std::byte> bytes;
  };
  std::vector<Pending> pending_;  // appended at the batch's end
  std::vector<storage::AppendItem> items_;
};

// One entry of a retained topic in the state transfer (docs/membership.md, record kind 4):
//   u64 topic | u64 seq | u64 writer | 16 bytes key hash | u8 change kind | message bytes
// little-endian; decode_entry() checks the size and the kind and says what is wrong.
void encode_entry(std::uint64_t topic, const storage::Entry& e, std::vector<std::byte>& out);
[[nodiscard]] std::optional<storage::Entry> decode_entry(std::span<const std::byte> bytes,
                                                         std::uint64_t& topic, std::string& error);

}  // namespace spindle::dcps
