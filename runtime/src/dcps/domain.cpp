// The participant's engine (see domain.hpp).
#include "dcps/domain.hpp"

#include <algorithm>
#include <cstring>
#include <sstream>

#include <dds/core/Exception.hpp>

#include "smc/smc.hpp"
#include "sst/predicate_loop.hpp"
#include "sst/predicates.hpp"
#include "sst/sst.hpp"

namespace spindle::dcps {

group::GroupDescription layout(const config::DomainConfig& config) {
  group::GroupDescription g;
  g.epoch = 1;
  std::vector<NodeId> ids;
  for (const auto& m : config.initial_members()) {
    g.members.push_back(group::Member{m.id, m.host, m.port});
    ids.push_back(m.id);
  }
  // Discovery records travel in the data subgroups too: a slot always has room for a
  // record with default QoS and reasonable names (about 150 bytes plus the names).
  const std::uint32_t slot = std::max<std::uint32_t>(config.engine.slot_size, kMinSlotPayload);
  const std::uint32_t payload =
      std::min<std::uint32_t>(group::kMaxPayload, slot + sizeof(SampleHeader));
  for (auto [name, ordering] : {std::pair{"atomic", group::Ordering::atomic},
                                std::pair{"unordered", group::Ordering::unordered}}) {
    group::Subgroup s;
    s.name = name;
    s.members = ids;
    s.senders = ids;
    s.window_size = config.engine.window_size;
    s.max_payload = payload;
    s.ordering = ordering;
    g.subgroups.push_back(std::move(s));
  }
  g.knobs = config.knobs();
  return g;
}

std::uint32_t subgroup_for(bool unordered) noexcept {
  return unordered ? kUnorderedSubgroup : kAtomicSubgroup;
}

namespace {

std::string member_list(const group::GroupDescription& g, NodeId self) {
  std::string out;
  for (const auto& m : g.members) {
    if (m.id == self) continue;
    out += (out.empty() ? "" : ", ") + std::to_string(m.id) + " (" + m.host + ":" +
           std::to_string(m.port) + ")";
  }
  return out;
}

}  // namespace

Domain::Domain(const config::DomainConfig& config, std::unique_ptr<transport::Transport> transport)
    : config_(config), group_(layout(config)), transport_(std::move(transport)) {
  sst_ = std::make_unique<sst::Sst>(*transport_, group_, sst::steady_clock());
  predicates_ = std::make_unique<sst::Predicates>();
  smc_ = std::make_unique<smc::Smc>(
      *sst_, *predicates_, [this](std::uint32_t subgroup, std::span<const smc::Message> batch) {
        on_deliver(subgroup, batch);
      });
  sst_->set_suspicion_handler([this](const sst::SuspicionReport& r) {
    SuspicionHandler h;
    {
      std::lock_guard lock(sinks_mu_);
      h = on_suspicion_;
    }
    if (h) h(r.node, r.reason == transport::SuspicionReason::peer_left, r.detail);
  });
  const auto timeout =
      std::chrono::duration_cast<std::chrono::milliseconds>(config_.engine.connect_timeout);
  if (sst_->connect(timeout) != transport::Status::ok) {
    std::vector<transport::Event> events;
    transport_->poll(events);
    std::string missing;
    for (const auto& e : events) {
      if (const auto* s = std::get_if<transport::Suspicion>(&e)) {
        missing += (missing.empty() ? "" : "; ") + std::to_string(s->peer) + ": " + s->detail;
      }
    }
    transport_->disconnect();
    std::ostringstream msg;
    msg << "domain " << config_.domain_id << ": node " << config_.node_id << " could not reach "
        << "every member over " << transport_->kind() << " within " << timeout.count()
        << " ms (members: " << member_list(group_, config_.node_id) << ")"
        << (missing.empty() ? "" : "; " + missing)
        << ". Start every member's participant, or check SPINDLE_CONFIG / SPINDLE_NODE_ID.";
    throw dds::core::Error(msg.str());
  }
}

void Domain::start() {
  if (loop_) return;
  loop_ = std::make_unique<sst::PredicateLoop>(*sst_, *predicates_);
  loop_->start();
}

void Domain::stop() {
  // The predicate thread first: it posts to the dispatcher, never the other way round.
  if (loop_) loop_->stop();
  dispatcher_.stop();
}

Domain::~Domain() {
  stop();
  smc_.reset();
  transport_->disconnect();
}

bool Domain::on_predicate_thread() const noexcept {
  return loop_ && loop_->on_loop_thread();
}

std::string_view Domain::transport_kind() const noexcept {
  return transport_->kind();
}

std::uint64_t Domain::in_flight(std::uint32_t subgroup) const noexcept {
  return smc_->in_flight(subgroup);
}

std::uint32_t Domain::max_payload(std::uint32_t subgroup) const noexcept {
  return group_.subgroups.at(subgroup).max_payload -
         static_cast<std::uint32_t>(sizeof(SampleHeader));
}

Domain::Slot Domain::reserve(std::uint32_t subgroup, std::size_t payload_size,
                             Clock::time_point deadline) {
  if (payload_size > max_payload(subgroup)) {
    throw dds::core::PreconditionNotMetError(
        "sample of " + std::to_string(payload_size) + " bytes does not fit a slot of " +
        std::to_string(max_payload(subgroup)) +
        " bytes (engine.slot_size in the domain file); samples larger than a slot need RDMC, "
        "which is not available yet");
  }
  const auto size = static_cast<std::uint32_t>(sizeof(SampleHeader) + payload_size);
  smc::Reservation r = smc_->reserve_wait(subgroup, size, deadline);
  switch (r.status) {
    case smc::ReserveStatus::ok:
      break;
    case smc::ReserveStatus::full:
      throw dds::core::TimeoutError(
          "write blocked longer than reliability.max_blocking_time: every slot of the ring (" +
          std::to_string(group_.subgroups[subgroup].window_size) +
          ") is still waiting for some member to deliver it");
    case smc::ReserveStatus::too_large:
    case smc::ReserveStatus::not_sender:
      throw dds::core::PreconditionNotMetError("this node cannot send in subgroup " +
                                               std::to_string(subgroup));
  }
  return Slot{subgroup, r.data + sizeof(SampleHeader),
              r.capacity - static_cast<std::uint32_t>(sizeof(SampleHeader)), r.index, r.data};
}

void Domain::commit(const Slot& slot, const SampleHeader& header, std::size_t payload_size) {
  std::memcpy(slot.base, &header, sizeof header);
  smc::Reservation r{smc::ReserveStatus::ok, slot.base,
                     slot.capacity + static_cast<std::uint32_t>(sizeof(SampleHeader)), slot.index};
  smc_->commit(slot.subgroup, r, static_cast<std::uint32_t>(sizeof(SampleHeader) + payload_size));
  published_.fetch_add(1, std::memory_order_relaxed);
}

void Domain::abandon(const Slot& slot) {
  SampleHeader empty;
  empty.kind = SampleKind::nothing;
  commit(slot, empty, 0);
}

void Domain::publish(std::uint32_t subgroup, const SampleHeader& header, std::size_t payload_size,
                     const std::function<void(std::span<std::byte>)>& fill,
                     Clock::time_point deadline) {
  const Slot slot = reserve(subgroup, payload_size, deadline);
  try {
    fill(std::span<std::byte>(slot.payload, payload_size));
  } catch (...) {
    // A reserved slot must be committed (the ring is ordered by reservation): commit it
    // as an empty message, which every reader skips.
    abandon(slot);
    throw;
  }
  commit(slot, header, payload_size);
}

void Domain::subscribe(std::uint64_t topic, TopicSink* sink) {
  std::lock_guard lock(sinks_mu_);
  sinks_[topic].push_back(sink);
}

void Domain::unsubscribe(std::uint64_t topic, TopicSink* sink) {
  std::lock_guard lock(sinks_mu_);
  auto it = sinks_.find(topic);
  if (it == sinks_.end()) return;
  std::erase(it->second, sink);
  std::erase(touched_, sink);
  if (it->second.empty()) sinks_.erase(it);
}

void Domain::set_builtin_handler(BuiltinHandler handler) {
  std::lock_guard lock(sinks_mu_);
  builtin_ = std::move(handler);
}

void Domain::set_suspicion_handler(SuspicionHandler handler) {
  std::lock_guard lock(sinks_mu_);
  on_suspicion_ = std::move(handler);
}

DomainStats Domain::stats() const {
  DomainStats s;
  s.published = published_.load();
  s.delivered = delivered_.load();
  s.malformed = malformed_.load();
  std::lock_guard lock(error_mu_);
  s.last_malformed = last_malformed_;
  return s;
}

void Domain::on_deliver(std::uint32_t subgroup, std::span<const smc::Message> batch) {
  std::lock_guard lock(sinks_mu_);
  std::string error;
  for (const auto& m : batch) {
    auto parsed = parse(m.payload, error);
    if (parsed && guid_node(parsed->header.writer) != m.sender &&
        parsed->header.kind != SampleKind::nothing) {
      error = "writer " + std::to_string(parsed->header.writer) + " does not belong to node " +
              std::to_string(m.sender);
      parsed.reset();
    }
    if (!parsed) {
      malformed_.fetch_add(1, std::memory_order_relaxed);
      std::lock_guard elock(error_mu_);
      last_malformed_ = "subgroup " + std::to_string(subgroup) + ", message " +
                        std::to_string(m.index) + " from node " + std::to_string(m.sender) + ": " +
                        error;
      continue;
    }
    delivered_.fetch_add(1, std::memory_order_relaxed);
    const auto kind = parsed->header.kind;
    if (kind == SampleKind::nothing) continue;
    if (parsed->header.topic == 0) {
      if (builtin_) builtin_(*parsed, m.sender);
      continue;
    }
    auto it = sinks_.find(parsed->header.topic);
    if (it == sinks_.end()) continue;
    for (TopicSink* s : it->second) {
      s->on_sample(*parsed, m.sender);
      if (std::find(touched_.begin(), touched_.end(), s) == touched_.end()) touched_.push_back(s);
    }
  }
  for (TopicSink* s : touched_)
    s->on_batch_end();
  touched_.clear();
}

}  // namespace spindle::dcps
