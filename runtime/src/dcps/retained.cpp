// Retained topics (see retained.hpp).
#include "dcps/retained.hpp"

#include <algorithm>
#include <iostream>

#include "discovery/endpoint_table.hpp"
#include "qos/checks.hpp"

namespace spindle::dcps {

namespace policy = dds::core::policy;
using spindle::policy::ConsistencyKind;

namespace {

// The change a delivered message makes to an instance; nullopt for any other message.
std::optional<storage::ChangeKind> change_kind(SampleKind k) {
  switch (k) {
    case SampleKind::data:
      return storage::ChangeKind::data;
    case SampleKind::dispose:
      return storage::ChangeKind::dispose;
    case SampleKind::unregister:
      return storage::ChangeKind::unregister;
    default:
      return std::nullopt;
  }
}

}  // namespace

std::optional<storage::WriterTerms> retention_terms(const dds::pub::qos::DataWriterQos& q) {
  const auto& durability = q.policy<policy::Durability>();
  const auto level =
      qos::effective_consistency(durability, q.policy<spindle::policy::Consistency>());
  if (level < ConsistencyKind::VOLATILE) return std::nullopt;
  storage::WriterTerms t;
  // TRANSIENT, PERSISTENT, LOGGED: per instance, after the writer is gone; TRANSIENT_LOCAL,
  // VOLATILE: per writer, while it lives.
  const bool service_level = level == ConsistencyKind::LOGGED;
  t.per_writer = !service_level;
  t.outlives_writer = service_level;
  // The durability service's history where it is set (always at the service levels), the
  // writer's own otherwise.
  const auto& ds = q.policy<policy::DurabilityService>();
  if (service_level || ds != policy::DurabilityService()) {
    t.depth = ds.history_kind() == policy::HistoryKind::KEEP_ALL ? storage::kUnlimited
                                                                 : ds.history_depth();
    t.max_samples = ds.max_samples();
    t.max_instances = ds.max_instances();
    t.max_samples_per_instance = ds.max_samples_per_instance();
  } else {
    const auto& h = q.policy<policy::History>();
    const auto& rl = q.policy<policy::ResourceLimits>();
    t.depth = h.kind() == policy::HistoryKind::KEEP_ALL ? storage::kUnlimited : h.depth();
    t.max_samples = rl.max_samples();
    t.max_instances = rl.max_instances();
    t.max_samples_per_instance = rl.max_samples_per_instance();
  }
  return t;
}

bool logs(const dds::pub::qos::DataWriterQos& q) {
  return q.policy<policy::Durability>().kind() == policy::DurabilityKind::PERSISTENT ||
         q.policy<spindle::policy::Consistency>().kind() == ConsistencyKind::LOGGED;
}

bool wants_history(const dds::sub::qos::DataReaderQos& q) {
  return qos::effective_consistency(q.policy<policy::Durability>(),
                                    q.policy<spindle::policy::Consistency>()) >=
         ConsistencyKind::VOLATILE;
}

void RetainedTopic::add_writer(const WriterRecord& w, const storage::WriterTerms& terms) {
  std::lock_guard lock(mu_);
  records_.insert_or_assign(w.guid, w);
  gone_.erase(w.guid);
  history_.add_writer(w.guid, terms);
  if (!logs(w.qos)) return;
  logged_.insert(w.guid);  // its messages reach readers only through the log
  if (!log_) return;
  // The strictest fsync policy of the topic's logged writers.
  const auto& c = w.qos.policy<spindle::policy::Consistency>();
  const auto rank = [](spindle::policy::FsyncKind k) {
    return k == spindle::policy::FsyncKind::EVERY_SAMPLE ? 2
           : k == spindle::policy::FsyncKind::PERIODIC   ? 1
                                                         : 0;
  };
  const auto period =
      std::chrono::duration_cast<std::chrono::nanoseconds>(c.fsync_period().to_chrono());
  if (rank(c.fsync()) > rank(fsync_)) {
    fsync_ = c.fsync();
    fsync_period_ = period;
  } else if (c.fsync() == fsync_ && fsync_ == spindle::policy::FsyncKind::PERIODIC) {
    fsync_period_ = std::min(fsync_period_, period);
  }
  // Its record, so that a restart knows whose messages the log holds.
  if (append(2, discovery::encode(w))) (void)end_batch_locked();
}

void RetainedTopic::retire(std::uint64_t writer) {
  std::lock_guard lock(mu_);
  if (!records_.contains(writer)) return;
  gone_[writer] = true;
  history_.retire(writer);
}

std::vector<Historical> RetainedTopic::history_for(const ReaderRecord& r) const {
  // Which writers' entries the reader takes: those it would match.
  std::map<std::uint64_t, std::pair<std::int32_t, dds::core::Duration>> takes;
  {
    std::lock_guard lock(mu_);
    for (const auto& [g, w] : records_) {
      if (w.topic_name != r.topic_name) continue;
      const auto broken = discovery::match_policies(w, r);  // matching's own rule
      if (!broken || !broken->empty()) continue;
      takes.emplace(g, std::pair{w.qos.policy<policy::OwnershipStrength>().value(),
                                 w.qos.policy<policy::Lifespan>().duration()});
    }
  }
  std::vector<Historical> out;
  for (auto& e : history_.snapshot([&](std::uint64_t w) { return takes.contains(w); })) {
    const auto& [strength, lifespan] = takes.at(e.writer);
    out.push_back(Historical{std::move(e), strength, lifespan});
  }
  return out;
}

std::vector<WriterRecord> RetainedTopic::gone_writers() const {
  std::lock_guard lock(mu_);
  std::vector<WriterRecord> out;
  for (const auto& [g, gone] : gone_)
    if (auto it = records_.find(g); gone && it != records_.end()) out.push_back(it->second);
  return out;
}

bool RetainedTopic::store(const ParsedSample& sample) {
  const auto& h = sample.header;
  const auto kind = change_kind(h.kind);
  if (!kind) return true;
  // The message as it was delivered: the header, then the payload.
  const auto head = std::as_bytes(std::span(&h, 1));
  std::lock_guard lock(mu_);
  (void)history_.retain(h.writer, h.key, *kind, head, sample.payload);
  if (!logged_.contains(h.writer)) return true;
  // A logged message reaches readers only once it is in the log: appended with the rest of
  // its batch at end_batch(), which says whether that worked.
  std::vector<std::byte> message;
  message.reserve(head.size() + sample.payload.size());
  message.insert(message.end(), head.begin(), head.end());
  message.insert(message.end(), sample.payload.begin(), sample.payload.end());
  return append(1, std::move(message));
}

bool RetainedTopic::end_batch() {
  std::lock_guard lock(mu_);
  return end_batch_locked();
}

bool RetainedTopic::end_batch_locked() {
  if (!log_) return true;  // store() refused the logged messages of a failed log
  if (!flush()) return false;
  if (!unsynced_) return true;
  const auto now = std::chrono::steady_clock::now();
  const bool due =
      fsync_ == spindle::policy::FsyncKind::EVERY_SAMPLE ||
      (fsync_ == spindle::policy::FsyncKind::PERIODIC && now - last_sync_ >= fsync_period_);
  if (!due) return true;
  try {
    log_->sync();
  } catch (const storage::LogError& e) {
    fail(e.what());
    return false;
  }
  last_sync_ = now;
  unsynced_ = false;
  return true;
}

bool RetainedTopic::append(std::uint16_t kind, std::vector<std::byte> payload) {
  if (!log_) return false;
  const storage::Order o =
      epoch_ > last_.view ? storage::Order{epoch_, 1} : storage::Order{last_.view, last_.seq + 1};
  last_ = o;
  pending_.push_back(Pending{o, kind, std::move(payload)});
  return true;
}

bool RetainedTopic::flush() {
  if (pending_.empty()) return true;
  if (!log_) return false;
  // One write for the whole batch.
  items_.clear();
  for (const auto& p : pending_)
    items_.push_back(storage::AppendItem{p.order, p.kind, p.bytes});
  try {
    log_->append(items_);
  } catch (const storage::LogError& e) {
    pending_.clear();
    fail(e.what());
    return false;
  }
  pending_.clear();
  unsynced_ = true;
  return true;
}

void RetainedTopic::fail(const std::string& why) {
  // The log keeps what it acknowledged; from here this member delivers none of the topic's
  // logged messages and its logged writers get the error.
  if (log_error_.empty()) {
    log_error_ = why;
    std::cerr << "spindle: the durable log of a topic failed; its logged samples are no "
                 "longer delivered here: "
              << why << '\n';
  }
  log_.reset();
}

namespace {

// Samples lost in one damaged range of a log this class wrote, from the orders on both sides
// (see open_log() in retained.hpp): exact within a view, a lower bound across views.
std::uint64_t lost_between(const std::optional<storage::Order>& before,
                           const std::optional<storage::Order>& after) {
  if (before && after && before->view == after->view)
    return after->seq > before->seq ? after->seq - before->seq - 1 : 0;
  if (after) return after->seq > 1 ? after->seq - 1 : 1;
  return 1;  // to the end of the log: at least the bad record
}

}  // namespace

storage::RecoveryReport RetainedTopic::open_log(
    const std::filesystem::path& dir, const storage::LogSettings& settings, std::uint64_t epoch,
    const std::optional<storage::LogIdentity>& identity) {
  std::lock_guard lock(mu_);
  storage::RecoveryReport report;
  if (log_ || !log_error_.empty()) return report;
  epoch_ = epoch;
  storage::LogOptions o;
  o.dir = dir;
  o.segment_bytes = settings.segment_bytes;
  o.retain_bytes = settings.retain_bytes;
  o.retain_age = std::chrono::duration_cast<std::chrono::seconds>(settings.retain_age);
  o.sync = storage::SyncPolicy::never;  // end_batch() syncs, per the writers' policy
  o.skip_damage = true;                 // a damaged stretch costs its samples, not the log
  o.repair = true;  // what cannot be skipped is set aside (never deleted): the log goes on
  o.identity = identity;
  try {
    try {
      open_and_replay(o, report);
    } catch (const storage::LogError& e) {
      if (e.operation() != "identity") throw;
      // Another domain's or another home's log: not replayed, moved aside whole, and the
      // topic starts a log of its own (its live stream goes on).
      std::filesystem::path aside = dir;
      aside += ".foreign";
      std::error_code ec;
      for (int i = 1; std::filesystem::exists(aside, ec) && i < 1000; ++i) {
        aside = dir;
        aside += ".foreign." + std::to_string(i);
      }
      std::filesystem::rename(dir, aside, ec);
      if (ec)
        throw storage::LogError(
            "open", dir, std::nullopt, ec.value(),
            std::string(e.what()) + "; it cannot be moved aside to " + aside.string());
      open_and_replay(o, report);
      report.identity_note = std::string(e.what()) + "; not replayed: moved aside to " +
                             aside.string() + ", and the topic starts a new log";
    }
  } catch (const storage::LogError& e) {
    fail(e.what());
  }
  return report;
}

void RetainedTopic::open_and_replay(const storage::LogOptions& o, storage::RecoveryReport& report) {
  log_.emplace(storage::Log::open(o, &report));
  last_ = log_->last();
  lost_ = 0;
  // Replay: writer records (gone until they announce themselves again), messages, and
  // snapshot marks (what follows replaces the history). Damaged stretches are skipped by the
  // cursor; a failed read stops the replay but not the log (appends go on at its end).
  auto cursor = log_->read();
  std::size_t counted = 0;  // stretches whose samples lost_ holds
  // When next() returns a record, the last stretch skipped before it has `after`; stretches
  // with no record between them are one range. Only the log's end leaves one open.
  auto count = [&](bool at_end) {
    const auto& skipped = cursor.skipped();
    while (counted < skipped.size()) {
      std::size_t last = counted;
      while (last + 1 < skipped.size() && !skipped[last].after)
        ++last;
      if (!skipped[last].after && !at_end) return;
      lost_ += lost_between(skipped[counted].before, skipped[last].after);
      counted = last + 1;
    }
  };
  try {
    while (auto r = cursor.next()) {
      count(false);
      if (r->kind == 3) lost_ = 0;  // a snapshot: what was lost before it is replaced
      replay(*r);
    }
  } catch (const storage::LogError& e) {
    std::cerr << "spindle: log " << o.dir.string()
              << ": the replay stopped; the history holds the records before: " << e.what() << '\n';
  }
  count(true);
  // Records a repair set aside (what no record resynchronised after) are lost as well.
  for (const auto& d : report.damage)
    if (!d.set_aside.empty()) lost_ += d.records.value_or(1);
  // What the cursor skipped (open() checks only the tail of each segment): the report lists
  // every stretch once.
  for (const auto& d : cursor.skipped()) {
    const bool known = std::any_of(
        report.damage.begin(), report.damage.end(),
        [&](const storage::Damage& k) { return k.file == d.file && k.offset == d.offset; });
    if (!known) report.damage.push_back(d);
  }
}

std::uint64_t RetainedTopic::lost_samples() const {
  std::lock_guard lock(mu_);
  return lost_;
}

std::uint64_t RetainedTopic::lost_samples_for(const ReaderRecord& r) const {
  std::lock_guard lock(mu_);
  if (lost_ == 0) return 0;
  for (const auto& [g, w] : records_) {
    if (w.topic_name != r.topic_name) continue;
    const auto broken = discovery::match_policies(w, r);
    if (broken && broken->empty()) return lost_;
  }
  return 0;
}

void RetainedTopic::replay(const storage::RecordView& r) {
  std::string error;
  switch (r.kind) {
    case 1: {
      const auto parsed = parse(r.payload, error);
      if (!parsed) break;
      const auto& h = parsed->header;
      const auto kind = change_kind(h.kind);
      if (!kind) {
        error = "a message of kind " + std::string(to_string(h.kind)) + " is no change";
        break;
      }
      (void)history_.retain(h.writer, h.key, *kind, r.payload);
      return;
    }
    case 2: {
      auto w = discovery::decode_writer(r.payload, error);
      if (!w) break;
      const auto terms = retention_terms(w->qos);
      if (!terms) {
        error = "writer " + std::to_string(w->guid) + " retains nothing";
        break;
      }
      records_.insert_or_assign(w->guid, *w);
      history_.add_writer(w->guid, *terms);
      // Gone until it announces itself again (after a restart, no writer of the log lives).
      gone_[w->guid] = true;
      history_.retire(w->guid);
      return;
    }
    case 3:
      history_.clear();
      return;
    default:
      error = "unknown record kind " + std::to_string(r.kind);
      break;
  }
  std::cerr << "spindle: log " << log_->options().dir.string() << ": the record at "
            << storage::to_string(r.order) << " is skipped: " << error << '\n';
}

void RetainedTopic::set_view(std::uint64_t epoch) {
  std::lock_guard lock(mu_);
  epoch_ = epoch;
}

std::string RetainedTopic::log_failure() const {
  std::lock_guard lock(mu_);
  return log_error_;
}

bool RetainedTopic::logging() const {
  std::lock_guard lock(mu_);
  return log_.has_value();
}

void RetainedTopic::apply_retention() {
  std::lock_guard lock(mu_);
  if (!log_) return;
  try {
    log_->apply_retention(std::chrono::system_clock::now());
  } catch (const storage::LogError& e) {
    fail(e.what());
  }
}

void RetainedTopic::begin_restore() {
  std::lock_guard lock(mu_);
  history_.clear();
  lost_ = 0;  // the domain's history replaces what the log held
  if (log_ && append(3, {})) (void)end_batch_locked();
}

void RetainedTopic::end_restore() {
  std::lock_guard lock(mu_);
  (void)end_batch_locked();
}

void RetainedTopic::refresh(std::vector<storage::Entry> entries) {
  begin_restore();
  for (auto& e : entries)
    if (history_.keeps(e.writer)) restore(std::move(e));
  end_restore();
}

void RetainedTopic::restore(storage::Entry e) {
  std::lock_guard lock(mu_);
  const bool logged = logged_.contains(e.writer);
  if (logged) (void)append(1, e.message);
  history_.restore(std::move(e));
  if (pending_.size() >= 1024) (void)flush();
}

namespace {

void put64(std::vector<std::byte>& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i)
    out.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xff));
}

