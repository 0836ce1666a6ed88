// The view engine (see engine.hpp).
#include "group/engine.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <iostream>
#include <sstream>
#include <utility>

#include <dds/core/Exception.hpp>
#include <spindle/domain_status.hpp>

#include "core/interfaces.hpp"
#include "group/large_pins.hpp"
#include "rdmc/rdmc.hpp"
#include "security/credentials.hpp"
#include "security/permissions.hpp"
#include "smc/smc.hpp"
#include "sst/predicate_loop.hpp"
#include "sst/predicates.hpp"
#include "sst/sst.hpp"

namespace spindle::group {

// A private buffer for a loan on a channel with no subgroup, 64-byte aligned as a slot.
struct alignas(64) ScratchLine {
  std::byte bytes[64];
};

// A message larger than a slot in a subgroup of this member alone: its bytes, 64-byte
// aligned as RDMC's buffers are.
struct LocalMessage {
  std::vector<ScratchLine> lines;
  std::size_t size = 0;
  explicit LocalMessage(std::size_t n)
      : lines((n + sizeof(ScratchLine) - 1) / sizeof(ScratchLine)), size(n) {}
  [[nodiscard]] std::span<std::byte> bytes() noexcept {
    return {lines.empty() ? nullptr : lines[0].bytes, size};
  }
};

// What a slot flagged kLargeMessage holds: which RDMC message carries the bytes to the
// members that hold, then `copy_words` words of a bitmask: bit k set when the subgroup's
// recipient k (below) gets a copy of its own (docs/dev/rdmc.md, "Copies").
struct LargeDescriptor {
  std::uint64_t seq = 0;   // of the message in its group (a local key: kLocalGroup)
  std::uint64_t size = 0;  // bytes
  std::uint32_t group = 0;
  std::uint32_t copy_words = 0;
};
static_assert(sizeof(LargeDescriptor) == 24);

namespace {
// The members of `sg` that take messages larger than a slot by copies of their own, not in
// its RDMC groups (docs/dev/rdmc.md, "Copies"): its listeners, and the members a lag may leave
// behind; ascending.
std::vector<NodeId> recipients(const Subgroup& sg) {
  if (sg.lag_bound.count() == 0 || sg.demotable.empty()) return sg.listeners;
  std::vector<NodeId> r;
  std::ranges::merge(sg.listeners, sg.demotable, std::back_inserter(r));
  return r;
}
// The words of recipient bits a descriptor of subgroup `sg` carries for `n` recipients: one
// per 64, as many as its slot holds (recipients past them get no copies).
std::uint32_t copy_words(const Subgroup& sg, std::size_t n) {
  if (n == 0 || sg.max_payload < sizeof(LargeDescriptor)) return 0;
  const auto fit = (sg.max_payload - std::uint32_t{sizeof(LargeDescriptor)}) / 8;
  return std::min(static_cast<std::uint32_t>((n + 63) / 64), fit);
}
std::uint32_t descriptor_bytes(const Subgroup& sg, std::size_t n) {
  return std::uint32_t{sizeof(LargeDescriptor)} + 8 * copy_words(sg, n);
}
// Messages of every sender of a subgroup wait in one queue where they are taken in the total
// order (LargeState::behind).
constexpr std::uint32_t kAllSenders = 0xffff'ffffu;
// How often a leader tells its queued joiners it goes on (keep_joiners_waiting).
constexpr std::chrono::seconds kJoinerWaitEvery{1};
// How often free_retired() looks again at a retired view something still holds.
constexpr std::chrono::milliseconds kRetiredLookEvery{50};
}  // namespace

// A recipient's copy of a large message starts with this header (64 bytes, so that the
// message stays 64-byte aligned): which of its sender's messages it is.
struct CopyHeader {
  std::uint64_t index = 0;  // the sender's message number in the subgroup (Message::index)
  std::uint64_t size = 0;   // of the message after the header
  std::byte pad[48] = {};
};
static_assert(sizeof(CopyHeader) == 64);

static_assert(kLargeInFlight == rdmc::kHeaders, "a bounded subgroup's room is a group's headers");

// The RDMC group of a subgroup of this member alone: the bytes stay in this process.
constexpr rdmc::GroupId kLocalGroup = 0xffff'ffffu;
constexpr rdmc::GroupId kNoGroup = 0xffff'fffeu;

// Messages larger than a slot in one view (engine.hpp; docs/dev/rdmc.md, "Under DCPS").
struct LargeState {
  std::unique_ptr<rdmc::Rdmc> rdmc;  // null when no subgroup has two members
  // Per subgroup and sender rank: its RDMC group, kLocalGroup (the subgroup is this member
  // alone) or kNoGroup (the builtin subgroup: nothing larger than a slot).
  std::vector<std::vector<rdmc::GroupId>> group;
  // The largest message the domain takes (engine.rdmc_buffer_size), and, by subgroup, the
  // largest one this view has room for (Subgroup::large; 0: none, every message fits a slot).
  std::uint64_t max_message = 0;
  std::vector<std::uint64_t> room;

  // One of this node's messages between its reservation and its descriptor's commit.
  struct Outgoing {
    smc::Reservation slot;  // the descriptor's
    rdmc::GroupId group = 0;
    std::span<std::byte> data;    // its RDMC buffer (empty while the bytes are in `heap`)
    std::vector<std::byte> heap;  // bytes carried from an earlier view, until space frees
    std::uint64_t size = 0;
    bool committed = false;            // by its writer: it may go
    bool resent = false;               // sent again by a view change (kResent)
    std::optional<std::uint64_t> seq;  // its RDMC message, once announced
    std::uint32_t rank = 0;            // ours among the subgroup's senders
    // Every member that holds has it (kLocalGroup: at once, it stays here); announced.
    bool holders_have = false;
    std::uint32_t next_copy = 0;  // recipients tried so far (in order)
    // Which recipients got a copy (the descriptor's bitmask), and kLocalGroup's bytes.
    std::vector<std::uint64_t> copied;
    std::shared_ptr<LocalMessage> local;
    // Copies the descriptor waits for: a member a lag may leave behind holds until it is.
    struct Awaited {
      std::uint32_t recipient = 0;
      rdmc::GroupId group = 0;
      std::uint64_t seq = 0;
    };
    std::vector<Awaited> awaited;
  };
  std::mutex mu;                     // outgoing, local; `freed` waits on it
  std::condition_variable freed;     // buffer space freed, or the view ends
  std::atomic<int> waiting{0};       // writers waiting for buffer space
  std::atomic<bool> over{false};     // the view ended or this member halted: stop waiting
  std::atomic<bool> stalled{false};  // Engine::stall_transfers(): RDMC moves nothing here
  // By subgroup and slot index: announced in slot order, so that no message waits for
  // header room behind later ones whose descriptors wait for it.
  using OutgoingMap = std::map<std::pair<std::uint32_t, std::uint64_t>, Outgoing>;
  OutgoingMap outgoing;
  std::atomic<std::size_t> queued{0};  // outgoing.size(), read without the lock
  // Whether a message a view change sent again in our group `g` still waits in `heap` for
  // buffer space (mu held). Those go first: a write that took the space before them would
  // wait behind them in the order, holding what they wait for.
  [[nodiscard]] bool carries(rdmc::GroupId g) const {
    return std::ranges::any_of(
        outgoing, [g](const auto& kv) { return kv.second.group == g && !kv.second.heap.empty(); });
  }
  std::map<std::uint64_t, std::shared_ptr<LocalMessage>> local;  // kLocalGroup's
  std::uint64_t next_local = 0;
  // Protocol thread: messages here, by group and seq, until their descriptor is delivered
  // (a sender's own copies too, which a view change may send again).
  std::map<std::pair<rdmc::GroupId, std::uint64_t>, std::span<const std::byte>> held;
  // Delivered messages the layers above hold in place (zero-copy receive): released to RDMC
  // once their last hold ends, not after the upcall.
  LargePins pins;

  // Copies (docs/dev/rdmc.md, "Copies"): the groups above hold the members that hold only; a
  // subgroup's recipients (recipients()) take each message by a copy of their own, in a
  // group of two with its sender. A listener, or a member left behind, gets one only where
  // that group has room at once, so it holds nobody; a member that holds until a lag leaves
  // it behind gets every one, and its descriptor waits for it.
  // Per subgroup: its recipients; per sender rank and recipient, their group (kNoGroup:
  // none); the members left behind as last seen (bit per SST rank; a sender's view).
  std::vector<std::vector<NodeId>> recipients;
  std::vector<std::vector<std::vector<rdmc::GroupId>>> copies;
  std::vector<sst::MemberSet> behind_seen;
  std::optional<TimePoint> lag_wakeup;  // a sender: when the loop wakes to look at `owed`
  struct Pair {
    std::uint32_t subgroup = 0;
    std::uint32_t sender_rank = 0;
    std::uint32_t recipient = 0;  // index in recipients[subgroup]
  };
  std::map<rdmc::GroupId, Pair> pairs;
  // A sender: per group of a recipient that holds, its copies not yet in, and since when
  // none came in (or since the first went out). The lag rule judges its progress, as SMC's
  // judges a member's counters: a recipient whose copies stand still is behind, one that
  // takes them slowly is not.
  struct Owed {
    std::uint32_t copies = 0;
    TimePoint since{};
    bool started = false;  // the recipient was seen running this view's transfers
  };
  std::map<rdmc::GroupId, Owed> owed;
  // Per subgroup: this member's index among its recipients (nullopt: it holds there), and
  // whether it listens there (each sender's messages on receipt) or takes the total order.
  std::vector<std::optional<std::uint32_t>> receiving;
  std::vector<char> listening;
  // Per subgroup: a recipient skipped a message there (a gap: Engine::change_view).
  std::vector<char> skipped_any;
  // A recipient (protocol thread): copies here, by pair group, in the order they came. Each is
  // copied out of RDMC's buffer as it comes, so that the recipient's transfers never wait for
  // its deliveries (which may wait for other members): the sender judges their progress.
  struct Copy {
    std::uint64_t index = 0;  // the message's number at its sender (Message::index)
    std::shared_ptr<LocalMessage> bytes;
  };
  std::map<rdmc::GroupId, std::deque<Copy>> arrived;
  bool copies_came = false;
  // A recipient: the messages held back behind a large one whose copy is on its way (copied
  // out of the ring), and the large ones skipped since the last delivered (no copy came:
  // the sender had no room for it). Per subgroup and sender rank for a listener, per
  // subgroup (kAllSenders) where it takes the total order.
  struct Waiting {
    smc::Message m;
    std::vector<std::byte> bytes;
  };
  struct Behind {
    std::deque<Waiting> waiting;
    std::uint64_t skipped = 0;
  };
  std::map<std::pair<std::uint32_t, std::uint32_t>, Behind> behind;
  std::size_t held_back = 0;  // messages in behind's queues
  // A recipient: per subgroup and sender rank, the sender's message number after the last one
  // taken or skipped.
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint64_t> next_index;

  // A recipient skips a large message it has no copy of: counted with what the ring skipped
  // before it, on the next message it delivers (SAMPLE_LOST), and a gap of its subgroup.
  void skip(Behind& b, const smc::Message& m) {
    b.skipped += 1 + m.lost_before;
    skipped_any[m.subgroup] = 1;
  }
  [[nodiscard]] std::pair<std::uint32_t, std::uint32_t> behind_key(std::uint32_t sg,
                                                                   std::uint32_t rank) const {
    return {sg, listening[sg] != 0 ? rank : kAllSenders};
  }
  // A recipient: lets go of the copies of messages it will not deliver (their descriptors
  // went by, overwritten in the ring or taken without them), so that their sender has room
  // for the next ones. Protocol thread.
  void drop_stale_copies() {
    for (auto& [g, q] : arrived) {
      if (q.empty()) continue;
      const auto& [sg, rank, recipient] = pairs.at(g);
      const auto n = next_index.find({sg, rank});
      std::uint64_t below = n == next_index.end() ? 0 : n->second;
      if (const auto b = behind.find(behind_key(sg, rank)); b != behind.end())
        for (const auto& w : b->second.waiting)
          if (w.m.sender_rank == rank) {
            below = std::min(below, w.m.index);
            break;
          }
      while (!q.empty() && q.front().index < below)
        q.pop_front();
    }
  }

