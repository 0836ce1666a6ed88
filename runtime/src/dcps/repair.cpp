// Repair: the latest changes per instance of RELIABLE KEEP_LAST writers, sent to a member
// whose reliable readers missed messages while it was left behind (dcps/repair.hpp;
// docs/dcps.md, "Repair").
#include "dcps/repair.hpp"

#include <algorithm>
#include <iostream>

#include "dcps/entities.hpp"
#include "dcps/le.hpp"

namespace spindle::dcps {

namespace {

constexpr std::size_t kFloorBytes = 8 + 8 + 8;
// A message's place in the total order before it: u64 epoch | u32 subgroup | i64 order.
constexpr std::size_t kPlaceBytes = 8 + 4 + 8;

}  // namespace

// ------------------------------------------------------------------------------ format

void encode_repair(std::span<const RepairFloor> floors, std::span<const std::byte> messages,
                   std::vector<std::byte>& out) {
  put_le(out, floors.size(), 4);
  for (const auto& f : floors) {
    put_le(out, f.reader, 8);
    put_le(out, f.writer, 8);
    put_le(out, f.floor, 8);
  }
  out.insert(out.end(), messages.begin(), messages.end());
}

bool decode_repair(std::span<const std::byte> bytes, Repair& out, std::string& error) {
  out.floors.clear();
  out.messages.clear();
  if (bytes.size() < 4) {
    error = "a repair of " + std::to_string(bytes.size()) + " bytes has no floor count";
    return false;
  }
  const auto n = get_le(bytes, 0, 4);
  if (n > (bytes.size() - 4) / kFloorBytes) {
    error = std::to_string(n) + " floors do not fit a repair of " + std::to_string(bytes.size()) +
            " bytes";
    return false;
  }
  std::size_t at = 4;
  for (std::uint64_t i = 0; i < n; ++i, at += kFloorBytes)
    out.floors.push_back(
        RepairFloor{get_le(bytes, at, 8), get_le(bytes, at + 8, 8), get_le(bytes, at + 16, 8)});
  while (at < bytes.size()) {
    if (bytes.size() - at < 4) {
      error = "a cut message length at byte " + std::to_string(at);
      return false;
    }
    const auto len = get_le(bytes, at, 4);
    at += 4;
    if (bytes.size() - at < kPlaceBytes || len > bytes.size() - at - kPlaceBytes) {
      error = "a message of " + std::to_string(len) + " bytes at byte " + std::to_string(at) +
              " runs past the end";
      return false;
    }
    const auto epoch = get_le(bytes, at, 8);
    const auto subgroup = static_cast<std::uint32_t>(get_le(bytes, at + 8, 4));
    const auto order = static_cast<std::int64_t>(get_le(bytes, at + 12, 8));
    at += kPlaceBytes;
    auto m = parse(bytes.subspan(at, len), error);
    if (!m) {
      error = "the message at byte " + std::to_string(at) + ": " + error;
      return false;
    }
    if (m->header.kind != SampleKind::data && m->header.kind != SampleKind::dispose &&
        m->header.kind != SampleKind::unregister) {
      error = "the message at byte " + std::to_string(at) + " is a " +
              std::string(to_string(m->header.kind)) + ", not a change of an instance";
      return false;
    }
    m->epoch = epoch;
    m->subgroup = subgroup;
    m->order = order;
    out.messages.push_back(*m);
    at += len;
  }
  return true;
}

// ------------------------------------------------------------------------- KeptSamples

void KeptSamples::keep(std::uint64_t writer, std::int32_t depth) {
  std::lock_guard lock(mu_);
  writers_[writer].depth = static_cast<std::size_t>(std::max(1, depth));
}

bool KeptSamples::forget(std::uint64_t writer) {
  std::lock_guard lock(mu_);
  writers_.erase(writer);
  return writers_.empty();
}

void KeptSamples::on_sample(const ParsedSample& sample, NodeId /*sender*/) {
  const auto& h = sample.header;
  if (h.kind != SampleKind::data && h.kind != SampleKind::dispose &&
      h.kind != SampleKind::unregister)
    return;
  std::lock_guard lock(mu_);
  // The clock only while an unregister is in the book, or comes.
  Clock::time_point now{};
  if (h.kind == SampleKind::unregister || !unregistered_.empty()) {
    now = Clock::now();
    forget_unregistered_locked(now);
  }
  const auto w = writers_.find(h.writer);
  if (w == writers_.end()) return;
  auto& slot = w->second.slots[h.key];
  if (h.kind == SampleKind::unregister) {
    slot.unregistered = now;
    unregistered_.push_back(Unregistered{h.writer, h.key, now});
  } else {
    slot.unregistered = {};
  }
  std::vector<std::byte>* into = nullptr;
  if (h.kind != SampleKind::data) {
    // A dispose or an unregister is the instance's latest state: what came before it goes.
    slot.ring.resize(1);
    slot.head = 0;
    into = &slot.ring.front();
  } else if (slot.ring.size() < w->second.depth) {
    into = &slot.ring.emplace_back();
  } else {
    // Full: the oldest is overwritten (its bytes' room is reused).
    into = &slot.ring[slot.head];
    slot.head = (slot.head + 1) % slot.ring.size();
  }
  into->clear();
  put_le(*into, sample.epoch, 8);
  put_le(*into, sample.subgroup, 4);
  put_le(*into, static_cast<std::uint64_t>(sample.order), 8);
  const auto head = std::as_bytes(std::span(&h, 1));
  into->insert(into->end(), head.begin(), head.end());
  into->insert(into->end(), sample.payload.begin(), sample.payload.end());
}

std::size_t KeptSamples::instances() const {
  std::lock_guard lock(mu_);
  std::size_t n = 0;
  for (const auto& [writer, kept] : writers_)
    n += kept.slots.size();
  return n;
}

void KeptSamples::forget_unregistered(Clock::time_point now) {
  std::lock_guard lock(mu_);
  forget_unregistered_locked(now);
}

void KeptSamples::forget_unregistered_locked(Clock::time_point now) {
  while (!unregistered_.empty() && now - unregistered_.front().at >= forget_after_) {
    const auto u = unregistered_.front();
    unregistered_.pop_front();
    const auto w = writers_.find(u.writer);
    if (w == writers_.end()) continue;
    // Still that unregister its latest (written again since: it stays).
    const auto s = w->second.slots.find(u.key);
    if (s != w->second.slots.end() && s->second.unregistered == u.at) w->second.slots.erase(s);
  }
}

std::size_t KeptSamples::append_to(std::vector<std::byte>& out) const {
  std::lock_guard lock(mu_);
  std::size_t n = 0;
  for (const auto& [writer, kept] : writers_) {
    for (const auto& [key, slot] : kept.slots) {
      for (std::size_t k = 0; k < slot.ring.size(); ++k) {
        const auto& m = slot.ring[(slot.head + k) % slot.ring.size()];
        put_le(out, m.size() - kPlaceBytes, 4);
        out.insert(out.end(), m.begin(), m.end());
        ++n;
      }
    }
  }
  return n;
}

// ------------------------------------------------------------------ the participant's side

void Participant::keep_for_repair(const std::shared_ptr<Writer>& w) {
  // A client keeps its own writers' changes too (its relay keeps nothing it relays): its
  // relay hands it back those writers' messages as they were delivered there (Want::own).
  const auto depth = w->kept_depth();
  if (!depth) return;
  std::lock_guard lock(kept_mu_);
  auto& k = kept_[w->topic_id()];
  if (k == nullptr) {
    // Past two suspicion timeouts, a member that missed an unregister has asked for its
    // repair or was removed.
    k = std::make_shared<KeptSamples>(2 * bus_->view().knobs.suspicion_timeout);
    k->keep(w->guid(), *depth);
    router_.subscribe(w->topic_id(), k.get());
    return;
  }
  k->keep(w->guid(), *depth);
}

void Participant::forget_for_repair(std::uint64_t writer_guid) {
  std::lock_guard lock(kept_mu_);
  for (auto k = kept_.begin(); k != kept_.end();) {
    if (!k->second->forget(writer_guid)) {
      ++k;
      continue;
    }
    router_.unsubscribe(k->first, k->second.get());  // waits for a delivery in progress
    k = kept_.erase(k);
  }
}

std::vector<std::shared_ptr<Reader>> Participant::repairable_readers(std::uint64_t topic) const {
  std::vector<std::shared_ptr<Reader>> out;
  for (const auto& [guid, weak] : local_readers_) {
    auto r = weak.lock();
    if (r && !r->is_closed() && !r->is_builtin() && r->topic_id() == topic && r->reliable())
      out.push_back(std::move(r));
  }
  return out;
}

void Participant::request_repair(const std::vector<std::uint64_t>& topics) {
  // When it cannot be sent, the readers keep what they have: SAMPLE_LOST counted the gap.
  ask_for(SampleKind::repair_request, topics, "a repair's request",
          "ask for the latest samples its readers missed");
}

void Participant::on_repair_request(const ParsedSample& s, NodeId sender) {
  std::string why;
  const auto topics = parse_topic_list(s, sender, why);
  if (!topics) return report_dropped(sender, s.header.kind, why);
  if (sender == bus_->node()) return;  // its own writers' changes reached its readers
  for (const auto topic : *topics) {
    // Off the protocol thread: the kept changes' lock is taken under the Router's.
    executor().post([this, topic, sender] {
      if (!is_closed()) send_repair(topic, sender);
    });
  }
}

void Participant::send_repair(std::uint64_t topic, NodeId target) {
  std::shared_ptr<KeptSamples> kept;
  {
    std::lock_guard lock(kept_mu_);
    if (const auto k = kept_.find(topic); k != kept_.end()) kept = k->second;
  }
  if (kept == nullptr) return;
  std::vector<std::shared_ptr<Writer>> writers;
  {
    std::lock_guard lock(mu_);
    for (const auto& [guid, weak] : local_writers_)
      if (auto w = weak.lock(); w != nullptr && w->topic_id() == topic)
        writers.push_back(std::move(w));
  }
  std::vector<RepairFloor> floors;
  for (const auto& w : writers) {
    const auto f = w->floors_for(target);
    floors.insert(floors.end(), f.begin(), f.end());
  }
  if (floors.empty()) return;  // none of its readers matches a writer here
  std::vector<std::byte> messages;
  (void)kept->append_to(messages);
  std::vector<std::byte> bytes;
  encode_repair(floors, messages, bytes);
  send_pieces(SampleKind::repair, bus_->view().epoch, topic, {target}, bytes, false);
}

void Participant::on_repair(const ParsedSample& s, NodeId sender) {
  // The participant that sent it: the member, or an external client it relays for (which
  // keeps its own writers' changes). The Router delivers a message naming a node only from
  // that node or its relay (Router::sends_for).
  const NodeId origin = guid_node(s.header.writer);
  std::string why;
  const auto parsed = parse_piece(s, origin, why);
  if (!parsed) return report_dropped(sender, s.header.kind, why);
  const auto& [epoch, topic, piece, pieces, targets, bytes] = *parsed;
  const NodeId me = bus_->node();
  if (std::find(targets.begin(), targets.end(), me) == targets.end()) return;
  std::vector<std::byte> whole;
  std::vector<std::shared_ptr<Reader>> readers;
  {
    std::lock_guard lock(mu_);
    auto& in = repairs_in_[{origin, topic}];
    // Pieces of one repair go back to back from one participant; a repair cut short (its
    // sender failed) is dropped when the next one starts.
    if (piece == 0) in = IncomingHistory{epoch, 0, {}};
    if (in.epoch != epoch || in.next != piece) {
      repairs_in_.erase({origin, topic});
      return report_dropped(
          sender, s.header.kind,
          "piece " + std::to_string(piece) + " of a repair that did not start here");
    }
    in.bytes.insert(in.bytes.end(), bytes.begin(), bytes.end());
    if (++in.next != pieces) return;
    whole = std::move(in.bytes);
    repairs_in_.erase({origin, topic});
    readers = repairable_readers(topic);
  }
  Repair repair;
  if (!decode_repair(whole, repair, why)) return report_dropped(sender, s.header.kind, why);
  // A participant repairs its own writers' changes only.
  for (const auto& m : repair.messages) {
    if (m.header.topic != topic || guid_node(m.header.writer) != origin)
      return report_dropped(sender, s.header.kind,
                            "a message of writer " + std::to_string(m.header.writer) +
                                " on topic " + std::to_string(m.header.topic) + " is not node " +
                                std::to_string(origin) + "'s on topic " + std::to_string(topic));
  }
  std::size_t took = 0;
  for (const auto& r : readers)
    took += r->repair(repair);
  if (took > 0) repairs_.fetch_add(1);
}

}  // namespace spindle::dcps