std::uint64_t get64(std::span<const std::byte> b, std::size_t at) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < 8; ++i)
    v |= static_cast<std::uint64_t>(b[at + i]) << (8 * i);
  return v;
}

constexpr std::size_t kEntryHead = 8 + 8 + 8 + 16 + 1;

}  // namespace

void encode_entry(std::uint64_t topic, const storage::Entry& e, std::vector<std::byte>& out) {
  put64(out, topic);
  put64(out, e.seq);
  put64(out, e.writer);
  for (auto k : e.key)
    out.push_back(std::byte{k});
  out.push_back(static_cast<std::byte>(e.kind));
  out.insert(out.end(), e.message.begin(), e.message.end());
}

std::optional<storage::Entry> decode_entry(std::span<const std::byte> bytes, std::uint64_t& topic,
                                           std::string& error) {
  if (bytes.size() < kEntryHead) {
    error = "a retained entry of " + std::to_string(bytes.size()) + " bytes is shorter than " +
            std::to_string(kEntryHead);
    return std::nullopt;
  }
  storage::Entry e;
  topic = get64(bytes, 0);
  e.seq = get64(bytes, 8);
  e.writer = get64(bytes, 16);
  for (std::size_t i = 0; i < 16; ++i)
    e.key[i] = static_cast<std::uint8_t>(bytes[24 + i]);
  const auto kind = static_cast<std::uint8_t>(bytes[40]);
  if (kind < 1 || kind > 3) {
    error = "a retained entry has change kind " + std::to_string(kind) + " (1..3)";
    return std::nullopt;
  }
  e.kind = static_cast<storage::ChangeKind>(kind);
  const auto message = bytes.subspan(kEntryHead);
  std::string why;
  if (!parse(message, why)) {
    error = "a retained entry's message does not parse: " + why;
    return std::nullopt;
  }
  e.message.assign(message.begin(), message.end());
  return e;
}

}  // namespace spindle::dcps
