// Refresh: a retained topic's history sent again to a member that missed some of its
// messages while it was left behind for a lag (docs/storage.md, "Refresh"; entities.hpp).
//
//   member X (missed messages of T)          every member             the sender (first of
//                                                                     the view, not waiting)
//   view boundary: on_gaps(T) -> damaged,
//   refresh_request {T}  ------------------> refreshing_[T] += X
//                                            (a relayout is asked for)
//   next view boundary: holds T's messages                            T's history as it stands
//   back (Router::hold_back)                                          -> refresh_state pieces
//   last piece: history replaced,   <------- refreshing_[T] -= X  <-- (builtin subgroup)
//   held messages go on
//
// Every member learns who waits in the builtin subgroup's total order, so each computes the
// same sender at a boundary. A history cut at a boundary holds exactly what was delivered up
// to the ragged edge there; X holds back every message of T delivered after it, and they go
// to its store and readers once the history is in. Pieces sent for a boundary that is no
// longer the current one are dropped: the next boundary sends the history again.
#include <algorithm>
#include <iostream>

#include "dcps/entities.hpp"
#include "dcps/le.hpp"

namespace spindle::dcps {

namespace {

constexpr group::Channel kBuiltin{0, group::Ordering::atomic};

}  // namespace

void report_dropped(NodeId sender, SampleKind kind, const std::string& error) {
  std::cerr << "spindle: dropped a " << to_string(kind) << " message from node " << sender << ": "
            << error << '\n';
}

std::optional<std::vector<std::uint64_t>> parse_topic_list(const ParsedSample& s, NodeId sender,
                                                           std::string& error) {
  if (s.header.writer != make_guid(sender, 0) || s.payload.empty() || s.payload.size() % 8 != 0) {
    error = "not a list of topic ids from the sending member (" + std::to_string(s.payload.size()) +
            " bytes)";
    return std::nullopt;
  }
  std::vector<std::uint64_t> topics;
  for (std::size_t at = 0; at < s.payload.size(); at += 8)
    topics.push_back(get_le(s.payload, at, 8));
  return topics;
}

void Participant::ask_for(SampleKind kind, const std::vector<std::uint64_t>& topics,
                          const std::string& who, const std::string& failed) {
  std::vector<std::byte> payload;
  for (const auto topic : topics)
    put_le(payload, topic, 8);
  try {
    publish_record(kind, make_guid(bus_->node(), 0), payload, who);
  } catch (const dds::core::Exception& e) {
    std::cerr << "spindle: domain " << domain_id_ << ": could not " << failed << ": " << e.what()
              << '\n';
  }
}

void Participant::on_gaps(std::span<const std::uint64_t> topics) {
  // The reliable readers here ask for the latest changes they missed (repair.cpp).
  std::vector<std::uint64_t> repair;
  // The history goes wrong here; refresh_at_boundary(), at this very boundary, asks for it.
  std::lock_guard lock(mu_);
  for (const auto topic : topics) {
    if (!repairable_readers(topic).empty()) repair.push_back(topic);
    if (!retained_.contains(topic)) continue;
    damaged_.insert(topic);
    // A new hole is asked about again, unless this member waits already (the history cut at
    // this very boundary covers it).
    const auto r = refreshing_.find(topic);
    if (r == refreshing_.end() || !r->second.contains(bus_->node())) asked_.erase(topic);
  }
  if (!repair.empty()) {
    executor().post([this, repair] {
      if (!is_closed()) request_repair(repair);
    });
  }
}

void Participant::request_refresh(const std::vector<std::uint64_t>& topics) {
  // When it cannot be sent, the history here keeps its hole; a later gap asks again.
  ask_for(SampleKind::refresh_request, topics, "a retained history's request",
          "ask for a retained history again");
}

void Participant::on_refresh_request(const ParsedSample& s, NodeId sender) {
  std::string why;
  const auto topics = parse_topic_list(s, sender, why);
  if (!topics) return report_dropped(sender, s.header.kind, why);
  {
    std::lock_guard lock(mu_);
    for (const auto topic : *topics)
      if (retained_.contains(topic)) refreshing_[topic].insert(sender);
    // A view boundary is where a history is cut: the leader asks for one (a relayout).
    ++generation_;
  }
  bus_->demand_changed();
}

std::vector<std::uint64_t> Participant::refresh_at_boundary(const group::View& view) {
  std::vector<std::uint64_t> hold;
  incoming_.clear();
  const NodeId me = bus_->node();
  for (auto it = refreshing_.begin(); it != refreshing_.end();) {
    auto& [topic, waiting] = *it;
    std::erase_if(waiting, [&](NodeId n) { return !view.rank_of(n); });
    const auto t = retained_.find(topic);
    if (waiting.empty() || t == retained_.end()) {
      it = refreshing_.erase(it);
      continue;
    }
    // The sender: the first member of this view that was in the last one (it delivered up to
    // the ragged edge) and waits for no history of the topic. One whose own history has a
    // hole it has not asked about yet sends nothing: its request brings the next boundary.
    const auto from = std::find_if(
        view.members.begin(), view.members.end(),
        [&](const group::Member& m) { return view_.rank_of(m.id) && !waiting.contains(m.id); });
    if (from == view.members.end()) {
      // Nobody has it whole (its writers are gone, and every member that kept it missed some):
      // nobody waits any more, and the holes stay (a late reader counts them as SAMPLE_LOST
      // where it took none of the samples).
      if (waiting.contains(me)) {
        std::cerr << "spindle: domain " << domain_id_ << ": no member holds the whole history of "
                  << "retained topic " << topic << " any more; this member keeps what it has\n";
      }
      it = refreshing_.erase(it);
      continue;
    }
    if (waiting.contains(me)) hold.push_back(topic);
    if (from->id == me && !damaged_.contains(topic)) {
      std::vector<std::byte> bytes;
      std::vector<std::byte> entry;
      for (const auto& e : t->second->history().snapshot()) {
        entry.clear();
        encode_entry(topic, e, entry);
        put_le(bytes, entry.size(), 4);
        bytes.insert(bytes.end(), entry.begin(), entry.end());
      }
      executor().post([this, epoch = view.epoch, topic = topic,
                       targets = std::vector<NodeId>(waiting.begin(), waiting.end()),
                       bytes = std::move(bytes)] {
        if (!is_closed())
          send_pieces(SampleKind::refresh_state, epoch, topic, targets, bytes, true);
      });
    }
    ++it;
  }
  if (!view.rank_of(me)) return hold;
  // Histories found with a hole at this boundary (on_gaps): asked for once.
  std::vector<std::uint64_t> ask;
  for (const auto topic : damaged_)
    if (asked_.insert(topic).second) ask.push_back(topic);
  if (!ask.empty()) {
    executor().post([this, ask] {
      if (!is_closed()) request_refresh(ask);
    });
  }
  // Still waiting two suspicion timeouts on (its sender stopped short of a view change, or
  // could not write): asked for again, which brings the next boundary.
  if (!hold.empty()) {
    const auto after =
        2 * std::chrono::duration_cast<std::chrono::nanoseconds>(view.knobs.suspicion_timeout);
    (void)executor().schedule(clock_now() + after, [this, epoch = view.epoch, hold] {
      if (is_closed()) return;
      std::vector<std::uint64_t> still;
      {
        std::lock_guard lock(mu_);
        if (view_.epoch != epoch) return;
        for (const auto topic : hold)
          if (const auto r = refreshing_.find(topic);
              r != refreshing_.end() && r->second.contains(bus_->node()))
            still.push_back(topic);
      }
      if (!still.empty()) request_refresh(still);
    });
  }
  return hold;
}

void Participant::send_pieces(SampleKind kind, std::uint64_t epoch, std::uint64_t topic,
                              const std::vector<NodeId>& targets,
                              const std::vector<std::byte>& bytes, bool cut) {
  const std::size_t head = kPieceHead + 4 * targets.size();
  const std::size_t slot = router_.max_payload(kBuiltin);
  const std::string what = kind == SampleKind::refresh_state ? "a retained history" : "a repair";
  if (slot <= head) {
    std::cerr << "spindle: domain " << domain_id_ << ": " << what << " for " << targets.size()
              << " members does not fit a builtin slot of " << slot
              << " bytes; raise engine.slot_size\n";
    return;
  }
  const std::size_t room = slot - head;
  const auto pieces =
      static_cast<std::uint32_t>(std::max<std::size_t>(1, (bytes.size() + room - 1) / room));
  std::vector<std::byte> piece;
  for (std::uint32_t i = 0; i < pieces; ++i) {
    // A history is cut at a boundary: a later boundary cuts it again and sends it then. (The
    // view may not be the engine's current one yet: this runs as soon as the boundary posts
    // it, and the write waits for the view.)
    if (is_closed() || (cut && bus_->view().epoch > epoch)) return;
    piece.clear();
    put_le(piece, epoch, 8);
    put_le(piece, topic, 8);
    put_le(piece, i, 4);
    put_le(piece, pieces, 4);
    put_le(piece, targets.size(), 4);
    for (const auto n : targets)
      put_le(piece, n, 4);
    const std::size_t from = std::size_t{i} * room;
    const std::size_t to = std::min(bytes.size(), from + room);
    piece.insert(piece.end(), bytes.begin() + static_cast<std::ptrdiff_t>(from),
                 bytes.begin() + static_cast<std::ptrdiff_t>(to));
    try {
      publish_record(kind, make_guid(bus_->node(), 0), piece, what + "'s piece");
    } catch (const dds::core::Exception& e) {
      // Those waiting for a history go on waiting: the next boundary (this member's failure,
      // say) sends it. A repair is not sent again: its readers count what they missed.
      std::cerr << "spindle: domain " << domain_id_ << ": could not send " << what << ": "
                << e.what() << '\n';
      return;
    }
  }
}

std::optional<Piece> parse_piece(const ParsedSample& s, NodeId sender, std::string& error) {
  if (s.header.writer != make_guid(sender, 0)) {
    error = "not from the sending member";
    return std::nullopt;
  }
  const auto p = s.payload;
  if (p.size() < kPieceHead) {
    error = "shorter than its " + std::to_string(kPieceHead) + "-byte head";
    return std::nullopt;
  }
  Piece out;
  out.epoch = get_le(p, 0, 8);
  out.topic = get_le(p, 8, 8);
  out.piece = static_cast<std::uint32_t>(get_le(p, 16, 4));
  out.pieces = static_cast<std::uint32_t>(get_le(p, 20, 4));
  const auto n = get_le(p, 24, 4);
  if (out.pieces == 0 || out.piece >= out.pieces || n == 0 || n > (p.size() - kPieceHead) / 4) {
    error = "piece " + std::to_string(out.piece) + " of " + std::to_string(out.pieces) + " for " +
            std::to_string(n) + " members in " + std::to_string(p.size()) + " bytes";
    return std::nullopt;
  }
  for (std::size_t i = 0; i < n; ++i)
    out.targets.push_back(static_cast<NodeId>(get_le(p, kPieceHead + 4 * i, 4)));
  out.bytes = p.subspan(kPieceHead + 4 * n);
  return out;
}

void Participant::on_refresh_state(const ParsedSample& s, NodeId sender) {
  std::string why;
  const auto parsed = parse_piece(s, sender, why);
  if (!parsed) return report_dropped(sender, s.header.kind, why);
  const auto& [epoch, topic, piece, pieces, targets, bytes] = *parsed;
  const bool last = piece + 1 == pieces;
  const NodeId me = bus_->node();
  std::vector<std::byte> whole;
  std::shared_ptr<RetainedTopic> t;
  {
    std::lock_guard lock(mu_);
    if (epoch != view_.epoch) return;  // cut at another boundary: this one sends it again
    const auto r = refreshing_.find(topic);
    const bool mine = r != refreshing_.end() && r->second.contains(me) &&
                      std::find(targets.begin(), targets.end(), me) != targets.end();
    if (mine) {
      auto& in = incoming_[topic];
      if (piece == 0) in = IncomingHistory{epoch, 0, {}};
      if (in.epoch == epoch && in.next == piece) {
        in.bytes.insert(in.bytes.end(), bytes.begin(), bytes.end());
        ++in.next;
      }
    }
    if (!last) return;
    if (r != refreshing_.end()) {
      for (const auto target : targets)
        r->second.erase(target);
      if (r->second.empty()) refreshing_.erase(r);
    }
    if (!mine) return;
    auto in = incoming_.extract(topic);
    if (in.empty() || in.mapped().next != pieces) {
      report_dropped(sender, s.header.kind, "a retained history came in part");
    } else {
      whole = std::move(in.mapped().bytes);
      if (const auto it = retained_.find(topic); it != retained_.end()) t = it->second;
    }
  }
  if (t != nullptr) {
    std::vector<storage::Entry> entries;
    std::string error;
    for (std::size_t at = 0; at < whole.size();) {
      if (whole.size() - at < 4) {
        error = "a cut entry length at byte " + std::to_string(at);
        break;
      }
      const auto len = get_le(whole, at, 4);
      at += 4;
      if (len > whole.size() - at) {
        error = "an entry of " + std::to_string(len) + " bytes at byte " + std::to_string(at) +
                " runs past the end";
        break;
      }
      std::uint64_t entry_topic = 0;
      auto e = decode_entry(std::span<const std::byte>(whole).subspan(at, len), entry_topic, error);
      if (!e) break;
      if (entry_topic != topic) {
        error = "an entry of topic " + std::to_string(entry_topic);
        break;
      }
      entries.push_back(std::move(*e));
      at += len;
    }
    if (error.empty()) {
      t->refresh(std::move(entries));
      {
        std::lock_guard lock(mu_);
        damaged_.erase(topic);
        asked_.erase(topic);
        refreshes_.fetch_add(1);
      }
      // The clients this member relays for missed what it missed: they connect again, and
      // the welcome brings them the whole history (off this thread: the Router's tap lock is
      // held here, and a relay is made under relay_mu_ before it takes that lock).
      executor().post([this, topic] {
        std::lock_guard lock(relay_mu_);
        if (relay_ != nullptr)
          relay_->cut_off_all("this member's history of topic " + std::to_string(topic) +
                              " was refreshed (it had missed messages): connect again for the "
                              "whole history");
      });
    } else {
      report_dropped(sender, s.header.kind, error);
    }
  }
  // What was held back goes on (into a whole history, or, when it failed, as it would have).
  router_.release(topic);
  bool again = false;
  {
    std::lock_guard lock(mu_);
    again = damaged_.contains(topic);
  }
  if (again) {
    executor().post([this, topic] {
      if (!is_closed()) request_refresh({topic});
    });
  }
}

bool Participant::history_whole() const {
  std::lock_guard lock(mu_);
  if (!damaged_.empty()) return false;
  return std::none_of(refreshing_.begin(), refreshing_.end(),
                      [&](const auto& r) { return r.second.contains(bus_->node()); });
}

}  // namespace spindle::dcps
