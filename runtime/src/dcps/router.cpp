// The DCPS end of the view engine (see router.hpp).
#include "dcps/router.hpp"

#include <algorithm>
#include <cstring>

#include <dds/core/Exception.hpp>

namespace spindle::dcps {

namespace {

constexpr auto kHeader = static_cast<std::uint32_t>(sizeof(SampleHeader));

// What a topic's sinks take together: all when one takes all.
group::Want wanted_by(const std::vector<TopicSink*>& sinks) {
  if (sinks.empty()) return group::Want::none;
  for (const auto* sink : sinks)
    if (sink->wants() == group::Want::all) return group::Want::all;
  return group::Want::own;
}

}  // namespace

std::uint32_t Router::max_payload(group::Channel channel) const {
  const std::uint32_t m = bus_->max_message(channel);
  return m > kHeader ? m - kHeader : 0;
}

std::uint64_t Router::max_sample() const {
  const std::uint64_t m = bus_->max_large_message();
  return m > kHeader ? m - kHeader : 0;
}

std::optional<std::uint64_t> Router::sendable(group::Channel channel) const {
  const auto m = bus_->sendable(channel);
  if (!m) return std::nullopt;
  return *m > kHeader ? *m - kHeader : 0;
}

void Router::expect_room(group::Channel channel, std::uint64_t payload_size) {
  bus_->expect_room(channel, kHeader + payload_size);
}

Slot Router::reserve(group::Channel channel, std::size_t payload_size, Clock::time_point deadline,
                     bool at_once) {
  // Larger than a slot, the engine sends it by RDMC; only past its buffer space is it refused.
  if (payload_size > max_payload(channel) && payload_size > max_sample()) {
    throw dds::core::PreconditionNotMetError(
        "sample of " + std::to_string(payload_size) + " bytes exceeds the largest sample " +
        std::to_string(max_sample()) +
        " bytes (engine.rdmc_buffer_size in the domain file, less the 64-byte sample header)");
  }
  Slot s;
  // Committed at once: it may share the slot of the message before it (group/packed.hpp).
  s.loan = at_once ? bus_->append(channel, kHeader + payload_size, deadline)
                   : bus_->reserve(channel, kHeader + payload_size, deadline);
  s.payload = s.loan.data + kHeader;
  s.capacity = s.loan.capacity - kHeader;
  return s;
}

void Router::commit(Slot& slot, const SampleHeader& header, std::size_t payload_size,
                    Clock::time_point deadline) {
  std::memcpy(slot.loan.data, &header, sizeof header);
  bus_->commit(slot.loan, kHeader + payload_size, deadline);
}

void Router::abandon(Slot& slot, Clock::time_point deadline) {
  SampleHeader empty;
  empty.kind = SampleKind::nothing;
  commit(slot, empty, 0, deadline);
}

void Router::publish(group::Channel channel, const SampleHeader& header, std::size_t payload_size,
                     const std::function<void(std::span<std::byte>)>& fill,
                     Clock::time_point deadline) {
  Slot slot = reserve(channel, payload_size, deadline, true);
  try {
    fill(std::span<std::byte>(slot.payload, payload_size));
  } catch (...) {
    // A reserved slot must be committed (the ring is ordered by reservation): commit it
    // as an empty message, which every reader skips.
    abandon(slot, deadline);
    throw;
  }
  commit(slot, header, payload_size, deadline);
}

void Router::subscribe(std::uint64_t topic, TopicSink* sink) {
  std::lock_guard order(want_mu_);
  group::Want before{};
  group::Want after{};
  {
    std::lock_guard lock(sinks_mu_);
    auto& list = sinks_[topic];
    before = wanted_by(list);
    list.push_back(sink);
    after = wanted_by(list);
  }
  // A client asks its relay for the topic before its reader is announced, so the relay hands
  // on every message of it from before the reader's first match.
  if (after != before) bus_->want(topic, after);
}

void Router::unsubscribe(std::uint64_t topic, TopicSink* sink) {
  std::lock_guard order(want_mu_);
  group::Want before{};
  group::Want after{};
  {
    std::lock_guard lock(sinks_mu_);
    auto it = sinks_.find(topic);
    if (it == sinks_.end()) return;
    before = wanted_by(it->second);
    std::erase(it->second, sink);
    std::erase(touched_, sink);
    after = wanted_by(it->second);
    if (it->second.empty()) sinks_.erase(it);
  }
  if (after != before) bus_->want(topic, after);
}

void Router::attach(NodeId client, NodeId relay) {
  std::lock_guard lock(relays_mu_);
  relays_[client] = relay;
}

NodeId Router::node_of(std::uint64_t guid) const {
  const auto node = guid_node(guid);
  std::lock_guard lock(relays_mu_);
  const auto it = relays_.find(node);
  return it == relays_.end() ? node : it->second;
}

std::vector<std::pair<NodeId, NodeId>> Router::relayed() const {
  std::lock_guard lock(relays_mu_);
  std::vector<std::pair<NodeId, NodeId>> out(relays_.begin(), relays_.end());
  std::sort(out.begin(), out.end());
  return out;
}

bool Router::sends_for(std::uint64_t writer, NodeId sender) const {
  const auto node = guid_node(writer);
  if (node == sender) return true;
  std::lock_guard lock(relays_mu_);
  const auto it = relays_.find(node);
  return it != relays_.end() && it->second == sender;
}

void Router::set_tap(DeliveryTap* tap) {
  std::lock_guard lock(tap_mu_);
  tap_ = tap;
}

bool Router::retains(std::uint64_t topic) const {
  if (!any_store_.load(std::memory_order_acquire)) return false;
  std::lock_guard lock(stores_mu_);
  return stores_.contains(topic);
}

void Router::set_builtin_handler(BuiltinHandler handler) {
  std::lock_guard lock(sinks_mu_);
  builtin_ = std::move(handler);
}

void Router::set_suspicion_handler(SuspicionHandler handler) {
  std::lock_guard lock(sinks_mu_);
  on_suspicion_ = std::move(handler);
}

RouterStats Router::stats() const {
  RouterStats s;
  s.delivered = delivered_.load();
  s.malformed = malformed_.load();
  std::lock_guard lock(error_mu_);
  s.last_malformed = last_malformed_;
  return s;
}

void Router::retain(std::uint64_t topic, std::shared_ptr<TopicStore> store) {
  std::lock_guard lock(stores_mu_);
  stores_[topic] = std::move(store);
  any_store_.store(true, std::memory_order_release);
}

void Router::on_member_lost(NodeId node, bool left, const std::string& why) {
  std::lock_guard tap(tap_mu_);
  // The participant retires the member's endpoints and its clients' (node_of), then its
  // clients are nobody's.
  if (auto h = copy_of(on_suspicion_)) h(node, left, why);
  {
    std::lock_guard lock(relays_mu_);
    std::erase_if(relays_, [node](const auto& e) { return e.second == node; });
  }
  if (tap_ != nullptr) tap_->on_member_lost(node, left, why);
}

void Router::set_halt_handler(std::function<void(const std::string& why)> handler) {
  std::lock_guard lock(sinks_mu_);
  on_halt_ = std::move(handler);
}

void Router::on_halt(const std::string& why) {
  std::lock_guard tap(tap_mu_);
  if (auto h = copy_of(on_halt_)) h(why);
  if (tap_ != nullptr) tap_->on_halt(why);
}

void Router::set_rejoin_handler(
    std::function<void(const group::View&, std::span<const std::byte>)> handler) {
  std::lock_guard lock(sinks_mu_);
  on_rejoin_ = std::move(handler);
}

void Router::on_rejoin(const group::View& view, std::span<const std::byte> state) {
  {
    std::lock_guard tap(tap_mu_);
    cut_view_ = view;
  }
  epoch_.store(view.epoch, std::memory_order_relaxed);
  // Not under the tap lock: the participant announces its endpoints again from here.
  if (auto h = copy_of(on_rejoin_)) h(view, state);
}

void Router::set_state_provider(std::function<std::vector<std::byte>(std::string_view)> provider) {
  std::lock_guard lock(sinks_mu_);
  state_ = std::move(provider);
}

std::vector<std::byte> Router::state_for_joiner(std::string_view subject) {
  const auto s = copy_of(state_);
  return s ? s(subject) : std::vector<std::byte>{};
}

void Router::set_layout_hooks(
    std::function<group::Demand()> demand, std::function<void(const group::View&)> view,
    std::function<std::optional<group::Channel>(std::uint64_t)> writer_channel) {
  std::lock_guard lock(sinks_mu_);
  demand_ = std::move(demand);
  on_view_ = std::move(view);
  writer_channel_ = std::move(writer_channel);
}

std::optional<group::Channel> Router::channel_of(std::span<const std::byte> message) {
  std::string error;
  const auto parsed = parse(message, error);
  if (!parsed) return std::nullopt;
  if (parsed->header.topic == 0) return group::Channel{};
  const auto h = copy_of(writer_channel_);
  return h ? h(parsed->header.writer) : std::nullopt;
}

group::Demand Router::layout_demand() {
  const auto d = copy_of(demand_);
  return d ? d() : group::Demand{};
}

void Router::unpin(std::uint32_t /*subgroup*/) {
  std::lock_guard lock(sinks_mu_);
  for (auto& [topic, sinks] : sinks_)
    for (TopicSink* s : sinks)
      s->unpin();
}

void Router::on_view(const group::View& view) {
  // What the caches hold of the view that ended goes, and the view with it.
  unpin(/*subgroup=*/0);
  std::lock_guard tap(tap_mu_);
  cut_view_ = view;
  // What the participant delivers at the boundary (held back in the view that ended) goes
  // before the new view's number.
  if (auto h = copy_of(on_view_)) h(view);
  epoch_.store(view.epoch, std::memory_order_relaxed);
  if (tap_ != nullptr) tap_->on_view(view);
}

void Router::set_gap_handler(std::function<void(std::span<const std::uint64_t>)> handler) {
  std::lock_guard lock(sinks_mu_);
  on_gaps_ = std::move(handler);
}

void Router::on_gaps(std::span<const std::uint64_t> topics) {
  if (auto h = copy_of(on_gaps_)) h(topics);
}

void Router::hold_back(std::vector<std::uint64_t> topics) {
  std::lock_guard lock(sinks_mu_);
  deliver_held(true);
  std::lock_guard held(held_mu_);
  holding_ = std::move(topics);
  any_held_topic_.store(!holding_.empty(), std::memory_order_release);
}

void Router::release(std::uint64_t topic) {
  std::lock_guard held(held_mu_);
  std::erase(holding_, topic);
  any_held_topic_.store(!holding_.empty(), std::memory_order_release);
  release_due_.store(true, std::memory_order_release);
}

void Router::deliver_held(bool all) {
  std::vector<Held> now;
  {
    std::lock_guard held(held_mu_);
    if (held_.empty()) return;
    if (all) {
      now = std::move(held_);
      held_.clear();
    } else {
      // A message goes on once none of its topics is held back any more; the others keep
      // their order.
      std::vector<Held> still;
      for (auto& h : held_) {
        const bool waits = std::any_of(h.topics.begin(), h.topics.end(), [&](std::uint64_t t) {
          return std::find(holding_.begin(), holding_.end(), t) != holding_.end();
        });
        (waits ? still : now).push_back(std::move(h));
      }
      held_ = std::move(still);
    }
  }
  std::vector<group::Message> batch;
  batch.reserve(now.size());
  for (auto& h : now) {
    batch.push_back(h.message);
    batch.back().payload = h.bytes;
    batch.back().pins = nullptr;  // a copy
  }
  deliver(batch, false);
}

void Router::on_deliver(std::span<const group::Message> batch) {
  std::lock_guard tap(tap_mu_);
  if (tap_ != nullptr) tap_->on_batch(batch);
  std::lock_guard lock(sinks_mu_);
  deliver(batch, true);
  if (release_due_.exchange(false, std::memory_order_acq_rel)) deliver_held(false);
}

void Router::deliver(std::span<const group::Message> batch, bool hold) {
  const bool stores = any_store_.load(std::memory_order_acquire);
  const bool holding = hold && any_held_topic_.load(std::memory_order_acquire);
  routed_.clear();
  std::string error;
  for (const auto& m : batch) {
    auto parsed = parse(m.payload, error);
    if (parsed && !sends_for(parsed->header.writer, m.sender) &&
        parsed->header.kind != SampleKind::nothing) {
      error = "writer " + std::to_string(parsed->header.writer) + " does not belong to node " +
              std::to_string(m.sender);
      parsed.reset();
    }
    // A coherent set is its messages, every one of them checked as one on its own is: one
    // bad message refuses the whole set (all or nothing).
    if (parsed && parsed->header.kind == SampleKind::coherent_set) {
      if (!parse_set(parsed->payload, set_, error)) {
        parsed.reset();
      } else {
        for (const auto& inner : set_) {
          if (sends_for(inner.header.writer, m.sender)) continue;
          error = "coherent set: writer " + std::to_string(inner.header.writer) +
                  " does not belong to node " + std::to_string(m.sender);
          parsed.reset();
          break;
        }
      }
    }
    if (!parsed) {
      malformed_.fetch_add(1, std::memory_order_relaxed);
      std::lock_guard elock(error_mu_);
      last_malformed_ = "message " + std::to_string(m.index) + " from node " +
                        std::to_string(m.sender) + ": " + error;
      continue;
    }
    if (hold) delivered_.fetch_add(1, std::memory_order_relaxed);
    if (parsed->header.kind == SampleKind::nothing) continue;
    const bool is_set = parsed->header.kind == SampleKind::coherent_set;
    if (holding && parsed->header.topic != 0) {
      std::vector<std::uint64_t> topics{parsed->header.topic};
      if (is_set)
        for (const auto& inner : set_)
          topics.push_back(inner.header.topic);
      std::lock_guard held(held_mu_);
      if (std::any_of(topics.begin(), topics.end(), [&](std::uint64_t t) {
            return std::find(holding_.begin(), holding_.end(), t) != holding_.end();
          })) {
        held_.push_back(
            Held{m, std::vector<std::byte>(m.payload.begin(), m.payload.end()), std::move(topics)});
        continue;
      }
    }
    const std::span<const ParsedSample> samples =
        is_set ? std::span<const ParsedSample>(set_) : std::span<const ParsedSample>(&*parsed, 1);
    for (std::size_t k = 0; k < samples.size(); ++k) {
      ParsedSample sample = samples[k];
      if (k == 0) sample.lost_before = m.lost_before;
      // Taken on receipt by a listener, or sent again by a view change: it may have been
      // taken already (a reader drops what it took of its writer).
      sample.listened = m.listened || (m.flags & group::kResent) != 0;
      sample.epoch = epoch_.load(std::memory_order_relaxed);
      sample.subgroup = m.subgroup;
      sample.order = m.seq;
      sample.source = m.pins != nullptr ? &m : nullptr;
      if (stores) {
        routed_.push_back(Routed{sample, m.sender});
      } else {
        route(sample, m.sender);
      }
    }
  }
  if (stores && !routed_.empty()) {
    // Stores first: a message reaches readers only once its store kept it (a log appended
    // and, at the batch's end, synced as its level asks).
    {
      std::lock_guard slock(stores_mu_);
      for (auto& r : routed_) {
        if (r.sample.header.topic == 0) continue;
        const auto st = stores_.find(r.sample.header.topic);
        if (st == stores_.end()) continue;
        r.store = st->second.get();
        r.pass = r.store->store(r.sample);
        if (std::find(touched_stores_.begin(), touched_stores_.end(), r.store) ==
            touched_stores_.end())
          touched_stores_.push_back(r.store);
      }
      for (TopicStore* st : touched_stores_) {
        if (st->end_batch()) continue;
        for (auto& r : routed_)
          if (r.store == st) r.pass = false;
      }
      touched_stores_.clear();
    }
    for (const auto& r : routed_)
      if (r.pass) route(r.sample, r.sender);
  }
  for (TopicSink* s : touched_)
    s->on_batch_end();
  touched_.clear();
}

void Router::route(const ParsedSample& sample, NodeId sender) {
  if (sample.header.topic == 0 && (sample.header.kind == SampleKind::client_attached ||
                                   sample.header.kind == SampleKind::client_detached)) {
    if (sample.payload.size() != 4) return;  // counted nowhere: a relay's bug, not a client's
    NodeId client = 0;
    for (std::size_t i = 0; i < 4; ++i)
      client |= static_cast<NodeId>(sample.payload[i]) << (8 * i);
    {
      std::lock_guard lock(relays_mu_);
      if (sample.header.kind == SampleKind::client_attached) {
        relays_[client] = sender;
        return;
      }
      const auto it = relays_.find(client);
      if (it == relays_.end() || it->second != sender) return;  // stale: it moved on
      relays_.erase(it);
    }
    // Detached: what the relay did not retire of the client goes now (the participant).
    if (builtin_) builtin_(sample, sender);
    return;
  }
  if (sample.header.topic == 0) {
    if (builtin_) builtin_(sample, sender);
    return;
  }
  auto it = sinks_.find(sample.header.topic);
  if (it == sinks_.end()) return;
  for (TopicSink* s : it->second) {
    s->on_sample(sample, sender);
    if (std::find(touched_.begin(), touched_.end(), s) == touched_.end()) touched_.push_back(s);
  }
}

}  // namespace spindle::dcps