  // `self`'s rank among the senders of subgroup `sg` (their count when it sends nothing).
  [[nodiscard]] static std::uint32_t sender_rank(const View& v, std::uint32_t sg, NodeId self) {
    const auto& senders = v.subgroups[sg].senders;
    return static_cast<std::uint32_t>(std::ranges::find(senders, self) - senders.begin());
  }
  // The group `self` sends in of subgroup `sg` (kNoGroup when it sends nothing there).
  [[nodiscard]] rdmc::GroupId group_of(const View& v, std::uint32_t sg, NodeId self) const {
    const auto rank = sender_rank(v, sg, self);
    return rank < group[sg].size() ? group[sg][rank] : kNoGroup;
  }
  // Whether the sender of rank `rank` in subgroup `sg` sends copies to some recipient.
  [[nodiscard]] bool sends_copies(std::uint32_t sg, std::uint32_t rank) const {
    return std::ranges::any_of(copies[sg][rank], [](auto c) { return c != kNoGroup; });
  }
  // The bytes a descriptor names, if this member holds them (empty otherwise). Protocol
  // thread, or control thread with it stopped.
  [[nodiscard]] std::span<const std::byte> bytes_of(const LargeDescriptor& d) {
    if (d.group == kLocalGroup) {
      std::lock_guard lock(mu);
      const auto it = local.find(d.seq);
      return it == local.end() ? std::span<const std::byte>{} : it->second->bytes();
    }
    const auto it = held.find({d.group, d.seq});
    return it == held.end() ? std::span<const std::byte>{} : it->second;
  }
  // The view ended or this member halted: writers waiting for buffer space give up on it.
  void end() {
    std::lock_guard lock(mu);
    over = true;
    freed.notify_all();
  }
};

// Everything one view runs on; destroyed when no loan of the view is left.
struct ViewState {
  // The transport, once the engine is gone while something still holds this view (a sample
  // a reader lent out in place: group::Pins): its regions stay until the view goes. First,
  // so that it goes last.
  std::shared_ptr<transport::Transport> transport;
  View view;
  // The generation of the demand this view was laid out from (adopted by the first view).
  std::optional<std::uint64_t> demand_generation;
  std::unique_ptr<sst::Sst> sst;
  std::unique_ptr<sst::Predicates> predicates;
  std::unique_ptr<smc::Smc> smc;
  std::unique_ptr<Membership> membership;
  LargeState large;
  std::unique_ptr<sst::PredicateLoop> loop;
  std::optional<std::chrono::nanoseconds> progress_due;  // a progress check scheduled then
  std::vector<smc::Message> unpacked;  // on_deliver's scratch: packed slots split (protocol thread)
  std::vector<TopicCounts*> counts;    // per subgroup: its topic's (Engine::topic_counts_)
};

namespace {

// A delivered large message nobody holds any more: RDMC may reuse its buffer.
void release_large(LargeState& L, rdmc::GroupId g, std::uint64_t seq) {
  L.held.erase({g, seq});
  L.rdmc->release(g, seq);
}

// A recipient's copy of a large message, delivered where it lies: a hold keeps the copy.
void offer_copy(LargeState& L, Message& m, std::shared_ptr<const void> keep) {
  m.pins = &L.pins;
  L.pins.offer(m, {kLocalGroup, 0}, std::move(keep));
}

// Whether recipient k of subgroup `sg` holds its ring (docs/dev/rdmc.md, "Copies"): not a
// listener, and not left behind as far as this member saw.
bool holds_ring(const ViewState& vs, std::uint32_t sg, std::uint32_t k) {
  const NodeId id = vs.large.recipients[sg][k];
  if (std::ranges::binary_search(vs.view.subgroups[sg].listeners, id)) return false;
  const auto r = vs.view.rank_of(id);
  return r && !vs.large.behind_seen[sg].test(*r);
}

// Protocol thread, L.mu held: copies of outgoing message `o` of subgroup `sg` to its
// recipients, in order, each where its group has room now. A recipient that holds its ring
// gets every one, and the descriptor awaits it: without room, false (again later, nothing
// after it in the subgroup going first). The others skip what finds no room.
bool send_copies(ViewState& vs, std::uint32_t sg, LargeState::Outgoing& o, TimePoint now) {
  auto& L = vs.large;
  const auto& pairs = L.copies[sg][o.rank];
  const std::size_t size = sizeof(CopyHeader) + o.size;
  for (; o.next_copy < pairs.size(); ++o.next_copy) {
    const std::uint32_t k = o.next_copy;
    const rdmc::GroupId pg = pairs[k];
    if (pg == kNoGroup) continue;
    const bool holds = holds_ring(vs, sg, k);
    std::optional<std::span<std::byte>> space;
    if (size <= L.rdmc->max_message(pg) && L.rdmc->can_send(pg)) space = L.rdmc->reserve(pg, size);
    std::uint64_t seq = 0;
    if (space) {
      const CopyHeader h{o.slot.index, o.size, {}};
      std::memcpy(space->data(), &h, sizeof h);
      std::memcpy(space->data() + sizeof h, o.data.data(), o.size);
      if (!L.rdmc->send_reserved(pg, *space, seq)) {
        L.rdmc->unreserve(pg, *space);
        space.reset();
      }
    }
    if (!space) {
      if (holds) return false;
      continue;  // a listener, or a member left behind: it skips this one (SAMPLE_LOST)
    }
    o.copied[k / 64] |= std::uint64_t{1} << (k % 64);
    if (holds) {
      o.awaited.push_back({k, pg, seq});
      auto& w = L.owed[pg];
      if (w.copies++ == 0) w.since = now;
    }
  }
  return true;
}

// Commits outgoing message `it`'s descriptor once it may go (L.mu held): every member that
// holds the subgroup's RDMC group has it, every recipient was tried, and no copy is awaited.
// Returns the next message.
LargeState::OutgoingMap::iterator try_commit(ViewState& vs, LargeState::OutgoingMap::iterator it) {
  auto& L = vs.large;
  auto& o = it->second;
  const auto sg = it->first.first;
  if (!o.holders_have || o.next_copy < L.copies[sg][o.rank].size() || !o.awaited.empty())
    return std::next(it);
  std::uint64_t seq = 0;
  if (o.group == kLocalGroup) {
    seq = L.next_local++;
    L.local[seq] = o.local;
  } else {
    seq = *o.seq;
  }
  const LargeDescriptor d{seq, o.size, o.group, static_cast<std::uint32_t>(o.copied.size())};
  std::memcpy(o.slot.data, &d, sizeof d);
  if (!o.copied.empty()) std::memcpy(o.slot.data + sizeof d, o.copied.data(), o.copied.size() * 8);
  vs.smc->commit(sg, o.slot, static_cast<std::uint32_t>(sizeof d + o.copied.size() * 8),
                 kLargeMessage | (o.resent ? kResent : 0u));
  it = L.outgoing.erase(it);
  L.queued.store(L.outgoing.size());
  return it;
}

// A descriptor (kLargeMessage) from `m`'s sender in its own group, with as many bitmask words
// as it says; nullopt otherwise.
std::optional<LargeDescriptor> parse_descriptor(const LargeState& L, const Message& m) {
  LargeDescriptor d;
  const auto& groups = L.group[m.subgroup];
  const rdmc::GroupId want = m.sender_rank < groups.size() ? groups[m.sender_rank] : kNoGroup;
  if (m.payload.size() < sizeof d || want == kNoGroup) return std::nullopt;
  std::memcpy(&d, m.payload.data(), sizeof d);
  if (d.group != want || m.payload.size() != sizeof d + std::size_t{d.copy_words} * 8)
    return std::nullopt;
  return d;
}

// A sender (L.mu held): the members left behind as the rows say now. A copy awaited from one
// of them is awaited no more. True if someone was left behind since the last look.
bool note_left_behind(ViewState& vs) {
  auto& L = vs.large;
  bool changed = false;
  for (std::uint32_t s = 0; s < L.recipients.size(); ++s) {
    if (vs.view.subgroups[s].demotable.empty() || L.recipients[s].empty()) continue;
    const sst::MemberSet mask = vs.smc->left_behind_ranks(s);
    if (mask == L.behind_seen[s]) continue;
    L.behind_seen[s] = mask;
    changed = true;
    for (auto& [key, o] : L.outgoing)
      if (key.first == s)
        std::erase_if(o.awaited, [&](const auto& a) { return !holds_ring(vs, s, a.recipient); });
    std::erase_if(L.owed, [&](const auto& w) {
      const auto& p = L.pairs.at(w.first);
      return p.subgroup == s && !holds_ring(vs, s, p.recipient);
    });
  }
  return changed;
}

// Protocol thread, L.mu held: the lag rule for the recipients whose copies message `o` of
// subgroup `sg` waits for (docs/dev/rdmc.md, "Copies"); true if it left one behind. `rt` wakes
// the loop through `t` when the bound will run out.
bool judge_copies(ViewState& vs, std::uint32_t sg, const LargeState::Outgoing& o, TimePoint now,
                  Runtime& rt, transport::Transport& t) {
  auto& L = vs.large;
  const auto bound = vs.view.subgroups[sg].lag_bound;
  // Not while a view change is under way: a member wedged for it stops on purpose (the next
  // view sends the message again), as SMC's lag check has it.
  const bool wedged = vs.membership->wedged_mask().any();
  bool left = false;
  const auto judge = [&](rdmc::GroupId pg, std::uint32_t recipient) {
    const auto w = L.owed.find(pg);
    if (w == L.owed.end()) return;
    // Its clock runs from when it was first seen running this view's transfers: members
    // install a view one after another.
    if (!w->second.started) {
      w->second.started = L.rdmc->started_by(L.recipients[sg][recipient]);
      w->second.since = now;
    }
    if (wedged) w->second.since = now;
    if (now - w->second.since > bound) {
      if (const auto r = vs.view.rank_of(L.recipients[sg][recipient]))
        left = vs.smc->leave_behind(sg, *r) || left;
      return;
    }
    // One wake-up pending at a time: the loop may doze meanwhile, and looks again then.
    if (!L.lag_wakeup || *L.lag_wakeup < now) {
      L.lag_wakeup = w->second.since + bound + std::chrono::nanoseconds(1);
      (void)rt.control().schedule(*L.lag_wakeup, [&t] { t.notify(); });
    }
  };
  for (const auto& a : o.awaited)
    judge(a.group, a.recipient);
  const auto& pairs = L.copies[sg][o.rank];
  if (o.next_copy < pairs.size()) judge(pairs[o.next_copy], o.next_copy);  // waits for room
  return left && note_left_behind(vs);
}

}  // namespace

namespace {

// NUL-padded text of an SST field.
std::string field_text(const char* data, std::size_t size) {
  return std::string(data, strnlen(data, size));
}

// The view after `v`: without the members of `removed` (bit per rank), with `joined` after
// the others, laid out for `demand` (layout.hpp).
View next_view(const View& v, const sst::MemberSet& removed,
               const std::vector<sst::JoinEntry>& joined,
               const std::vector<sst::JoinIdentity>& identities,
               const std::vector<ChannelDemand>& demand, const LayoutSettings& settings) {
  View next;
  next.epoch = v.epoch + 1;
  next.identity = v.identity;
  next.knobs = v.knobs;
  for (std::size_t r = 0; r < v.members.size(); ++r) {
    if (removed.test(r)) continue;
    next.members.push_back(v.members[r]);
    next.members.back().joining = false;  // it took part in this view change
  }
  for (const auto& j : joined) {
    char host[INET_ADDRSTRLEN] = "127.0.0.1";
    if (j.ipv4 != 0) {
      in_addr a{};
      a.s_addr = j.ipv4;
      (void)::inet_ntop(AF_INET, &a, host, sizeof host);
    }
    next.members.push_back(Member{j.id, host, j.port, j.pid, j.host_id, true, j.nonce});
    if (const auto i = static_cast<std::size_t>(&j - joined.data()); i < identities.size()) {
      next.members.back().subject = field_text(identities[i].subject, sizeof identities[i].subject);
      next.members.back().serial = field_text(identities[i].serial, sizeof identities[i].serial);
    }
  }
  next.subgroups = layout(next.members, demand, settings);
  return next;
}

// A write that waited past its deadline, for a view change or for a full ring. `what` says
// which wait, so that a report tells a slow view change from one that never came.
dds::core::TimeoutError view_change_timeout(const std::string& what) {
  return dds::core::TimeoutError(
      "write blocked longer than reliability.max_blocking_time: a view change was in progress (" +
      what + ")");
}
std::string view_changing(const ViewState& vs) {
  return "view " + std::to_string(vs.view.epoch) +
         " froze its rings for a view change, and the next view was not installed yet";
}
dds::core::TimeoutError ring_full_timeout(std::uint32_t window) {
  return dds::core::TimeoutError(
      "write blocked longer than reliability.max_blocking_time: every slot of the ring (" +
      std::to_string(window) +
      ") is still waiting for some member to deliver it, or for a reader to return the loan "
      "of a sample it reads in place (a LoanedSamples of a self-contained type)");
}

std::string member_list(const View& v, NodeId self) {
  std::string out;
  for (const auto& m : v.members) {
    if (m.id == self) continue;
    out += (out.empty() ? "" : ", ") + std::to_string(m.id) + " (" + m.host + ":" +
           std::to_string(m.port) + ")";
  }
  return out;
}

}  // namespace

Engine::Engine(View first, std::unique_ptr<transport::Transport> transport,
               std::unique_ptr<Runtime> runtime, std::chrono::milliseconds connect_timeout,
               std::uint32_t domain_id, LayoutSettings layout)
    : Engine(std::move(first), std::move(transport), nullptr, std::move(runtime), connect_timeout,
             domain_id, std::move(layout)) {}

Engine::Engine(View first, transport::Transport& transport, std::unique_ptr<Runtime> runtime,
               std::chrono::milliseconds connect_timeout, std::uint32_t domain_id,
               LayoutSettings layout)
    : Engine(std::move(first), nullptr, &transport, std::move(runtime), connect_timeout, domain_id,
             std::move(layout)) {}

Engine::Engine(View first, std::unique_ptr<transport::Transport> owned, transport::Transport* t,
               std::unique_ptr<Runtime> runtime, std::chrono::milliseconds connect_timeout,
               std::uint32_t domain_id, LayoutSettings layout)
    : owned_transport_(std::move(owned)),
      transport_(owned_transport_ ? owned_transport_.get() : t),
      runtime_(std::move(runtime)),
      domain_id_(domain_id),
      layout_(std::move(layout)),
      connect_timeout_(connect_timeout) {
  current_ = build(first, connect_timeout, true);
  idle_spin_ = current_->view.knobs.idle_spin;
}

Engine::~Engine() {
  shutdown();
  // Views that something outside the engine still holds (a sample lent in place outlives
  // its reader: group::Pins) keep the transport, whose regions they read, until they go.
  // The engine's own share goes where the transport went before (kept_transport_).
  if (owned_transport_) {
    kept_transport_ = std::move(owned_transport_);
    if (current_) current_->transport = kept_transport_;
    for (auto& r : retired_)
      if (auto v = r.view.lock()) v->transport = kept_transport_;
  }
  current_.reset();
}

void Engine::shutdown() {
  stop();
  if (!disconnected_.exchange(true)) transport_->disconnect();
}

std::shared_ptr<ViewState> Engine::build(const View& v, std::chrono::milliseconds connect_timeout,
                                         bool first) {
  auto vs = std::make_shared<ViewState>();
  vs->view = v;
  {
    std::lock_guard lock(counts_mu_);
    for (const auto& sg : v.subgroups) {
      auto& c = topic_counts_[sg.topic];
      if (!c) c = std::make_unique<TopicCounts>();
      vs->counts.push_back(c.get());
    }
  }
  Runtime* rt = runtime_.get();
  rt->watch(v.members);  // certain death of the members on this host (liveness.hpp)
  vs->sst =
      std::make_unique<sst::Sst>(*transport_, v, [rt] { return rt->now().time_since_epoch(); });
  vs->sst->count_batches(&batches_);
  vs->predicates = std::make_unique<sst::Predicates>();
  ViewState* raw = vs.get();
  vs->smc = std::make_unique<smc::Smc>(
      *vs->sst, *vs->predicates,
      [this, raw](std::uint32_t, std::span<const smc::Message> batch) { on_deliver(*raw, batch); });
  // Messages delivered in place may be held past the upcall (group::Pins): each hold keeps
  // this view; a sender that needs its held slots asks the client to let go of its own.
  vs->smc->set_pin_owner(vs, [this](std::uint32_t sg) {
    if (client_ != nullptr) client_->unpin(sg);
  });
  vs->large.pins.set_owner(vs, [raw] { raw->sst->nudge(); });
  vs->membership = std::make_unique<Membership>(
      *vs->sst, *vs->smc, *vs->predicates,
      Membership::Callbacks{
          [this, raw](const ViewDecision& d) { decided(raw->view, d); },
          [this](const std::string& why) { halt(why); },
          [rt, raw](std::size_t rank) { return rt->process_state(raw->view.members.at(rank)); },
          [rt] { return rt->now(); },
          [this, rt](TimePoint when) {
            (void)rt->control().schedule(when, [this] { transport_->notify(); });
          }});
  if (closing_.load()) vs->membership->closing();
  vs->sst->set_suspicion_handler(
      [raw](const sst::SuspicionReport& r) { raw->membership->note_suspicion(r.rank, r.detail); });
  vs->sst->set_connected_handler([this, raw](std::size_t) { confirm_joiners(*raw); });
  // Members whose deliveries stop while others' go on (smc.hpp): looked at with the
  // heartbeats, and once more when a member behind runs out of time.
  vs->sst->set_tick_hook([this, raw, rt](std::chrono::nanoseconds now) {
    const auto check = raw->smc->check_progress(now, raw->membership->wedged_mask());
    // A lagging member's bound, or a relief's grace, may run out before the next beat.
    raw->sst->hook_due(check.due);
    if (check.relief_due) raw->sst->hook_due_by(*check.relief_due);
    if (check.due && check.due != raw->progress_due) {
      raw->progress_due = check.due;
      (void)rt->control().schedule(TimePoint(*check.due), [this] { transport_->notify(); });
    }
    if (check.rejoin) {
      // Left behind for a lag and caught up: back as a member that holds, in the next view.
      relayouts_.fetch_add(1, std::memory_order_relaxed);
      raw->membership->request_rejoin();
    }
    return check.suspected || check.demoted;
  });
  build_large(*vs);
  // A member that cannot be reached when a later view is installed is suspected in it: the
  // suspicion events stay queued for the new view's loop, and a view change follows.
  if (vs->sst->connect(connect_timeout) != transport::Status::ok && first) {
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
    msg << "domain " << domain_id_ << ": node " << node() << " could not reach "
        << "every member over " << transport_->kind() << " within " << connect_timeout.count()
        << " ms (members: " << member_list(v, node()) << ")"
        << (missing.empty() ? "" : "; " + missing)
        << ". Start every member's participant, or check SPINDLE_CONFIG / SPINDLE_NODE_ID.";
    throw dds::core::Error(msg.str());
  }
  if (vs->large.rdmc) vs->large.rdmc->start();
  vs->loop = std::make_unique<sst::PredicateLoop>(*vs->sst, *vs->predicates);
  return vs;
}

void Engine::build_large(ViewState& vs) {
  const View& v = vs.view;
  auto& L = vs.large;
  const auto& k = v.knobs;
  // A copy's header comes on top of the largest message (rdmc::Settings::header_room).
  L.max_message = std::min<std::uint64_t>(
      (k.rdmc_buffer_size + 63) / 64 * 64,
      std::uint64_t{k.rdmc_block_size} * (rdmc::kMaxBlocks - 1) - sizeof(CopyHeader));
  std::vector<std::vector<NodeId>> groups;
  std::vector<std::size_t> group_bytes;  // each group's buffer space: its subgroup's room
  const auto n = v.subgroups.size();
  L.room.assign(n, 0);
  L.receiving.assign(n, std::nullopt);
  L.listening.assign(n, 0);
  L.skipped_any.assign(n, 0);
  L.behind_seen.assign(n, sst::MemberSet{});
  for (std::uint32_t s = 0; s < n; ++s) {
    const auto& sg = v.subgroups[s];
    auto& ids = L.group.emplace_back(sg.senders.size(), kNoGroup);
    auto& to = L.recipients.emplace_back(sg.topic == 0 ? std::vector<NodeId>{} : recipients(sg));
    auto& copies =
        L.copies.emplace_back(sg.senders.size(), std::vector<rdmc::GroupId>(to.size(), kNoGroup));
    // Room where the writers' samples may be larger than a slot (Subgroup::large); none in
    // the builtin subgroup, whose records fit a slot.
    L.room[s] = std::min((large_bytes(v, sg) + 63) / 64 * 64, L.max_message);
    if (L.room[s] == 0) continue;
    if (const auto me = std::ranges::find(to, node()); me != to.end()) {
      L.receiving[s] = static_cast<std::uint32_t>(me - to.begin());
      L.listening[s] = std::ranges::binary_search(sg.listeners, node()) ? 1 : 0;
    }
    const std::size_t bits = std::size_t{copy_words(sg, to.size())} * 64;
    for (std::uint32_t i = 0; i < sg.senders.size(); ++i) {
      // The members that hold: a message is everywhere once they all have it.
      std::vector<NodeId> g{sg.senders[i]};
      for (auto m : sg.members)
        if (m != sg.senders[i] && !std::ranges::binary_search(to, m)) g.push_back(m);
      if (g.size() < 2) {
        ids[i] = kLocalGroup;
      } else if (groups.size() < rdmc::kMaxGroups) {  // otherwise refused at reserve(), with why
        ids[i] = static_cast<rdmc::GroupId>(groups.size());
        groups.push_back(std::move(g));
        group_bytes.push_back(L.room[s]);
      }
      // A group of two per recipient, for its copies (none past the group ids or the bits).
      for (std::size_t r = 0; r < to.size() && r < bits; ++r) {
        if (groups.size() == rdmc::kMaxGroups) break;
        copies[i][r] = static_cast<rdmc::GroupId>(groups.size());
        L.pairs.emplace(copies[i][r], LargeState::Pair{s, i, static_cast<std::uint32_t>(r)});
        groups.push_back({sg.senders[i], to[r]});
        group_bytes.push_back(L.room[s]);
      }
    }
  }
  if (groups.empty()) return;
  rdmc::Settings settings;
  settings.algorithm = k.rdmc_algorithm;
  settings.block_size = k.rdmc_block_size;
  settings.group_bytes = static_cast<std::size_t>(k.rdmc_buffer_size);
  settings.header_room = sizeof(CopyHeader);
  // Two staging receives per peer: with 1 MiB blocks, 4 or 8 measured slower on both
  // transports (more bytes in flight than the caches and the pair's queue hold: shm 1 MiB,
  // 2.7-3.1 GB/s against 1.1-2.3; bench/perf/results/2026-11-26-large-samples.txt).
  settings.staging_per_peer = 2;
  ViewState* raw = &vs;
  rdmc::Callbacks cb;
  Runtime* rt = runtime_.get();
  cb.delivered = [raw, rt](rdmc::GroupId g, std::uint64_t seq, std::span<const std::byte> bytes) {
    auto& large = raw->large;
    if (const auto pair = large.pairs.find(g); pair != large.pairs.end()) {
      // A recipient's copy: the sender lets go of its own at once (a descriptor that
      // awaited it may go); the recipient keeps it until it delivers the descriptor
      // (on_deliver), or skips it.
      if (large.rdmc->sends_in(g)) {
        large.rdmc->release(g, seq);
        std::lock_guard lock(large.mu);
        if (const auto w = large.owed.find(g); w != large.owed.end()) {
          if (--w->second.copies == 0)
            large.owed.erase(w);
          else
            w->second.since = rt->now();  // it moves
        }
        for (auto it = large.outgoing.begin(); it != large.outgoing.end(); ++it) {
          auto& o = it->second;
          if (std::erase_if(o.awaited,
                            [&](const auto& a) { return a.group == g && a.seq == seq; }) == 0)
            continue;
          (void)try_commit(*raw, it);
          break;
        }
        return;
      }
      CopyHeader h;
      if (bytes.size() >= sizeof h) std::memcpy(&h, bytes.data(), sizeof h);
      if (bytes.size() <= sizeof h || h.size != bytes.size() - sizeof h) {
        large.rdmc->release(g, seq);
        const auto sender =
            raw->view.subgroups[pair->second.subgroup].senders[pair->second.sender_rank];
        if (const auto r = raw->view.rank_of(sender))
          raw->sst->suspect(*r, transport::SuspicionReason::malformed_frame,
                            "node " + std::to_string(sender) + " sent a copy of " +
                                std::to_string(bytes.size()) + " bytes whose header says " +
                                std::to_string(h.size) + " after it");
        return;
      }
      auto copy = std::make_shared<LocalMessage>(static_cast<std::size_t>(h.size));
      std::memcpy(copy->bytes().data(), bytes.data() + sizeof h, copy->size);
      large.rdmc->release(g, seq);
      large.arrived[g].push_back({h.index, std::move(copy)});
      large.copies_came = true;
      return;
    }
    large.held[{g, seq}] = bytes;
    if (!large.rdmc->sends_in(g)) return;
    // Ours, and every member of the subgroup's group has it now: its descriptor may go once
    // the copies it awaits are in too.
    std::lock_guard lock(large.mu);
    for (auto it = large.outgoing.begin(); it != large.outgoing.end(); ++it) {
      if (it->second.group != g || it->second.seq != seq) continue;
      it->second.holders_have = true;
      (void)try_commit(*raw, it);
      break;
    }
  };
  // A failed transfer is a suspicion of that peer (the SST's: the membership protocol
  // starts a view change; a peer the transport reported is suspected already).
  cb.failed = [raw](NodeId peer, const std::string& why) {
    if (const auto r = raw->view.rank_of(peer))
      raw->sst->suspect(*r, transport::SuspicionReason::malformed_frame, why);
  };
  L.rdmc = std::make_unique<rdmc::Rdmc>(*transport_, v.epoch, std::move(groups), settings,
                                        std::move(cb), std::move(group_bytes));
  vs.sst->set_event_handler([raw](const transport::Event& e) { raw->large.rdmc->on_event(e); });
  vs.predicates->add(
      sst::PredicateKind::recurrent, [this, raw] { return pump_large(*raw); }, [] {});
}

bool Engine::pump_large(ViewState& vs) {
  auto& L = vs.large;
  if (L.stalled.load(std::memory_order_relaxed)) return false;
  // Large messages whose last hold (zero-copy receive) ended: RDMC may reuse their buffers.
  for (const auto& [g, seq] : L.pins.take_released())
    release_large(L, g, seq);
  bool did = L.rdmc->poll();
  if (did && L.waiting.load(std::memory_order_relaxed) > 0) {
    std::lock_guard lock(L.mu);
    L.freed.notify_all();
  }
  if (std::exchange(L.copies_came, false)) {
    deliver_behind(vs, false);
    did = true;
  }
  if (L.queued.load() == 0) return did;  // nothing to announce: no lock
  std::lock_guard lock(L.mu);
  note_left_behind(vs);
  std::optional<std::uint32_t> blocked;  // a subgroup whose next message cannot go yet
  std::optional<std::uint32_t> head_sg;  // the subgroup of the message before
  std::optional<TimePoint> now;
  for (auto it = L.outgoing.begin(); it != L.outgoing.end();) {
    const auto sg = it->first.first;
    auto& o = it->second;
    if (blocked == sg) {
      ++it;
      continue;
    }
    if (!o.committed) {
      blocked = sg;
      ++it;
      continue;
    }
    if (!o.seq && o.group != kLocalGroup) {
      if (o.data.empty()) {
        const auto space = L.rdmc->reserve(o.group, o.size);
        if (!space) {
          blocked = sg;
          ++it;
          continue;
        }
        std::memcpy(space->data(), o.heap.data(), o.size);
        o.data = *space;
        o.heap = {};
        // Writers that waited for the carried messages may take space now.
        if (L.waiting.load(std::memory_order_relaxed) > 0) L.freed.notify_all();
      }
      std::uint64_t seq = 0;
      if (!L.rdmc->send_reserved(o.group, o.data.first(o.size), seq)) {
        blocked = sg;
        ++it;
        continue;
      }
      o.seq = seq;
      did = true;
    } else if (o.group == kLocalGroup && !o.holders_have) {  // no member but us holds it
      o.holders_have = true;
      did = true;
    }
    if (!now) now = runtime_->now();
    const auto tried = o.next_copy;
    const bool copied = send_copies(vs, sg, o, *now);
    did = did || o.next_copy != tried;
    // Judged at the head of its subgroup's line only: a recipient whose copies of later
    // messages wait (its buffers full of copies whose descriptors wait for another's) is
    // not the one behind.
    const bool head = head_sg != sg;
    head_sg = sg;
    if (head && (!copied || !o.awaited.empty()) && o.holders_have &&
        judge_copies(vs, sg, o, *now, *runtime_, *transport_)) {
      did = true;
      continue;  // this message again, with them behind
    }
    if (!copied) {
      blocked = sg;
      ++it;
      continue;
    }
    it = try_commit(vs, it);
  }
  return did;
}

void Engine::start(EngineClient& client) {
  // On the control thread, where views are installed: a view change that ran beside this
  // (a join admitted while the participant was being built) replaced the view whose loop
  // this started, freed it with its loop, and left the engine with no protocol thread;
  // or started the next loop a second time.
  auto& control = runtime_->control();
  if (control.on_executor_thread()) {
    start_now(client);
    return;
  }
  control.post([this, &client] { start_now(client); });
  control.drain();
}

void Engine::start_now(EngineClient& client) {
  if (client_ != nullptr) return;
  client_ = &client;
  const auto vs = current();
  check_layout(vs);
  runtime_->start(*vs->loop);
}

void Engine::stop() {
  // A view change in progress finishes (and starts the next view's loop) before the loop
  // stops; one not begun yet never begins. Then the protocol thread: it posts to the
  // executor, never the other way round.
  stopping_.store(true);
  if (beacon_) {
    beacon_->set_listener(nullptr);  // returns once no call of on_heard runs
    beacon_->announce(std::nullopt);
  }
  runtime_->control().stop();
  if (join_port_) join_port_->close();
  refuse_pending_joins();
  runtime_->stop();
  runtime_->executor().stop();
}

void Engine::install(View next, std::chrono::milliseconds connect_timeout) {
  auto old = current();
  if (!end_view(old)) return;
  transport_->disconnect();
  replace(std::move(old), next, {}, connect_timeout);
}

void Engine::demand_changed() {
  if (client_ == nullptr || layout_check_due_.exchange(true)) return;
  runtime_->control().schedule(runtime_->now() + kLayoutBatch, [this] {
    layout_check_due_.store(false);
    if (!stopping_.load()) check_layout(current());
  });
}

void Engine::check_layout(const std::shared_ptr<ViewState>& vs) {
  if (client_ == nullptr) return;
  const Demand demand = client_->layout_demand();
  const auto wanted = layout(vs->view.members, demand.channels, layout_settings());
  if (!vs->demand_generation) vs->demand_generation = demand.generation;
  std::vector<Channel> sends;
  for (const auto& sg : wanted)
    if (std::find(sg.senders.begin(), sg.senders.end(), node()) != sg.senders.end())
      for (auto p : sg.partitions)
        sends.push_back(Channel{sg.topic, sg.ordering, p});
  {
    std::lock_guard lock(view_mu_);
    wanted_sends_ = std::move(sends);
  }
  view_cv_.notify_all();  // a write waiting for a channel no longer wanted looks again
  if (wanted == vs->view.subgroups && demand.generation == *vs->demand_generation) return;
  relayouts_.fetch_add(1, std::memory_order_relaxed);
  vs->membership->request_relayout();
  transport_->notify();  // a dozing protocol thread must see it
}

// Wedges `ending` if it is still the current view — new reservations wait for the next
// one, writers sleeping on its full rings wake — and stops its loop: no upcall of it after
// this. False if another view replaced it meanwhile.
bool Engine::end_view(const std::shared_ptr<ViewState>& ending) {
  {
    std::lock_guard lock(view_mu_);
    if (current_ != ending) return false;
    wedged_ = true;
  }
  ending->smc->wedge();
  ending->large.end();
  runtime_->stop();
  return true;
}

// Control thread, protocol thread stopped, old view disconnected: build `next`, send
// `resend` in it first (before any application message can reserve a slot; each names its
// subgroup in `next`), tell the client, start.
void Engine::replace(std::shared_ptr<ViewState> old, const View& next, std::vector<Resend> resend,
                     std::chrono::milliseconds connect_timeout,
                     std::optional<std::uint64_t> demand_generation) {
  release_retired();  // disconnected: regions of views nothing holds any more can go
  auto fresh = build(next, connect_timeout, false);
  fresh->demand_generation = demand_generation;
  // Small messages go out packed (group/packed.hpp), as many to a slot as fit: they came out
  // of packed slots, and one slot each might not fit the window. Nobody else writes into
  // `fresh` yet, so the slot being filled is ours until committed.
  smc::Reservation pack;
  std::uint32_t pack_subgroup = 0;
  std::size_t pack_used = 0;
  const auto flush = [&] {
    if (pack.status == smc::ReserveStatus::ok)
      fresh->smc->commit(pack_subgroup, pack, static_cast<std::uint32_t>(pack_used),
                         kResent | kPacked);
    pack = {};
  };
  for (auto& m : resend) {
    const auto& sub = fresh->view.subgroups[m.subgroup];
    const bool large = m.bytes.size() > sub.max_payload;
    auto& L = fresh->large;
    const rdmc::GroupId g = L.group_of(fresh->view, m.subgroup, node());
    if (large && (g == kNoGroup || m.bytes.size() > L.room[m.subgroup])) {
      unread_.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    if (!large && m.bytes.size() + kRecordHeader <= sub.max_payload) {
      const std::size_t need = kRecordHeader + m.bytes.size();
      if (pack.status == smc::ReserveStatus::ok &&
          (pack_subgroup != m.subgroup || next_record(pack_used) + need > pack.capacity))
        flush();
      if (pack.status != smc::ReserveStatus::ok) {
        pack = fresh->smc->reserve(m.subgroup, static_cast<std::uint32_t>(need));
        if (pack.status != smc::ReserveStatus::ok) continue;  // not a sender there any more
        pack_subgroup = m.subgroup;
        pack_used = 0;
      }
      const std::size_t at = next_record(pack_used);
      put_record_header(pack.data + at, static_cast<std::uint32_t>(m.bytes.size()));
      std::memcpy(pack.data + at + kRecordHeader, m.bytes.data(), m.bytes.size());
      pack_used = at + need;
      resent_.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    if (pack_subgroup == m.subgroup) flush();  // what came before it goes before it
    const auto r = fresh->smc->reserve(
        m.subgroup, large ? descriptor_bytes(sub, L.recipients[m.subgroup].size())
                          : static_cast<std::uint32_t>(m.bytes.size()));
    if (r.status != smc::ReserveStatus::ok) continue;  // not a sender there any more
    resent_.fetch_add(1, std::memory_order_relaxed);
    if (!large) {
      std::memcpy(r.data, m.bytes.data(), m.bytes.size());
      fresh->smc->commit(m.subgroup, r, static_cast<std::uint32_t>(m.bytes.size()), kResent);
      continue;
    }
    // Larger than a slot: by RDMC again, its descriptor once every member that holds has
    // it (and copies to the recipients).
    const auto rank = LargeState::sender_rank(fresh->view, m.subgroup, node());
    std::lock_guard lock(L.mu);
    if (g == kLocalGroup && !L.sends_copies(m.subgroup, rank)) {
      const auto key = L.next_local++;
      const LargeDescriptor d{key, m.bytes.size(), g, 0};
      auto local = std::make_shared<LocalMessage>(m.bytes.size());
      std::memcpy(local->bytes().data(), m.bytes.data(), m.bytes.size());
      L.local[key] = std::move(local);
      std::memcpy(r.data, &d, sizeof d);
      fresh->smc->commit(m.subgroup, r, sizeof d, kLargeMessage | kResent);
      continue;
    }
    LargeState::Outgoing o;
    o.slot = r;
    o.group = g;
    o.size = m.bytes.size();
    o.rank = rank;
    o.copied.assign(copy_words(sub, L.recipients[m.subgroup].size()), 0);
    if (g == kLocalGroup) {
      o.local = std::make_shared<LocalMessage>(m.bytes.size());
      std::memcpy(o.local->bytes().data(), m.bytes.data(), m.bytes.size());
      o.data = o.local->bytes();
    } else {
      o.heap = std::move(m.bytes);
    }
    o.committed = true;
    o.resent = true;
    L.outgoing.emplace(std::pair{m.subgroup, r.index}, std::move(o));
    L.queued.store(L.outgoing.size());
  }
  flush();
  if (client_ != nullptr) client_->on_view(fresh->view);
  {
    std::lock_guard lock(view_mu_);
    current_ = fresh;
    wedged_ = false;
    ++views_;
  }
  // Endpoints announced past the ragged edge, or a view installed from outside, may call
  // for another layout already.
  check_layout(fresh);
  evict_revoked(*fresh);  // a member revoked while this view was decided
  confirm_joiners(*fresh);
  // Joiners admitted too late for the view just decided go into the next one, and hear that
  // the leader goes on (WAIT: a joiner queued behind others waits its patience again).
  {
    std::lock_guard lock(joins_mu_);
    for (auto& [id, j] : pending_joins_) {
      if (fresh->view.rank_of(id)) continue;
      fresh->membership->add_joiner(j.entry, j.identity);
      (void)j.connection.wait();
    }
  }
  retire(old);
  old.reset();
  free_retired();
  view_cv_.notify_all();
  if (client_ != nullptr) runtime_->start(*fresh->loop);
  update_join_port();
}

// Members that joined with view `vs` vote once a view change they took part in is
// installed: the leader asks for one as soon as its transport connected to every one of
// them (they never held the stream meanwhile: Sst::connecting). A joiner that never
// connects is suspected when its heartbeat never starts, and that view change removes it.
void Engine::confirm_joiners(ViewState& vs) {
  const auto& members = vs.view.members;
  if (members.empty() || members.front().id != node()) return;
  bool any = false;
  for (std::size_t r = 0; r < members.size(); ++r) {
    if (!members[r].joining) continue;
    if (vs.sst->connecting(r)) return;
    any = true;
  }
  if (any) vs.membership->request_relayout();
}

// A view that ended: the memory of its regions goes as soon as nothing holds it (a loan may:
// free_retired()), and the regions themselves once the transport is disconnected again
// (release_retired(), at the next view).
void Engine::retire(const std::shared_ptr<ViewState>& old) {
  Retired gone{old, {sst::Sst::region_id(old->view.epoch)}};
  if (old->large.rdmc)
    for (auto id : old->large.rdmc->regions())
      gone.regions.push_back(id);
  retired_.push_back(std::move(gone));
}

void Engine::release_retired() {
  std::erase_if(retired_, [this](const Retired& r) {
    if (!r.view.expired()) return false;
    for (auto id : r.regions)
      transport_->release_region(id);
    return true;
  });
}

void Engine::free_retired() {
  bool held = false;
  for (auto& r : retired_) {
    if (r.freed) continue;
    if (!r.view.expired()) {
      held = true;
      continue;
    }
    for (auto id : r.regions)
      transport_->retire_region(id);
    r.freed = true;
  }
  if (!held || free_ticking_ || stopping_.load()) return;
  free_ticking_ = true;
  (void)runtime_->control().schedule(runtime_->now() + kRetiredLookEvery, [this] {
    free_ticking_ = false;
    if (!stopping_.load()) free_retired();
  });
}

void Engine::decided(const View& ending, const ViewDecision& d) {
  // Protocol thread: the install stops this very thread, so it runs on control().
  std::shared_ptr<ViewState> vs = current();
  if (vs->view.epoch != ending.epoch) return;
  // The view after this one goes on without us: nothing to install. Unless we are
  // leaving, the others removed us (they suspected us: a pause past the timeout, say), and
  // we stop as a member that lost its majority does, saying so.
  if (const auto me = ending.rank_of(node()); !me || d.removed.test(*me)) {
    if (me && !d.leaving.test(*me))
      halt("was removed from the group in view " + std::to_string(ending.epoch + 1) +
           " (the other members suspected it); it rejoins as a new member once it can");
    return;
  }
  // Moved on: once replaced, nothing but a loan holds the ending view (free_retired()).
  runtime_->control().post(
      [this, vs = std::move(vs), d]() mutable { change_view(std::move(vs), std::move(d)); });
}

void Engine::change_view(std::shared_ptr<ViewState> ending, ViewDecision d) {
  if (stopping_.load() || !end_view(ending)) return;
  // A recipient's messages held back for copies that have not come go now, without them.
  if (ending->large.rdmc) deliver_behind(*ending, true);
  // The removed members' endpoints go first: the next layout is the demand without them.
  if (client_ != nullptr) {
    for (std::size_t r = 0; r < ending->view.members.size(); ++r) {
      if (!d.removed.test(r)) continue;
      const bool left = d.leaving.test(r);
      // What this member suspected it of, where it did.
      const auto why = ending->membership->suspected_why(r);
      client_->on_member_lost(ending->view.members[r].id, left,
                              left ? "it left the domain"
                                   : "removed from the group in view " +
                                         std::to_string(ending->view.epoch + 1) +
                                         (why.empty() ? "" : " (suspected here: " + why + ")"));
    }
  }
  // The topics whose messages this member missed while it was left behind (a retained
  // topic's history here has a hole: the participant asks for it again).
  if (client_ != nullptr) {
    std::vector<std::uint64_t> gaps;
    for (std::uint32_t s = 0; s < ending->view.subgroups.size(); ++s) {
      if (!ending->smc->is_member(s)) continue;
      const auto& st = ending->smc->stats(s);
      const std::int64_t trim = s < d.trims.size() ? d.trims[s] : -1;
      // Overwritten before it took them, or past what it received when the trim left it out.
      // Or, a large message it took no copy of.
      const bool skipped = s < ending->large.skipped_any.size() && ending->large.skipped_any[s];
      if (st.left_behind > 0 && (st.lost > 0 || ending->smc->delivered_num(s) < trim || skipped))
        gaps.push_back(ending->view.subgroups[s].topic);
    }
    if (!gaps.empty()) client_->on_gaps(gaps);
  }
  const Demand demand = client_ != nullptr ? client_->layout_demand() : Demand{};
  const View next = next_view(ending->view, d.removed, d.joined, d.identities, demand.channels,
                              layout_settings());
  // What the new view must carry again, copied out of the old view's slots, into the
  // subgroup that carries the same channel there (none: nobody reads it any more).
  std::vector<Resend> resend;
  auto& L = ending->large;
  for (std::uint32_t s = 0; s < ending->view.subgroups.size(); ++s) {
    const std::int64_t trim = s < d.trims.size() ? d.trims[s] : -1;
    const auto& old = ending->view.subgroups[s];
    // Slots sent past the edge or never sent, and messages larger than a slot whose
    // descriptor waited for RDMC: in slot order.
    // Keyed by slot, then record (a packed slot's messages each go on their own).
    std::map<std::pair<std::uint64_t, std::uint32_t>, std::vector<std::byte>> mine;
    for (const auto& u : ending->smc->resend(s, trim, d.removed)) {
      if ((u.flags & kPacked) != 0) {
        std::uint32_t k = 0;
        // Our own slot: it parses (what does not is left out).
        (void)for_records(u.bytes, [&](std::span<const std::byte> bytes) {
          mine.emplace(std::pair{u.index, k++}, std::vector<std::byte>(bytes.begin(), bytes.end()));
        });
        continue;
      }
      if ((u.flags & kLargeMessage) == 0) {
        mine.emplace(std::pair{u.index, 0u},
                     std::vector<std::byte>(u.bytes.begin(), u.bytes.end()));
        continue;
      }
      LargeDescriptor desc;
      if (u.bytes.size() < sizeof desc) continue;
      std::memcpy(&desc, u.bytes.data(), sizeof desc);
      const auto bytes = L.bytes_of(desc);
      if (bytes.empty() || bytes.size() != desc.size) {
        unread_.fetch_add(1, std::memory_order_relaxed);
        continue;
      }
      mine.emplace(std::pair{u.index, 0u}, std::vector<std::byte>(bytes.begin(), bytes.end()));
    }
    {
      std::lock_guard lock(L.mu);
      for (auto& [key, o] : L.outgoing) {
        if (key.first != s || !o.committed) continue;  // uncommitted: its writer re-sends it
        if (!o.data.empty())
          mine.emplace(std::pair{key.second, 0u},
                       std::vector<std::byte>(
                           o.data.begin(), o.data.begin() + static_cast<std::ptrdiff_t>(o.size)));
        else
          mine.emplace(std::pair{key.second, 0u}, std::move(o.heap));
      }
    }
    for (auto& [key, m] : mine) {
      // A subgroup may carry several partition sets of its topic, which the next layout
      // may split: each message goes where its own channel goes.
      std::optional<Channel> channel = client_ != nullptr ? client_->channel_of(m) : std::nullopt;
      if (!channel)
        channel =
            Channel{old.topic, old.ordering, old.partitions.empty() ? 0 : old.partitions.front()};
      if (const auto to = subgroup_of(next, *channel)) {
        resend.push_back(Resend{*to, std::move(m)});
      } else {
        unread_.fetch_add(1, std::memory_order_relaxed);
      }
    }
  }
  // Joiners we admitted get the new view and the state at the view boundary now, so that
  // they connect while we do.
  if (!d.joined.empty()) {
    // One state per certificate subject (all alike where the domain is not secured).
    std::map<std::string, std::vector<std::byte>> states;
    std::lock_guard lock(joins_mu_);
    for (const auto& j : d.joined) {
      auto it = pending_joins_.find(j.id);
      if (it == pending_joins_.end()) continue;
      const auto rank = next.rank_of(j.id);
      const std::string subject = rank ? next.members[*rank].subject : std::string();
      auto known = states.find(subject);
      if (known == states.end()) {
        known = states
                    .emplace(subject, client_ != nullptr ? client_->state_for_joiner(subject)
                                                         : std::vector<std::byte>{})
                    .first;
      }
      (void)it->second.connection.welcome(next, known->second);
      pending_joins_.erase(it);
      admitting_ = true;
    }
  }
  transport_->disconnect();
  replace(std::move(ending), next, std::move(resend), connect_timeout_, demand.generation);
  std::lock_guard lock(joins_mu_);
  admitting_ = false;
}

void Engine::serve_joins(std::unique_ptr<JoinPort> port,
                         std::vector<transport::AgreedSetting> settings) {
  {
    std::lock_guard lock(layout_mu_);
    join_settings_ = std::move(settings);
  }
  join_port_ = std::move(port);
  update_join_port();
}

void Engine::route_clients(JoinPort::ClientHandler handler) {
  if (join_port_) join_port_->set_client_handler(std::move(handler));
}

void Engine::announce_on(std::shared_ptr<Beacon> beacon, std::uint32_t join_ipv4) {
  beacon_ = std::move(beacon);
  beacon_ipv4_ = join_ipv4;
  if (!beacon_) return;
  beacon_->set_listener([this](const Announcement& a) { on_heard(a); });
  update_join_port();
}

void Engine::update_announcement(const std::shared_ptr<ViewState>& vs, bool leads) {
  if (!beacon_) return;
  if (!leads || vs->view.identity == 0 || stopping_.load() || closing_.load()) {
    beacon_->announce(std::nullopt);
    return;
  }
  const auto& s = beacon_->settings();
  beacon_->announce(Announcement{s.domain_id, s.join_port, vs->view.identity, node(),
                                 static_cast<std::uint32_t>(vs->view.members.size()),
                                 vs->view.epoch, beacon_ipv4_});
}

void Engine::on_heard(const Announcement& theirs) {
  if (stopping_.load() || closing_.load() || !halted().empty()) return;
  const auto vs = current();
  const auto& v = vs->view;
  if (v.identity == 0 || theirs.identity == v.identity) return;  // our own domain's leader
  const Announcement mine{theirs.domain_id,
                          theirs.join_port,
                          v.identity,
                          v.members.front().id,
                          static_cast<std::uint32_t>(v.members.size()),
                          v.epoch,
                          beacon_ipv4_};
  if (!wins_over(theirs, mine)) return;  // the other side restarts into ours
  runtime_->control().post([this, theirs, ours = v.identity] {
    if (stopping_.load() || !halted().empty() || current()->view.identity != ours) return;
    halt("met another domain " + std::to_string(theirs.domain_id) + " on its network (identity " +
         std::to_string(theirs.identity) + ", " + std::to_string(theirs.members) +
         " members, led by node " + std::to_string(theirs.leader) + " at " +
         transport::address_of({0, core::dotted(theirs.ipv4), theirs.join_port}) +
         "): two domains of one id must not both go on, and the smaller one (this, identity " +
         std::to_string(ours) + ") restarts into the larger");
  });
}

void Engine::update_join_port() {
  if (stopping_.load()) return;
  const auto vs = current();
  const bool leads =
      !vs->view.members.empty() && vs->view.members.front().id == node() && halted().empty();
  update_announcement(vs, leads);
  if (!join_port_) return;
  if (!leads) {
    join_port_->close();
    return;
  }
  if (join_port_->is_open()) return;
  if (!join_port_->open([this](PendingJoin j) { on_join(std::move(j)); })) {
    // The leader before us may still hold it for a moment: try again shortly.
    runtime_->control().schedule(runtime_->now() + std::chrono::milliseconds(20), [this] {
      if (!stopping_.load()) update_join_port();
    });
  }
}

void Engine::refuse_pending_joins() {
  std::lock_guard lock(joins_mu_);
  for (auto& [id, j] : pending_joins_)
    j.connection.refuse(std::string(kLeaderLeaving));
  pending_joins_.clear();
}

// The join listener's thread: admit or refuse, at once when the answer is no.
void Engine::on_join(PendingJoin join) {
  const auto& r = join.request();
  if (r.domain_id != domain_id_) {
    join.refuse("node " + std::to_string(r.node) + " is in domain " + std::to_string(r.domain_id) +
                ", this domain is " + std::to_string(domain_id_));
    return;
  }
  // Members dial a joiner only at the address its request came from (a name is not looked
  // up: that could hold this thread); an address that says otherwise is refused. A port is
  // needed wherever members dial one.
  in_addr literal{};
  if (!r.source.empty() && r.host != r.source &&
      ::inet_pton(AF_INET, r.host.c_str(), &literal) == 1) {
    join.refuse("node " + std::to_string(r.node) + " gives its address as " + r.host +
                ", but asks from " + r.source +
                "; members connect only to the address a joiner asks from (set node.host)");
    return;
  }
  const auto kind = transport_->kind();
  if (r.port == 0 && (kind == "tcp" || kind == "rdma" || kind == "auto")) {
    join.refuse("node " + std::to_string(r.node) + " gives no port for its " + std::string(kind) +
                " transport");
    return;
  }
  std::vector<transport::AgreedSetting> agreed;
  {
    std::lock_guard lock(layout_mu_);
    agreed = join_settings_;
  }
  for (const auto& mine : agreed) {
    std::string theirs = "(none)";
    for (const auto& s : r.settings)
      if (s.name == mine.name) theirs = s.value;
    if (theirs != mine.value) {
      join.refuse(mine.name + ": node " + std::to_string(r.node) + " has " + theirs +
                  ", this domain " + mine.value);
      return;
    }
  }
  {
    std::lock_guard lock(evicted_mu_);
    if (const auto e = evicted_.find(r.node); e != evicted_.end()) {
      join.refuse("node " + std::to_string(r.node) + " was evicted from this domain: " + e->second);
      return;
    }
  }
  const auto vs = current();
  if (vs->view.rank_of(r.node)) {
    join.refuse("node id " + std::to_string(r.node) +
                " is already a member; give each participant its own (SPINDLE_NODE_ID)");
    return;
  }
  if (vs->view.members.size() >= kMaxMembers) {
    join.refuse("the domain has its " + std::to_string(kMaxMembers) + " members already");
    return;
  }
  // A secured domain's join port authenticated the joiner (docs/security.md): the view
  // records who it is.
  sst::JoinIdentity identity{};
  const bool secured = vs->view.secured();
  if (secured == r.subject.empty()) {
    join.refuse(secured ? "this domain is secured; the join carried no certificate"
                        : "this domain is not secured");
    return;
  }
  if (secured) {
    if (r.subject.size() >= sizeof identity.subject) {
      join.refuse("certificate subject '" + r.subject.substr(0, 64) + "…' is longer than " +
                  std::to_string(sizeof identity.subject - 1) + " bytes");
      return;
    }
    if (r.serial.size() >= sizeof identity.serial) {
      join.refuse("certificate " + r.subject + "'s serial number has " +
                  std::to_string(r.serial.size()) + " hex digits, more than " +
                  std::to_string(sizeof identity.serial - 1) + " (RFC 5280 allows 20 octets)");
      return;
    }
    std::memcpy(identity.subject, r.subject.data(), r.subject.size());
    std::memcpy(identity.serial, r.serial.data(), r.serial.size());
  }
  sst::JoinEntry e{};
  e.id = r.node;
  in_addr a{};
  if (::inet_pton(AF_INET, (r.source.empty() ? r.host : r.source).c_str(), &a) == 1)
    e.ipv4 = a.s_addr;
  e.port = r.port;
  e.pid = r.pid;
  e.host_id = r.host_id;
  e.nonce = r.nonce;
  // A joiner's process identity is what it says. One of this host whose process does not
  // exist now could only be told dead later by mistake: it joins without one (the majority
  // rule decides its death, as for a member on another host).
  if (runtime_->process_state(Member{r.node, r.host, r.port, r.pid, r.host_id}) ==
      ProcessState::exited) {
    e.pid = 0;
    e.host_id = 0;
  }
  {
    // Checked under the lock leave() reads the pending joins with: a join either counts
    // there or is turned away. The joiner asks again and finds the next leader.
    std::lock_guard lock(joins_mu_);
    if (closing_.load() || !halted().empty()) {
      join.refuse(std::string(kLeaderLeaving));
      return;
    }
    pending_joins_.insert_or_assign(r.node, Joining{std::move(join), e, identity});
    // The view current now, read under the lock replace() re-adds pending joiners with
    // after installing a view: a view change in between cannot lose this one.
    current()->membership->add_joiner(e, identity);
    if (!wait_ticking_) {
      wait_ticking_ = true;
      (void)runtime_->control().schedule(runtime_->now() + kJoinerWaitEvery,
                                         [this] { keep_joiners_waiting(); });
    }
  }
  transport_->notify();  // a dozing protocol thread must see it
  // A leader whose protocol takes no step while a join waits holds it for good, and the
  // others see no view change to judge it by (their progress check needs one): it steps
  // down instead, so that they remove it and the next leader admits the joiner.
  const auto vs_now = current();
  const auto steps = vs_now->membership->steps();
  // Twice the suspicion timeout: a view change waiting on a member behind gets its own
  // progress step within one, and suspects that member rather than this one.
  const auto bound = 2 * vs_now->view.knobs.suspicion_timeout;
  // Held weakly: an ended view's regions must not wait for this check to be released.
  (void)runtime_->control().schedule(
      runtime_->now() + bound, [this, view = std::weak_ptr(vs_now), steps, bound, joiner = r.node] {
        const auto joined_in = view.lock();
        if (stopping_.load() || !joined_in || current() != joined_in || !halted().empty()) return;
        {
          std::lock_guard lock(joins_mu_);
          if (!pending_joins_.contains(joiner)) return;
        }
        if (joined_in->membership->steps() != steps) return;
        halt("took no step of the view-change protocol for " + std::to_string(bound.count()) +
             " ms while node " + std::to_string(joiner) +
             " waited to join (its protocol is stuck); it stepped down so that another member "
             "leads");
        runtime_->stop();
        transport_->disconnect();  // the others see it gone and go on without it
      });
}

// A joiner queued behind others (at most kMaxJoins go in per view change) hears WAIT every
// second while it waits: each gives it its whole patience again (docs/membership.md, "The
// contact protocol"). A leader whose protocol stands still while a join waits steps down
// (on_join's check), and its joiners ask the next one.
void Engine::keep_joiners_waiting() {
  if (stopping_.load()) return;
  std::lock_guard lock(joins_mu_);
  if (pending_joins_.empty() || !halted().empty()) {
    wait_ticking_ = false;
    return;
  }
  for (auto& [id, j] : pending_joins_)
    (void)j.connection.wait();
  (void)runtime_->control().schedule(runtime_->now() + kJoinerWaitEvery,
                                     [this] { keep_joiners_waiting(); });
}

std::string Engine::stopped(const std::string& why) const {
  return "domain " + std::to_string(domain_id_) + ": node " + std::to_string(node()) +
         " stopped: it " + why;
}

void Engine::halt(const std::string& why) {
  std::shared_ptr<ViewState> vs;
  {
    std::lock_guard lock(view_mu_);
    if (!halted_.empty()) return;
    halted_ = stopped(why);
    vs = current_;
  }
  vs->smc->freeze();
  vs->large.end();
  view_cv_.notify_all();
  // A halted leader admits nobody: its joiners ask again and find the next leader, which
  // needs the port.
  runtime_->control().post([this] {
    update_join_port();
    refuse_pending_joins();
  });
  if (client_ != nullptr) client_->on_halt(halted());
  schedule_rejoin();
}

LayoutSettings Engine::layout_settings() const {
  std::lock_guard lock(layout_mu_);
  return layout_;
}

void Engine::set_permissions(std::shared_ptr<const security::Permissions> permissions) {
  if (!permissions) return;
  {
    std::lock_guard lock(layout_mu_);
    for (auto& s : join_settings_)
      if (s.name == security::kPermissionsSetting) s.value = permissions->digest();
    layout_.permissions = std::move(permissions);
  }
  demand_changed();  // the leader lays out again by the new grants
}

void Engine::watch_revocations(std::shared_ptr<const security::Credentials> credentials) {
  if (!credentials || credentials->settings().crl.empty()) return;
  revocation_ = std::move(credentials);
  (void)runtime_->control().schedule(runtime_->now() + kRevocationPoll,
                                     [this] { check_revocations(); });
}

void Engine::check_revocations() {
  if (stopping_.load() || closing_.load()) return;
  bool changed = false;
  try {
    changed = revocation_->reload_crl();
    revocation_error_.clear();
  } catch (const std::exception& e) {
    if (revocation_error_ != e.what()) {
      revocation_error_ = e.what();
      std::cerr << "spindle: domain " << domain_id_ << ": node " << node() << ": " << e.what()
                << " (the revocation list in force stays)\n";
    }
  }
  if (changed && halted().empty()) {
    evict_revoked(*current());
  } else if (changed && !revoked_self_.load()) {
    // Halted already: the others read the list first and evicted us, and we saw them go
    // ("lost contact"). The list says why: that is what we say, and we do not rejoin.
    const auto vs = current();
    if (const auto me = vs->view.rank_of(node())) {
      if (const auto what = revocation_of(vs->view.members[*me]); !what.empty()) {
        revoked_self_.store(true);
        std::lock_guard lock(view_mu_);
        halted_ = stopped("was evicted: " + what + "; it does not rejoin (" + halted_ + ")");
      }
    }
  }
  (void)runtime_->control().schedule(runtime_->now() + kRevocationPoll,
                                     [this] { check_revocations(); });
}

void Engine::evict(NodeId who, const std::string& why) {
  {
    std::lock_guard lock(evicted_mu_);
    evicted_.emplace(who, why);
  }
  evict_revoked(*current());
}

std::string Engine::revocation_of(const Member& m) const {
  if (!revocation_ || m.serial.empty() || !revocation_->revoked(m.serial)) return {};
  return "its certificate (" + m.subject + ", serial " + m.serial + ") is revoked by security.crl";
}

void Engine::evict_revoked(ViewState& vs) {
  for (const auto& m : vs.view.members) {
    const std::string what = revocation_of(m);
    if (what.empty()) continue;
    if (m.id == node()) {
      // Our own: the others evict us (where their lists say so too). We stop, saying why,
      // and do not ask to come back: the join port refuses a revoked certificate.
      revoked_self_.store(true);
      halt("was evicted: " + what + "; it does not rejoin");
      continue;
    }
    std::lock_guard lock(evicted_mu_);
    evicted_.emplace(m.id, what);
  }
  std::lock_guard lock(evicted_mu_);
  for (const auto& [who, why] : evicted_)
    if (const auto r = vs.view.rank_of(who)) vs.membership->evict(*r, why);
}

void Engine::rejoin_with(std::unique_ptr<Rejoiner> rejoiner) {
  rejoiner_ = std::move(rejoiner);
  if (!halted().empty()) schedule_rejoin();
}

void Engine::schedule_rejoin(std::chrono::nanoseconds after) {
  if (stopping_.load() || closing_.load()) return;
  (void)runtime_->control().schedule(
      runtime_->now() + std::chrono::duration_cast<TimePoint::duration>(after),
      [this] { try_rejoin(); });
}

// A halted member leaves its halted view behind and installs the one its rejoiner got: the
// domain's current view, which has it as a new member (its old self was removed), or a
// first view of its own when the domain is gone. Its protocol thread starts only after the
// client applied the state transfer, as for a participant that joins.
void Engine::try_rejoin() {
  if (stopping_.load() || closing_.load() || !rejoiner_ || halted().empty() || revoked_self_.load())
    return;
  std::optional<Rejoined> r;
  try {
    r = rejoiner_->attempt();
  } catch (const std::exception& e) {
    std::cerr << "spindle: domain " << domain_id_ << ": node " << node()
              << " could not ask to rejoin: " << e.what() << '\n';
  }
  if (!r) {
    schedule_rejoin(rejoiner_->answer_due() ? std::chrono::nanoseconds(kRejoinPoll)
                                            : std::chrono::nanoseconds(kRejoinRetry));
    return;
  }
  const auto old = current();
  runtime_->stop();  // the halted view's protocol thread
  transport_->disconnect();
  release_retired();
  std::shared_ptr<ViewState> fresh;
  try {
    fresh = build(r->view, connect_timeout_, true);
  } catch (const dds::core::Error&) {
    // The domain went on to a later view before we connected: ask again.
    schedule_rejoin();
    return;
  }
  if (r->port) join_port_ = std::move(r->port);
  // The fresh view is current before the client hears of it: what it publishes from then on
  // (its entities announced again) goes into this view, sent once its loop starts below.
  {
    std::lock_guard lock(view_mu_);
    current_ = fresh;
    wedged_ = false;
    halted_.clear();
    ++views_;
  }
  if (client_ != nullptr) client_->on_rejoin(fresh->view, r->state);
  rejoins_.fetch_add(1, std::memory_order_relaxed);
  retire(old);
  free_retired();  // `old` still holds it: it looks again shortly
  view_cv_.notify_all();
  if (client_ != nullptr) runtime_->start(*fresh->loop);
  update_join_port();
  check_layout(fresh);
}

void Engine::stall_view_changes() {
  current()->membership->stall();
}

void Engine::stall_deliveries() {
  current()->smc->stall();
}

void Engine::resume_deliveries() {
  current()->smc->resume();
}

void Engine::stall_transfers() {
  current()->large.stalled = true;
}

void Engine::resume_transfers() {
  current()->large.stalled = false;
}

std::size_t Engine::forge_suspicion(NodeId owner, NodeId victim) {
  const auto vs = current();
  const auto& v = vs->view;
  const auto owner_rank = v.rank_of(owner);
  const auto victim_rank = v.rank_of(victim);
  const auto my_rank = v.rank_of(node());
  if (!owner_rank || !victim_rank || !my_rank) return 0;
  auto& sst = *vs->sst;
  const std::size_t at = sst.layout().control(*owner_rank) + offsetof(sst::ControlRow, suspected);
  // The forged word (of the owner's set, the one holding the victim's bit) is staged in the
  // unused tail of this member's own control row (nobody reads it; a write needs local bytes
  // to copy from).
  const std::size_t word = at + sizeof(std::uint64_t) * (*victim_rank / 64);
  constexpr std::size_t kSpare = offsetof(sst::ControlRow, suspected) + sizeof(sst::MemberSet);
  static_assert(kSpare + sizeof(std::uint64_t) <= sizeof(sst::ControlRow));
  const std::size_t staging = sst.layout().control(*my_rank) + kSpare;
  sst.store<std::uint64_t>(
      staging, sst.load<std::uint64_t>(word) | (std::uint64_t{1} << (*victim_rank % 64)));
  const auto region = sst::Sst::region_id(v.epoch);
  std::size_t posted = 0;
  for (const auto& m : v.members) {
    if (m.id == node()) continue;
    if (transport_->write(m.id, region, staging, region, word, sizeof(std::uint64_t)) ==
        transport::Status::ok)
      ++posted;
  }
  return posted;
}

std::string Engine::halted() const {
  std::lock_guard lock(view_mu_);
  return halted_;
}

void Engine::closing() {
  closing_.store(true);
  current()->membership->closing();
}

void Engine::leave() {
  // A joiner admitted before we began closing may be on its way into the view (it may hold
  // its welcome already): let that view change finish and leave the view it makes, or the
  // joiner would find its only peer gone without a word and stop.
  // Each view this member is still in gets a second for its leave to be seen (a closing
  // participant's retired endpoints start a relayout, which may end the view first), up to
  // five in all: a leave that ran out of time before the next view was installed would
  // leave the others to find an exit nobody announced.
  const auto start = runtime_->now();
  const auto last = start + std::chrono::seconds(5);
  auto deadline = start + std::chrono::seconds(1);
  std::shared_ptr<ViewState> seen;
  for (;;) {
    const auto vs = current();
    if (seen && vs != seen) deadline = std::min(last, runtime_->now() + std::chrono::seconds(1));
    seen = vs;
    if (!halted().empty()) return;
    if (vs->view.members.size() >= 2) {
      vs->membership->request_leave();
      (void)runtime_->wait_until(deadline, [&] {
        return vs->membership->leave_announced() || current() != vs || !halted().empty();
      });
      // A view change (a joiner, a failure) ended the view first: leave the next one.
      if (vs->membership->leave_announced() || current() == vs) return;
      continue;
    }
    const auto joining = [&] {
      std::lock_guard lock(joins_mu_);
      return !pending_joins_.empty() || admitting_;
    };
    if (!joining()) return;
    if (!runtime_->wait_until(deadline, [&] { return current() != vs || !joining(); })) return;
  }
}

View Engine::view() const {
  return current()->view;
}

std::shared_ptr<ViewState> Engine::current() const {
  std::lock_guard lock(view_mu_);
  return current_;
}

std::uint32_t Engine::max_message(Channel channel) const {
  const auto vs = current();
  const auto sg = subgroup_of(vs->view, channel);
  // No subgroup yet: what the domain's settings give a topic's slot.
  return sg ? vs->view.subgroups[*sg].max_payload
            : std::min<std::uint32_t>(kMaxPayload, layout_.slot_size + layout_.header_size);
}

std::uint64_t Engine::max_large_message() const {
  return current()->large.max_message;
}

std::optional<std::uint64_t> Engine::sendable(Channel channel) const {
  const auto vs = current();
  const auto sg = subgroup_of(vs->view, channel);
  if (!sg || std::ranges::find(vs->view.subgroups[*sg].senders, node()) ==
                 vs->view.subgroups[*sg].senders.end())
    return std::nullopt;
  return std::max<std::uint64_t>(vs->view.subgroups[*sg].max_payload, vs->large.room[*sg]);
}

void Engine::expect_room(Channel channel, std::uint64_t bytes) {
  std::lock_guard lock(view_mu_);
  for (auto& [c, b] : expected_room_) {
    if (c != channel) continue;
    b = std::max(b, bytes);
    return;
  }
  expected_room_.emplace_back(channel, bytes);
}

std::uint64_t Engine::in_flight(Channel channel) const {
  const auto vs = current();
  const auto sg = subgroup_of(vs->view, channel);
  return sg ? vs->smc->in_flight(*sg) : 0;
}

std::optional<Bus::SentMark> Engine::local_sent_mark(Channel channel) const {
  const auto vs = current();
  const auto sg = subgroup_of(vs->view, channel);
  if (!sg) return std::nullopt;
  // Another process in the subgroup holds a place in its order: this node's message is
  // stable only once that process has it (a round trip), which wait_for_acknowledgments
  // waits for instead.
  const NodeId self = node();
  for (const NodeId m : vs->view.subgroups[*sg].members)
    if (!vs->view.same_process(self, m)) return std::nullopt;
  const auto count = vs->smc->sender_mark(*sg);
  if (!count) return std::nullopt;
  return SentMark{vs->view.epoch, *count};
}

bool Engine::delivered_locally(Channel channel, SentMark mark) const {
  const auto vs = current();
  // A later view, or a halt: no waiting across them (the view the message went in delivered
  // it before it ended, or the next one carries it again).
  if (vs->view.epoch != mark.epoch || !halted().empty()) return true;
  const auto sg = subgroup_of(vs->view, channel);
  return !sg || vs->smc->delivered_through(*sg, mark.count);
}

void Engine::hold_sends(Channel channel) {
  std::lock_guard lock(view_mu_);
  held_sends_.push_back(channel);
}

void Engine::release_sends(Channel channel) {
  {
    std::lock_guard lock(view_mu_);
    if (const auto it = std::ranges::find(held_sends_, channel); it != held_sends_.end())
      held_sends_.erase(it);
  }
  view_cv_.notify_all();
}

Loan Engine::reserve(Channel channel, std::size_t size, Clock::time_point deadline) {
  return reserve(channel, size, deadline, false);
}

Loan Engine::reserve(Channel channel, std::size_t size, Clock::time_point deadline, bool pack) {
  for (;;) {
    std::shared_ptr<ViewState> vs;
    {
      std::unique_lock lock(view_mu_);
      // A view change in progress: the next view takes the message.
      if (!view_cv_.wait_until(lock, deadline, [&] { return !wedged_ || !halted_.empty(); }))
        throw view_change_timeout("view " + std::to_string(current_->view.epoch) +
                                  " was ending and the next one was not installed yet");
      if (!halted_.empty()) throw dds::core::PreconditionNotMetError(halted_);
      vs = current_;
    }
    const auto sg = subgroup_of(vs->view, channel);
    if (!sg || std::ranges::find(vs->view.subgroups[*sg].senders, node()) ==
                   vs->view.subgroups[*sg].senders.end()) {
      bool wanted = false;
      {
        std::lock_guard lock(view_mu_);
        wanted = std::ranges::find(wanted_sends_, channel) != wanted_sends_.end() ||
                 std::ranges::find(held_sends_, channel) != held_sends_.end();
      }
      if (!wanted) return scratch_loan(channel, size);
      // A relayout that makes us a sender is on its way: the next view takes the message.
      // Unless the demand changed back meanwhile (its reader went before the relayout came):
      // then no view change may come, and the write looks again.
      if (!wait_for_view_after(vs, deadline, &channel))
        throw view_change_timeout("view " + std::to_string(vs->view.epoch) +
                                  " has no subgroup in which this node sends on topic " +
                                  std::to_string(channel.topic) +
                                  ", and the relayout that gives it one did not come");
      continue;
    }
    const auto& sub = vs->view.subgroups[*sg];
    if (size > sub.max_payload) {
      if (auto loan = reserve_large(vs, *sg, channel, size, deadline)) return std::move(*loan);
      continue;  // the view ended meanwhile: the next one takes it
    }
    // Several messages per slot (group/packed.hpp): into the slot committed last if it takes
    // it, else a slot of its own, framed so that the next ones can join it. A listener counts
    // what it skipped in slots (lost_before), which its readers' SAMPLE_LOST would take for
    // samples: a subgroup with listeners keeps a message a slot.
    const bool packs = pack && sub.listeners.empty() && size + kRecordHeader <= sub.max_payload;
    const std::size_t framed = packs ? size + kRecordHeader : size;
    // A record's loan: the message after its header (`r.data` is where the record starts).
    const auto record_loan = [&](const smc::Reservation& r) {
      Loan loan{
          channel, r.data + kRecordHeader, r.capacity - kRecordHeader, *sg, r.index, std::move(vs),
          nullptr};
      loan.packed = true;
      loan.appended = r.appended;
      loan.record = r.offset;
      return loan;
    };
    if (packs) {
      const auto a = vs->smc->append(*sg, static_cast<std::uint32_t>(framed));
      if (a.status == smc::ReserveStatus::ok) return record_loan(a);
    }
    const auto r = reserve_slot(*vs, *sg, static_cast<std::uint32_t>(framed), deadline);
    switch (r.status) {
      case smc::ReserveStatus::ok:
        if (packs) return record_loan(r);
        return Loan{channel, r.data, r.capacity, *sg, r.index, std::move(vs), nullptr};
      case smc::ReserveStatus::wedged:
        // A view change began: the next view takes the message.
        if (!wait_for_view_after(vs, deadline)) throw view_change_timeout(view_changing(*vs));
        continue;
      case smc::ReserveStatus::full:
        throw ring_full_timeout(sub.window_size);
      case smc::ReserveStatus::too_large:
      case smc::ReserveStatus::not_sender:
      case smc::ReserveStatus::closed:
        break;
    }
    throw dds::core::PreconditionNotMetError("this node cannot send in subgroup '" + sub.name +
                                             "' of view " + std::to_string(vs->view.epoch));
  }
}

std::optional<Loan> Engine::reserve_large(const std::shared_ptr<ViewState>& vs, std::uint32_t sg,
                                          Channel channel, std::size_t size,
                                          Clock::time_point deadline) {
  const auto& sub = vs->view.subgroups[sg];
  auto& L = vs->large;
  const rdmc::GroupId g = L.group_of(vs->view, sg, node());
  const std::string does_not_fit =
      "a message of " + std::to_string(size) + " bytes does not fit a slot of " +
      std::to_string(sub.max_payload) + " bytes of subgroup '" + sub.name + "'";
  if (sub.topic == 0)
    throw dds::core::PreconditionNotMetError(does_not_fit +
                                             " (the builtin subgroup takes no larger messages)");
  if (L.room[sg] == 0)
    throw dds::core::PreconditionNotMetError(
        does_not_fit + ", and its writers' types bound their samples to fit one, so view " +
        std::to_string(vs->view.epoch) + " gives it no space for larger messages");
  if (g == kNoGroup) {
    throw dds::core::PreconditionNotMetError(does_not_fit + " (more than " +
                                             std::to_string(rdmc::kMaxGroups) +
                                             " writing members in this view: RDMC has no group "
                                             "for it)");
  }
  // What sized the subgroup's RDMC space, for the errors below.
  const std::string room =
      std::to_string(L.room[sg]) +
      (L.room[sg] < L.max_message
           ? " bytes (its RDMC space, sized for its writers' types' bounds or largest samples)"
           : " bytes (engine.rdmc_buffer_size in the domain file)");
  const auto expected = [&] {
    std::lock_guard lock(view_mu_);
    for (const auto& [c, b] : expected_room_)
      if (c == channel) return b;
    return std::uint64_t{0};
  };
  if (size > L.room[sg] && size <= L.max_message && size <= expected()) {
    // Sized for what its writers asked so far (an unbounded type): the writer that writes
    // this asked for more (its record), and a relayout gives it.
    if (!wait_for_view_after(vs, deadline))
      throw view_change_timeout("a message of " + std::to_string(size) + " bytes exceeds " + room +
                                " of subgroup '" + sub.name + "' in view " +
                                std::to_string(vs->view.epoch) +
                                ", and the view that gives it more did not come");
    return std::nullopt;
  }
  if (size > L.room[sg]) {
    throw dds::core::PreconditionNotMetError("a message of " + std::to_string(size) +
                                             " bytes exceeds the largest subgroup '" + sub.name +
                                             "' takes, " + room);
  }
  // Lock order: view_mu_ before L.mu, so a waiter under L.mu reads `over`, not current().
  const auto ended = [&] { return L.over.load(); };
  // Buffer space first (back-pressure: the members still hold earlier messages).
  std::span<std::byte> data;
  std::shared_ptr<void> heap;
  if (g == kLocalGroup) {
    auto bytes = std::make_shared<LocalMessage>(size);
    data = bytes->bytes();
    heap = std::move(bytes);
  } else {
    // L.mu held. Messages a view change sent again take the space first.
    const auto take = [&] {
      if (L.carries(g)) return false;
      if (auto space = L.rdmc->reserve(g, size)) data = *space;
      return !data.empty();
    };
    const auto take_now = [&] {
      std::lock_guard lock(L.mu);
      return take();
    };
    if (!take_now()) {
      L.waiting.fetch_add(1);
      bool got = false;
      if (runtime_->simulated()) {
        got =
            runtime_->wait_until(deadline, [&] { return ended() || take_now(); }) && !data.empty();
      } else {
        std::unique_lock lock(L.mu);
        got =
            L.freed.wait_until(lock, deadline, [&] { return ended() || take(); }) && !data.empty();
      }
      L.waiting.fetch_sub(1);
      if (ended()) {
        if (!data.empty()) L.rdmc->unreserve(g, data);
        if (!halted().empty()) throw dds::core::PreconditionNotMetError(halted());
        (void)wait_for_view_after(vs, deadline);
        return std::nullopt;
      }
      if (!got)
        throw dds::core::TimeoutError(
            "write blocked longer than reliability.max_blocking_time: the buffer space for "
            "large samples of subgroup '" +
            sub.name + "', " + room + ", is still held by earlier samples");
    }
  }
  const auto give_back = [&] {
    if (g != kLocalGroup) L.rdmc->unreserve(g, data);
  };
  // Then the slot that keeps its place in the order.
  const auto r = reserve_slot(*vs, sg, descriptor_bytes(sub, L.recipients[sg].size()), deadline);
  if (r.status == smc::ReserveStatus::wedged) {
    // A view change began: the next view takes the message.
    give_back();
    if (!wait_for_view_after(vs, deadline)) throw view_change_timeout(view_changing(*vs));
    return std::nullopt;
  }
  if (r.status != smc::ReserveStatus::ok) {
    give_back();
    throw ring_full_timeout(sub.window_size);
  }
  const auto rank = LargeState::sender_rank(vs->view, sg, node());
  if (g != kLocalGroup || L.sends_copies(sg, rank)) {
    // Through the protocol thread: by RDMC to the members that hold, copies to recipients.
    LargeState::Outgoing o;
    o.slot = r;
    o.group = g;
    o.data = data;
    o.size = size;
    o.rank = rank;
    o.copied.assign(copy_words(sub, L.recipients[sg].size()), 0);
    if (g == kLocalGroup) o.local = std::static_pointer_cast<LocalMessage>(heap);
    std::lock_guard lock(L.mu);
    L.outgoing.emplace(std::pair{sg, r.index}, std::move(o));
    L.queued.store(L.outgoing.size());
  }
  Loan loan{channel, data.data(), size, sg, r.index, vs, std::move(heap)};
  loan.large = true;
  loan.slot = r.data;
  loan.slot_capacity = r.capacity;
  return loan;
}

Loan Engine::append(Channel channel, std::size_t size, Clock::time_point deadline) {
  return reserve(channel, size, deadline, true);
}

void Engine::commit_large(Loan& loan, std::size_t size) {
  auto& vs = *loan.view;
  auto& L = vs.large;
  const smc::Reservation r{smc::ReserveStatus::ok, loan.slot, loan.slot_capacity, loan.index};
  std::unique_lock lock(L.mu);
  const auto it = L.outgoing.find({loan.subgroup, loan.index});
  if (size <= loan.slot_capacity) {
    // It fits a slot after all (an abandoned loan, say): the slot takes it.
    std::memcpy(loan.slot, loan.data, size);
    if (it != L.outgoing.end()) {
      if (it->second.group != kLocalGroup) L.rdmc->unreserve(it->second.group, it->second.data);
      L.outgoing.erase(it);
      L.queued.store(L.outgoing.size());
    }
    lock.unlock();
    vs.smc->commit(loan.subgroup, r, static_cast<std::uint32_t>(size));
    return;
  }
  large_sent_.fetch_add(1, std::memory_order_relaxed);
  if (it == L.outgoing.end()) {
    // A subgroup of this member alone: the bytes stay here, the descriptor goes now.
    const auto key = L.next_local++;
    auto bytes = std::static_pointer_cast<LocalMessage>(loan.scratch);
    bytes->size = size;
    L.local[key] = std::move(bytes);
    lock.unlock();
    const LargeDescriptor d{key, size, kLocalGroup, 0};
    std::memcpy(loan.slot, &d, sizeof d);
    vs.smc->commit(loan.subgroup, r, sizeof d, kLargeMessage);
    return;
  }
  it->second.size = size;
  it->second.committed = true;
  if (it->second.local) it->second.local->size = size;
  lock.unlock();
  vs.sst->nudge();  // a dozing protocol thread must announce it
}

smc::Reservation Engine::reserve_slot(ViewState& vs, std::uint32_t sg, std::uint32_t bytes,
                                      Clock::time_point deadline) {
  if (!runtime_->simulated()) return vs.smc->reserve_wait(sg, bytes, deadline);
  // Virtual time: waiting is what runs the other members.
  auto r = vs.smc->reserve(sg, bytes);
  if (r.status == smc::ReserveStatus::full) {
    (void)runtime_->wait_until(deadline, [&] {
      r = vs.smc->reserve(sg, bytes);
      return r.status != smc::ReserveStatus::full;
    });
  }
  return r;
}

Loan Engine::scratch_loan(Channel channel, std::size_t size) {
  const std::size_t lines =
      std::max<std::size_t>(1, (size + sizeof(ScratchLine) - 1) / sizeof(ScratchLine));
  std::shared_ptr<ScratchLine[]> buffer(new ScratchLine[lines]);
  Loan loan;
  loan.channel = channel;
  loan.data = buffer[0].bytes;
  loan.capacity = static_cast<std::uint32_t>(lines * sizeof(ScratchLine));
  loan.scratch = std::move(buffer);
  return loan;
}

bool Engine::wait_for_view_after(const std::shared_ptr<ViewState>& vs, Clock::time_point deadline,
                                 const Channel* unless_unwanted) {
  // With view_mu_ held.
  const auto moved = [&] {
    return current_ != vs || !halted_.empty() ||
           (unless_unwanted != nullptr &&
            std::ranges::find(wanted_sends_, *unless_unwanted) == wanted_sends_.end() &&
            std::ranges::find(held_sends_, *unless_unwanted) == held_sends_.end());
  };
  // The simulator runs the view change on this thread's scheduler: let it.
  if (runtime_->simulated()) {
    return runtime_->wait_until(deadline, [&] {
      std::lock_guard lock(view_mu_);
      return moved();
    });
  }
  std::unique_lock lock(view_mu_);
  return view_cv_.wait_until(lock, deadline, moved);
}

void Engine::commit(Loan& loan, std::size_t size, Clock::time_point deadline) {
  if (loan.scratch && !loan.large) {
    // Nobody read the channel when it was reserved: publish it if someone does now.
    Loan fresh = reserve(loan.channel, size, deadline);
    if (fresh.scratch) {
      unread_.fetch_add(1, std::memory_order_relaxed);
    } else {
      std::memcpy(fresh.data, loan.data, size);
      commit(fresh, size, deadline);
    }
    loan.scratch.reset();
    loan.data = nullptr;
    return;
  }
  std::shared_ptr<ViewState> push;
  {
    std::lock_guard lock(view_mu_);
    if (loan.view == current_ && !wedged_ && loan.large) {
      count_sent(loan, size);
      commit_large(loan, size);
      loan.view.reset();
      loan.scratch.reset();
      loan.data = nullptr;
      published_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    if (loan.view == current_ && !wedged_) {
      if (loan.packed) {
        // The record's header: its length (group/packed.hpp).
        std::byte* record = loan.data - kRecordHeader;
        put_record_header(record, static_cast<std::uint32_t>(size));
        smc::Reservation r{smc::ReserveStatus::ok,
                           record,
                           static_cast<std::uint32_t>(loan.capacity + kRecordHeader),
                           loan.index,
                           loan.record,
                           loan.appended};
        loan.view->smc->commit_quiet(
            loan.subgroup, r, static_cast<std::uint32_t>(size + kRecordHeader), kPacked, true);
        if (loan.appended) packed_.fetch_add(1, std::memory_order_relaxed);
      } else {
        smc::Reservation r{smc::ReserveStatus::ok, loan.data,
                           static_cast<std::uint32_t>(loan.capacity), loan.index};
        loan.view->smc->commit_quiet(loan.subgroup, r, static_cast<std::uint32_t>(size));
      }
      count_sent(loan, size);
      published_.fetch_add(1, std::memory_order_relaxed);
      push = std::move(loan.view);
    } else if (loan.appended) {
      // Its slot went (or goes) by with the view, without it: it goes out below instead.
      smc::Reservation r{
          smc::ReserveStatus::ok, loan.data - kRecordHeader, 0, loan.index, loan.record, true};
      loan.view->smc->cancel_append(loan.subgroup, r);
    }
  }
  if (push) {
    // Pushed from this thread when nobody steps the protocol now: no hand-off to the
    // protocol thread, no wake-up of it (docs/user-guide.md, "Performance"). Otherwise the
    // thread that steps sends it, woken if it dozes.
    auto& smc = *push->smc;
    const std::uint32_t sg = loan.subgroup;
    if (runtime_->try_run(*push->loop, [&] { (void)smc.push(sg); })) {
      pushed_.fetch_add(1, std::memory_order_relaxed);
    } else {
      smc.nudge();
    }
    return;
  }
  // Reserved in a view that has ended (or is ending): its ring is gone with it. The bytes
  // are still valid (the loan holds its view), so they go out in the current view.
  Loan fresh = reserve(loan.channel, size, deadline);
  std::memcpy(fresh.data, loan.data, size);
  loan.view.reset();
  loan.scratch.reset();
  republished_.fetch_add(1, std::memory_order_relaxed);
  commit(fresh, size, deadline);
}

EngineStats Engine::stats() const {
  EngineStats s;
  s.published = published_.load();
  s.republished = republished_.load();
  s.resent = resent_.load();
  s.unread = unread_.load();
  s.relayouts = relayouts_.load();
  s.large_sent = large_sent_.load();
  s.rejoins = rejoins_.load();
  s.pushed = pushed_.load();
  s.packed = packed_.load();
  s.batches = batches_.load(std::memory_order_relaxed);
  std::lock_guard lock(view_mu_);
  s.views = views_;
  return s;
}

void Engine::deliver_up(ViewState& vs, std::span<const smc::Message> batch) {
  // One subgroup per step as a rule; a batch that mixes them is counted run by run.
  std::size_t from = 0;
  while (from < batch.size()) {
    const auto sg = batch[from].subgroup;
    std::uint64_t bytes = 0;
    std::size_t to = from;
    for (; to < batch.size() && batch[to].subgroup == sg; ++to)
      bytes += batch[to].payload.size();
    if (sg < vs.counts.size()) {
      vs.counts[sg]->delivered.fetch_add(to - from, std::memory_order_relaxed);
      vs.counts[sg]->delivered_bytes.fetch_add(bytes, std::memory_order_relaxed);
    }
    from = to;
  }
  client_->on_deliver(batch);
}

void Engine::count_sent(const Loan& loan, std::size_t size) noexcept {
  if (!loan.view || loan.subgroup >= loan.view->counts.size()) return;
  auto& c = *loan.view->counts[loan.subgroup];
  c.sent.fetch_add(1, std::memory_order_relaxed);
  c.sent_bytes.fetch_add(size, std::memory_order_relaxed);
}

namespace {

// What `v` says of itself, for `self` (Bus::status).
void view_status(const View& v, NodeId self, spindle::DomainStatus& out) {
  out.self = self;
  out.epoch = v.epoch;
  out.identity = v.identity;
  out.leader = v.members.empty() ? 0 : v.members.front().id;
  for (const auto& m : v.members)
    out.members.push_back(
        {m.id, m.host, m.port, m.pid, m.id == out.leader, m.id == self, m.joining, false});
  for (std::uint32_t s = 0; s < v.subgroups.size(); ++s) {
    const auto& sg = v.subgroups[s];
    spindle::SubgroupStatus st;
    st.index = s;
    st.name = sg.name;
    st.topic_id = sg.topic;
    st.atomic = sg.ordering == Ordering::atomic;
    st.window = sg.window_size;
    st.max_payload = sg.max_payload;
    st.self_member = std::ranges::find(sg.members, self) != sg.members.end();
    st.senders = sg.senders;
    for (const auto id : sg.members) {
      spindle::SubgroupMemberStatus ms;
      ms.node = id;
      ms.sender = std::ranges::find(sg.senders, id) != sg.senders.end();
      ms.listener = std::ranges::binary_search(sg.listeners, id);
      st.members.push_back(ms);
    }
    out.subgroups.push_back(std::move(st));
  }
}

}  // namespace

void Bus::status(spindle::DomainStatus& out) const {
  view_status(view(), node(), out);
  out.transport = std::string(transport_kind());
  out.halted = halted();
  out.client = relayed();
}

void Engine::status(spindle::DomainStatus& out) const {
  const auto vs = current();  // keeps the view's SST (and its region) while it is read
  const View& v = vs->view;
  view_status(v, node(), out);
  out.transport = std::string(transport_kind());
  out.halted = halted();
  const sst::Sst& sst = *vs->sst;
  const auto& layout = sst.layout();
  // The union of the suspicions every member's row holds (each member pushes its control
  // row to all).
  sst::MemberSet suspected;
  for (std::size_t r = 0; r < v.members.size(); ++r)
    suspected |= sst.load_set(layout.control(r) + offsetof(sst::ControlRow, suspected));
  for (std::size_t r = 0; r < out.members.size(); ++r)
    out.members[r].suspected = suspected.test(r);
  for (auto& st : out.subgroups) {
    if (!st.self_member) continue;  // its counters are pushed to its members only
    const std::uint32_t s = st.index;
    const auto& sg = v.subgroups[s];
    std::vector<std::uint64_t> sent(sg.senders.size(), 0);
    for (std::size_t i = 0; i < sg.senders.size(); ++i) {
      const auto& c = layout.columns(*v.rank_of(sg.senders[i]), s);
      sent[i] = sst.load<std::uint64_t>(c.guard + offsetof(sst::SenderGuardRow, num_sent));
      st.sent += sent[i];
    }
    sst::MemberSet demoted;
    for (auto& ms : st.members) {
      const auto& c = layout.columns(*v.rank_of(ms.node), s);
      if (ms.listener) continue;  // it pushes no counters
      if (st.atomic) {
        ms.received = sst.load<std::int64_t>(c.counters + offsetof(sst::CountersRow, received_num));
        ms.delivered =
            sst.load<std::int64_t>(c.counters + offsetof(sst::CountersRow, delivered_num));
        demoted |= sst.load_set(c.counters + offsetof(sst::CountersRow, demoted));
      } else {
        std::int64_t taken = 0;
        std::uint64_t behind = 0;
        for (std::size_t i = 0; i < sg.senders.size(); ++i) {
          const auto n = sst.load<std::uint64_t>(c.counters + i * sizeof(std::uint64_t));
          taken += static_cast<std::int64_t>(n);
          behind += sent[i] > n ? sent[i] - n : 0;
        }
        ms.received = taken;
        ms.delivered = taken;
        ms.lag = behind;
        demoted |= sst.load_set(c.counters + sg.senders.size() * sizeof(std::uint64_t));
      }
    }
    std::int64_t head = -1;
    for (const auto& ms : st.members)
      if (ms.received) head = std::max(head, *ms.received);
    for (auto& ms : st.members) {
      if (st.atomic && ms.delivered)
        ms.lag = static_cast<std::uint64_t>(std::max<std::int64_t>(0, head - *ms.delivered));
      if (const auto r = v.rank_of(ms.node)) ms.left_behind = demoted.test(*r);
    }
  }
  std::lock_guard lock(counts_mu_);
  for (const auto& [topic, c] : topic_counts_) {
    spindle::TopicStatus t;
    t.id = topic;
    t.delivered = c->delivered.load(std::memory_order_relaxed);
    t.delivered_bytes = c->delivered_bytes.load(std::memory_order_relaxed);
    t.sent = c->sent.load(std::memory_order_relaxed);
    t.sent_bytes = c->sent_bytes.load(std::memory_order_relaxed);
    out.topics.push_back(std::move(t));
  }
}

void Engine::on_deliver(ViewState& vs, std::span<const smc::Message> batch) {
  if (client_ == nullptr || batch.empty()) return;
  if (std::ranges::any_of(batch, [](const smc::Message& m) { return (m.flags & kPacked) != 0; })) {
    // Each record of a packed slot on its own, in the slot's place (group/packed.hpp).
    auto& out = vs.unpacked;
    out.clear();
    for (const auto& m : batch) {
      if ((m.flags & kPacked) == 0) {
        out.push_back(m);
        continue;
      }
      bool first = true;
      const auto error = for_records(m.payload, [&](std::span<const std::byte> bytes) {
        smc::Message one = m;
        one.flags &= ~kPacked;
        one.payload = bytes;
        if (!std::exchange(first, false)) one.lost_before = 0;
        out.push_back(one);
      });
      if (!error.empty()) {
        if (const auto r = vs.view.rank_of(m.sender))
          vs.sst->suspect(*r, transport::SuspicionReason::malformed_frame,
                          "node " + std::to_string(m.sender) + " sent a packed slot (subgroup " +
                              std::to_string(m.subgroup) + ", message " + std::to_string(m.index) +
                              ") whose " + error);
      }
    }
    batch = out;
    if (batch.empty()) return;
  }
  auto& L = vs.large;
  const auto sg = batch.front().subgroup;
  const bool copies = sg < L.receiving.size() && L.receiving[sg].has_value();
  if (std::ranges::none_of(batch,
                           [](const smc::Message& m) { return (m.flags & kLargeMessage) != 0; }) &&
      (!copies || L.held_back == 0)) {
    deliver_up(vs, batch);
    return;
  }
  if (copies) {
    deliver_copies(vs, batch);
    return;
  }
  // Descriptors: the message is here (its sender committed the descriptor once every member
  // that holds had it); deliver its bytes in the descriptor's place, and let them go
  // afterwards.
  std::vector<smc::Message> out;
  out.reserve(batch.size());
  std::vector<std::uint64_t> local_done;  // kLocalGroup's, let go of after the upcall
  for (const auto& m : batch) {
    if ((m.flags & kLargeMessage) == 0) {
      out.push_back(m);
      continue;
    }
    const auto d = parse_descriptor(L, m);
    const auto bytes = d ? L.bytes_of(*d) : std::span<const std::byte>{};
    if (bytes.empty() || bytes.size() != d->size) {
      // Nobody honest commits a descriptor before its message is everywhere.
      suspect_descriptor(vs, m, "for no message this member holds");
      continue;
    }
    // Delivered in its buffer, which the layers above may hold past the upcall (LargePins):
    // RDMC's (released once nothing holds it), or this member's own when it is alone in the
    // subgroup (a hold keeps those bytes).
    smc::Message big = m;
    big.payload = bytes;
    big.pins = &L.pins;
    if (d->group == kLocalGroup) {
      std::shared_ptr<LocalMessage> local;
      {
        std::lock_guard lock(L.mu);
        local = L.local.at(d->seq);
      }
      L.pins.offer(big, {d->group, d->seq}, std::move(local));
      local_done.push_back(d->seq);
    } else {
      L.pins.offer(big, {d->group, d->seq});
    }
    out.push_back(big);
  }
  if (!out.empty()) deliver_up(vs, out);
  for (const auto& [g, seq] : L.pins.settle())
    release_large(L, g, seq);
  if (!local_done.empty()) {
    std::lock_guard lock(L.mu);
    for (const auto seq : local_done)
      L.local.erase(seq);
  }
  // A sender that has run far past a message held here: readers let go of what they have not
  // lent out (copies), as for held slots.
  if (client_ != nullptr && L.pins.held() != 0)
    for (const auto relieve : L.pins.relief())
      client_->unpin(relieve);
}

void Engine::suspect_descriptor(ViewState& vs, const smc::Message& m, const std::string& what) {
  if (const auto r = vs.view.rank_of(m.sender))
    vs.sst->suspect(*r, transport::SuspicionReason::malformed_frame,
                    "node " + std::to_string(m.sender) +
                        " sent a large-message descriptor (subgroup " + std::to_string(m.subgroup) +
                        ", message " + std::to_string(m.index) + ") " + what);
}

// A recipient's large message: its copy is here (taken out of `arrived` into `copy`), on
// its way, or not coming (its sender had no room for this recipient: skipped). `m`'s
// descriptor was checked by no one yet.
Engine::CopyState Engine::copy_for(ViewState& vs, const Message& m, CopyOf& copy) {
  auto& L = vs.large;
  const auto d = parse_descriptor(L, m);
  if (!d) {
    suspect_descriptor(vs, m, "that does not parse");
    return CopyState::none;
  }
  const std::uint32_t k = *L.receiving[m.subgroup];
  std::uint64_t word = 0;
  if (k / 64 < d->copy_words)
    std::memcpy(&word, m.payload.data() + sizeof(LargeDescriptor) + (k / 64) * 8, 8);
  const auto& pairs = L.copies[m.subgroup][m.sender_rank];
  if (((word >> (k % 64)) & 1) == 0 || k >= pairs.size() || pairs[k] == kNoGroup)
    return CopyState::none;
  auto& q = L.arrived[pairs[k]];
  // Copies of messages this recipient skipped (overwritten in the ring before it looked).
  while (!q.empty() && q.front().index < m.index)
    q.pop_front();
  if (q.empty()) return CopyState::coming;
  if (q.front().index != m.index || q.front().bytes->size != d->size) return CopyState::none;
  copy = {q.front().bytes, q.front().bytes->bytes()};
  q.pop_front();
  return CopyState::here;
}

void Engine::deliver_copies(ViewState& vs, std::span<const Message> batch) {
  auto& L = vs.large;
  std::vector<Message> out;
  out.reserve(batch.size());
  std::vector<CopyOf> done;  // copies kept through the upcall
  for (const auto& m : batch) {
    auto& behind = L.behind[L.behind_key(m.subgroup, m.sender_rank)];
    L.next_index[{m.subgroup, m.sender_rank}] = m.index + 1;
    if (!behind.waiting.empty()) {  // the order stays
      behind.waiting.push_back({m, {m.payload.begin(), m.payload.end()}});
      ++L.held_back;
      continue;
    }
    Message next = m;
    next.pins = nullptr;  // copies, or messages whose order waits: none held in place
    if ((m.flags & kLargeMessage) != 0) {
      CopyOf copy;
      switch (copy_for(vs, m, copy)) {
        case CopyState::none:
          L.skip(behind, m);
          continue;
        case CopyState::coming:
          behind.waiting.push_back({m, {m.payload.begin(), m.payload.end()}});
          ++L.held_back;
          continue;
        case CopyState::here:
          next.payload = copy.bytes;
          offer_copy(L, next, copy.keep);
          done.push_back(copy);
          break;
      }
    }
    next.lost_before += std::exchange(behind.skipped, 0);
    out.push_back(next);
  }
  if (!out.empty()) deliver_up(vs, out);
  (void)L.pins.settle();  // copies only: a hold keeps the copy, nothing goes back to RDMC
  L.drop_stale_copies();
}

void Engine::deliver_behind(ViewState& vs, bool ending) {
  auto& L = vs.large;
  if (L.held_back == 0) {
    L.drop_stale_copies();
    return;
  }
  for (auto& [key, behind] : L.behind) {
    std::vector<smc::Message> out;
    std::vector<CopyOf> done;              // copies kept through the upcall
    std::deque<LargeState::Waiting> gone;  // their bytes stay valid through the upcall
    while (!behind.waiting.empty()) {
      auto& w = behind.waiting.front();
      smc::Message next = w.m;
      next.payload = w.bytes;
      next.pins = nullptr;
      if ((next.flags & kLargeMessage) != 0) {
        CopyOf copy;
        auto state = copy_for(vs, next, copy);
        // The view ends: what has not come will not.
        if (state == CopyState::coming && ending) state = CopyState::none;
        if (state == CopyState::coming) break;
        if (state == CopyState::none) {
          L.skip(behind, next);
          behind.waiting.pop_front();
          --L.held_back;
          continue;
        }
        next.payload = copy.bytes;
        offer_copy(L, next, copy.keep);
        done.push_back(copy);
      }
      next.lost_before += std::exchange(behind.skipped, 0);
      out.push_back(next);
      gone.push_back(std::move(w));
      behind.waiting.pop_front();
      --L.held_back;
    }
    if (!out.empty() && client_ != nullptr) deliver_up(vs, out);
    (void)L.pins.settle();
  }
  L.drop_stale_copies();
}

}  // namespace spindle::group
