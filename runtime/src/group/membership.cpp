// The view-change protocol (see membership.hpp).
#include "group/membership.hpp"

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstring>
#include <utility>

#include "smc/smc.hpp"
#include "sst/layout.hpp"
#include "sst/sst.hpp"

namespace spindle::group {

namespace {
using sst::ControlRow;
using sst::MembershipRow;
constexpr std::size_t kSuspected = offsetof(ControlRow, suspected);
constexpr std::size_t kWedged = offsetof(MembershipRow, wedged);
constexpr std::size_t kLeaving = offsetof(MembershipRow, leaving);
constexpr std::size_t kProposal = offsetof(MembershipRow, proposal);
constexpr std::size_t kProposalNum = offsetof(MembershipRow, proposal_num);
constexpr std::size_t kCommitted = offsetof(MembershipRow, committed);
constexpr std::size_t kJoins = offsetof(MembershipRow, joins);
constexpr std::size_t kRelayout = offsetof(MembershipRow, relayout);

using sst::MemberSet;
}  // namespace

Membership::Membership(sst::Sst& sst, smc::Smc& smc, sst::Predicates& predicates,
                       Callbacks callbacks)
    : sst_(&sst),
      smc_(&smc),
      predicates_(&predicates),
      callbacks_(std::move(callbacks)),
      me_(sst.my_rank()),
      n_(sst.rows()),
      subgroups_(sst.group().subgroups.size()) {
  const auto& members = sst.group().members;
  for (std::size_t r = 0; r < members.size(); ++r)
    if (members[r].joining) joining_.set(r);
  id_ = predicates.add(
      sst::PredicateKind::recurrent, [this] { return needed(); }, [this] { step(); });
}

Membership::~Membership() {
  predicates_->remove(id_);
}

std::uint64_t Membership::field(std::size_t rank, std::size_t offset) const {
  return sst_->load<std::uint64_t>(sst_->layout().membership(rank) + offset);
}

void Membership::set_field(std::size_t offset, std::uint64_t value) {
  sst_->store<std::uint64_t>(sst_->layout().membership(me_) + offset, value);
}

std::int64_t Membership::trim(std::size_t rank, std::size_t subgroup) const {
  return sst_->load<std::int64_t>(sst_->layout().trims(rank) + sizeof(std::int64_t) * subgroup);
}

MemberSet Membership::proposal(std::size_t rank) const {
  return sst_->load_set(sst_->layout().membership(rank) + kProposal);
}

void Membership::set_proposal(const MemberSet& p) {
  sst_->store_set(sst_->layout().membership(me_) + kProposal, p);
}

void Membership::set_trim(std::size_t subgroup, std::int64_t value) {
  sst_->store<std::int64_t>(sst_->layout().trims(me_) + sizeof(std::int64_t) * subgroup, value);
}

// Takes rank `from`'s commit as ours — its trims, joiners, proposal and commit — and echoes
// it (a follower of its leader's commit; a new leader adopting one a member holds).
void Membership::adopt_commit(std::size_t from) {
  for (std::size_t s = 0; s < subgroups_; ++s)
    set_trim(s, trim(from, s));
  copy_joiners(from);
  set_proposal(proposal(from));
  set_field(kProposalNum, field(from, kProposalNum));
  set_field(kCommitted, field(from, kCommitted));
  push_membership(true);
  committed_ = true;
}

// Our membership part goes to every member not suspected: the trims and the joiner table
// as data, then the row as the guard that publishes them (every field in one write).
void Membership::push_membership(bool with_tables) {
  const auto& l = sst_->layout();
  for (std::size_t r = 0; r < n_; ++r) {
    if (r == me_) continue;
    if (with_tables) sst_->push_data(r, l.trims(me_), l.membership_len() - sizeof(MembershipRow));
    sst_->push_guard(r, l.membership(me_), sizeof(MembershipRow));
  }
}

MemberSet Membership::suspected_mask() const {
  return sst_->load_set(sst_->layout().control(me_) + kSuspected);
}

MemberSet Membership::leaving_mask() const {
  MemberSet m;
  for (std::size_t r = 0; r < n_; ++r)
    if (field(r, kLeaving) != 0) m.set(r);
  return m;
}

MemberSet Membership::wedged_mask() const {
  MemberSet m;
  for (std::size_t r = 0; r < n_; ++r)
    if (field(r, kWedged) != 0) m.set(r);
  return m;
}

MemberSet Membership::evicted() const {
  std::lock_guard lock(evict_mu_);
  return evict_;
}

void Membership::note_suspicion(std::size_t rank, const std::string& why) {
  if (why_.size() < n_) why_.resize(n_);
  if (rank < n_ && why_[rank].empty()) why_[rank] = why;
}

void Membership::evict(std::size_t rank, const std::string& why) {
  if (rank >= n_ || rank == me_) return;
  {
    std::lock_guard lock(evict_mu_);
    if (evict_why_.size() < n_) evict_why_.resize(n_);
    if (evict_why_[rank].empty()) evict_why_[rank] = why;
    if (evict_.test(rank)) return;
    evict_.set(rank);
  }
  evictions_.fetch_add(1, std::memory_order_acq_rel);
  sst_->nudge();
}

void Membership::add_joiner(const sst::JoinEntry& e, const sst::JoinIdentity& identity) {
  std::lock_guard lock(joiners_mu_);
  // One entry per node: a joiner admitted twice (it asked again, or the view it was
  // admitted in ended as it was admitted) keeps its latest address.
  const auto same = std::find_if(pending_joiners_.begin(), pending_joiners_.end(),
                                 [&](const PendingJoiner& p) { return p.entry.id == e.id; });
  if (same != pending_joiners_.end()) {
    *same = PendingJoiner{e, identity};
  } else {
    pending_joiners_.push_back(PendingJoiner{e, identity});
  }
  joiners_waiting_.store(true, std::memory_order_release);
}

// Copies rank `from`'s joiner table and count into our row (not pushed).
void Membership::request_leave() noexcept {
  leave_.store(true, std::memory_order_release);
  sst_->nudge();
}

void Membership::request_relayout() noexcept {
  relayout_.store(true, std::memory_order_release);
  sst_->nudge();
}

void Membership::request_rejoin() noexcept {
  if (rejoin_ || done_) return;
  rejoin_ = true;
  set_field(kRelayout, 1);
  push_membership(false);
}

void Membership::copy_joiners(std::size_t from) {
  const auto& l = sst_->layout();
  std::memcpy(sst_->at(l.joiners(me_)), sst_->at(l.joiners(from)),
              sizeof(sst::JoinEntry) * sst::kMaxJoins);
  if (l.has_identities()) {
    std::memcpy(sst_->at(l.identities(me_)), sst_->at(l.identities(from)),
                sizeof(sst::JoinIdentity) * sst::kMaxJoins);
  }
  set_field(kJoins, field(from, kJoins));
}

// Each value needed() compares, in one order: our own requests, then every row's membership
// columns. Stops, returning false, at the first value `f` returns false for.
template <class F>
bool Membership::each_watched(F f) const {
  if (!f(evictions_.load(std::memory_order_acquire))) return false;
  if (!f((leave_.load(std::memory_order_acquire) ? 1 : 0) |
         (joiners_waiting_.load(std::memory_order_acquire) ? 2 : 0) |
         (relayout_.load(std::memory_order_acquire) ? 4 : 0) | (joiners_connecting() ? 8 : 0)))
    return false;
  const auto& l = sst_->layout();
  for (std::size_t r = 0; r < n_; ++r) {
    for (std::size_t w = 0; w < MemberSet::kWords; ++w) {
      for (const std::size_t at : {l.control(r) + kSuspected, l.membership(r) + kProposal})
        if (!f(sst_->load<std::uint64_t>(at + w * sizeof(std::uint64_t)))) return false;
    }
    for (std::uint64_t v : {field(r, kWedged), field(r, kLeaving), field(r, kProposalNum),
                            field(r, kCommitted), field(r, kJoins), field(r, kRelayout)})
      if (!f(v)) return false;
  }
  return true;
}

// Cheap unless something moved: every row's membership fields and suspicions, and our
// own flags, compared with what the last step saw (the loop sleeps while a view change
// waits). Compared value by value, not through a hash: two changes that cancel in a hash
// (a joiner's flag and a suspicion bit once did, simulator seed 2453) would leave the
// leader asleep with a join to propose.
bool Membership::needed() const {
  if (done_) return false;
  // Outside a view change every value is zero: the first look stops at the first that is not
  // (the scan reads 14 words of every row, at every step of the loop).
  if (each_watched([](std::uint64_t v) { return v == 0; })) return false;
  seen_now_.clear();
  std::uint64_t any = 0;
  (void)each_watched([&](std::uint64_t v) {
    any |= v;
    seen_now_.push_back(v);
    return true;
  });
  // A member behind in the view change: the moment it has been behind too long is news.
  if (progress_due_ && callbacks_.now)
    seen_now_.push_back(callbacks_.now() >= *progress_due_ ? 1 : 0);
  // While the majority rule waits for a same-host member to be seen exited (kExitGrace),
  // its process state and the end of the wait are news too.
  if (exit_grace_until_ && !committed_) {
    MemberSet exited;
    MemberSet alive_here;
    certain(suspected_mask(), exited, alive_here);
    for (std::size_t w = 0; w < MemberSet::kWords; ++w)
      seen_now_.push_back(exited.word(w));
    seen_now_.push_back(callbacks_.now && callbacks_.now() >= *exit_grace_until_ ? 1 : 0);
  }
  if (any == 0 || seen_now_ == seen_last_) return false;
  std::swap(seen_now_, seen_last_);
  return true;
}

void Membership::step() {
  if (done_ || stalled_.load(std::memory_order_acquire)) return;  // stalled: fault injection
  steps_.fetch_add(1, std::memory_order_release);
  // Our leave is announced once every other member we do not suspect holds a proposal
  // that removes us: the commit will (proposals only grow), and it needs nothing more
  // from us. Merely wedged is not enough: a relayout wedges everyone too, and may commit
  // a view that still has us (we would then vanish from it unannounced).
  if (field(me_, kLeaving) != 0 && !leave_announced_.load(std::memory_order_relaxed)) {
    bool seen = true;
    for (std::size_t r = 0; r < n_; ++r)
      if (r != me_ && !sst_->suspected(r) && !proposal(r).test(me_)) seen = false;
    if (seen) leave_announced_.store(true, std::memory_order_release);
  }
  if (leave_.load(std::memory_order_acquire) && field(me_, kLeaving) == 0) {
    set_field(kLeaving, 1);
    push_membership(false);
  }
  // Members evicted (their certificates revoked) are suspected here, with the reason.
  if (evictions_.load(std::memory_order_acquire) != 0) {
    const MemberSet e = evicted();
    for (std::size_t r = 0; r < n_; ++r) {
      if (!e.test(r) || sst_->suspected(r)) continue;
      std::string why;
      {
        std::lock_guard lock(evict_mu_);
        why = r < evict_why_.size() ? evict_why_[r] : std::string();
      }
      sst_->suspect(r, transport::SuspicionReason::revoked, why);
    }
  }
  gossip();
  const MemberSet suspected = suspected_mask();
  const MemberSet leaving = leaving_mask();
  // The leader lays out again when it wants to, or when a member asks through its row (a
  // member left behind for a lag that caught up: request_rejoin()).
  bool relayout_asked = relayout_.load(std::memory_order_acquire);
  for (std::size_t r = 0; r < n_ && !relayout_asked; ++r)
    relayout_asked = !suspected.test(r) && field(r, kRelayout) != 0;
  // The leader: the lowest rank nobody here suspects.
  std::size_t leader = 0;
  while (leader < n_ && suspected.test(leader))
    ++leader;
  // A view change is under way once anyone is suspected or leaving, someone asks to join,
  // the leader wants another layout, or any member has a proposal.
  bool proposed = false;
  for (std::size_t r = 0; r < n_ && !proposed; ++r)
    proposed = !suspected.test(r) && field(r, kProposalNum) != 0;
  // New joiners wait while one that joined with this view is still connecting here: a
  // view change would wait for its part (one that never connects is suspected after the
  // suspicion timeout, and the joiners go in with its removal); the stream never waits.
  if (((suspected | leaving) & ~MemberSet::of(me_)).none() && !proposed &&
      !(joiners_waiting_.load(std::memory_order_acquire) && !joiners_connecting()) &&
      !(leader == me_ && relayout_asked))
    return;
  if (!wedged_) wedge();
  // A member suspected for want of progress changes the leader and the majority: look again
  // at the next step (the suspicion itself makes one due).
  if (check_progress(suspected)) return;
  if (!committed_ && !closing_.load(std::memory_order_relaxed) &&
      !leave_.load(std::memory_order_relaxed)) {
    std::string why;
    switch (majority(suspected, leaving, why)) {
      case Majority::held:
        break;
      case Majority::waiting:
        return;  // neither go on nor halt yet
      case Majority::lost:
        done_ = true;
        if (callbacks_.halt) callbacks_.halt(why);
        return;
    }
  }
  if (!committed_) {
    if (leader == me_) {
      lead();
    } else {
      follow(leader);
    }
  }
  if (committed_) finish();
}

bool Membership::joiners_connecting() const {
  if (joining_.none()) return false;  // the usual view: nothing to look at on every step
  for (std::size_t r = 0; r < n_; ++r)
    if (joining_.test(r) && sst_->connecting(r) && !sst_->suspected(r)) return true;
  return false;
}

void Membership::certain(const MemberSet& suspected, MemberSet& exited,
                         MemberSet& alive_here) const {
  exited = MemberSet{};
  alive_here = MemberSet{};
  if (!callbacks_.process_state) return;
  for (std::size_t r = 0; r < n_; ++r) {
    if (!suspected.test(r)) continue;
    switch (callbacks_.process_state(r)) {
      case ProcessState::exited:
        exited.set(r);
        break;
      case ProcessState::alive:
        alive_here.set(r);
        break;
      case ProcessState::unknown:
        break;
    }
  }
}

// Majority rule, before any commit: members that leave on purpose do not count as lost
// (nor does anything once we are closing ourselves), and members whose process exited
// count neither as lost nor in the view: a dead process is on no side of a partition.
// Members joining with this view vote from the next one on: every member knows the same
// set of them (it is in the view), so at most one side of a partition holds a majority of
// the rest, and joiners that never come cannot outvote the members that were there. When
// every voter's death is certain, the survivors are alone with no one to split from.
Membership::Majority Membership::majority(const MemberSet& suspected, MemberSet leaving,
                                          std::string& why) {
  MemberSet exited;
  MemberSet alive_here;
  // Evicted members (evict()) are removed on purpose, as those that leave.
  if (evictions_.load(std::memory_order_acquire) != 0) leaving |= evicted();
  certain(suspected & ~leaving & ~joining_, exited, alive_here);
  const MemberSet lost_mask = suspected & ~leaving & ~exited & ~joining_;
  const std::size_t lost = lost_mask.count();
  const std::size_t voters = n_ - (exited | joining_).count();
  if (lost * 2 < voters || (voters == 0 && exited.any())) {
    exit_grace_until_.reset();
    return Majority::held;
  }
  // A same-host member whose stream closed may not be reaped yet: give it a moment.
  if ((lost_mask & alive_here).any() && callbacks_.now) {
    const auto now = callbacks_.now();
    if (!exit_grace_until_) {
      exit_grace_until_ = now + kExitGrace;
      if (callbacks_.wake_at) callbacks_.wake_at(*exit_grace_until_);
    }
    if (now < *exit_grace_until_) return Majority::waiting;
  }
  std::string whom;
  for (std::size_t r = 0; r < n_; ++r) {
    if (!lost_mask.test(r)) continue;
    whom += whom.empty() ? " (" : "; ";
    whom += "node " + std::to_string(sst_->node_of(r)) + ": " +
            (r < why_.size() && !why_[r].empty() ? why_[r] : "suspected");
    if (alive_here.test(r)) whom += ", its process alive on this host";
  }
  why =
      "lost contact with " + std::to_string(lost) + " of the " + std::to_string(voters) +
      " members of its view" + (whom.empty() ? "" : whom + ")") +
      (exited.any() ? " besides " + std::to_string(exited.count()) + " whose process exited" : "") +
      "; a member that cannot reach a majority stops (no split brain)";
  return Majority::lost;
}

// Whether every member that `proposal` keeps (and nobody suspects), the leader aside, echoed
// the leader's proposal `num` (its joiners included): the leader's commit is due (lead()).
bool Membership::echoed(const MemberSet& suspected, std::size_t leader, const MemberSet& removes,
                        std::uint64_t num) const {
  for (std::size_t q = 0; q < n_; ++q) {
    if (q == leader || suspected.test(q) || removes.test(q)) continue;
    if (field(q, kWedged) == 0 || field(q, kProposalNum) != num ||
        proposal(q) != proposal(leader) || field(q, kJoins) != field(leader, kJoins))
      return false;
  }
  return true;
}

// Whether rank r has done its part of the view change so far: wedged; the leader proposed;
// a follower echoed the leader's newest proposal; once the leader committed, echoed that
// commit. Members the proposal removes owe nothing.
bool Membership::check_progress(const MemberSet& suspected) {
  if (!callbacks_.now) return false;
  if (behind_since_.size() < n_) behind_since_.resize(n_);
  std::size_t leader = 0;
  while (leader < n_ && suspected.test(leader))
    ++leader;
  if (leader == n_) return false;
  const auto now = callbacks_.now();
  const auto bound = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      sst_->group().knobs.suspicion_timeout);
  const std::uint64_t num = field(leader, kProposalNum);
  const MemberSet removes = proposal(leader);
  const std::uint64_t commit = field(leader, kCommitted);
  progress_due_.reset();
  bool suspects = false;
  for (std::size_t r = 0; r < n_; ++r) {
    if (r == me_ || suspected.test(r) || removes.test(r)) {
      behind_since_[r].reset();
      continue;
    }
    bool behind = field(r, kWedged) == 0;
    if (r == leader) {
      // It proposes, and commits once every member its proposal keeps echoed it.
      behind = behind || num == 0 || (commit == 0 && echoed(suspected, leader, removes, num));
    } else {
      behind =
          behind || field(r, kProposalNum) < num || (commit != 0 && field(r, kCommitted) != commit);
    }
    if (!behind) {
      behind_since_[r].reset();
      continue;
    }
    if (!behind_since_[r]) {
      behind_since_[r] = now;
      if (callbacks_.wake_at) callbacks_.wake_at(now + bound);
    }
    if (now - *behind_since_[r] >= bound) {
      const auto ms =
          std::chrono::duration_cast<std::chrono::milliseconds>(now - *behind_since_[r]);
      sst_->suspect(r, transport::SuspicionReason::heartbeat_timeout,
                    "node " + std::to_string(sst_->node_of(r)) +
                        " took no part in the view change for " + std::to_string(ms.count()) +
                        " ms (its heartbeat went on)");
      behind_since_[r].reset();
      suspects = true;
      continue;
    }
    const auto due = *behind_since_[r] + bound;
    if (!progress_due_ || due < *progress_due_) progress_due_ = due;
  }
  return suspects;
}

// Suspicions of members we do not suspect ourselves are ours too (everyone wedges).
void Membership::gossip() {
  if (committed_) return;
  const MemberSet mine = suspected_mask();
  MemberSet theirs;
  for (std::size_t r = 0; r < n_; ++r) {
    if (r == me_ || mine.test(r)) continue;
    theirs |= sst_->load_set(sst_->layout().control(r) + kSuspected);
  }
  theirs &= ~mine & ~MemberSet::of(me_);
  for (std::size_t r = 0; r < n_; ++r) {
    if (theirs.test(r))
      sst_->suspect(r, transport::SuspicionReason::heartbeat_timeout,
                    "node " + std::to_string(sst_->node_of(r)) +
                        " is suspected by another member of the view");
  }
}

void Membership::wedge() {
  smc_->freeze();  // final counters are queued as statuses: they go out before `wedged`
  set_field(kWedged, 1);
  push_membership(false);
  wedged_ = true;
}

void Membership::lead() {
  // Takeover: a member that echoed a commit hands it on; we adopt it with its trims.
  for (std::size_t r = 0; r < n_; ++r) {
    if (r == me_ || suspected_mask().test(r)) continue;
    if (field(r, kCommitted) == 0) continue;
    adopt_commit(r);
    return;
  }
  // Proposals only grow: what we echoed from an earlier leader stays in, joiners included.
  const MemberSet want = proposal(me_) | suspected_mask() | leaving_mask();
  std::uint64_t num = field(me_, kProposalNum);
  bool more_joiners = false;
  if (joiners_waiting_.load(std::memory_order_acquire)) {
    std::lock_guard lock(joiners_mu_);
    const auto& l = sst_->layout();
    auto* table = reinterpret_cast<sst::JoinEntry*>(sst_->at(l.joiners(me_)));
    auto* identities = l.has_identities()
                           ? reinterpret_cast<sst::JoinIdentity*>(sst_->at(l.identities(me_)))
                           : nullptr;
    std::uint64_t count = field(me_, kJoins);
    std::size_t taken = 0;
    for (const auto& [j, identity] : pending_joiners_) {
      if (count == sst::kMaxJoins) break;  // the rest waits for the next view change
      ++taken;
      if (std::any_of(table, table + count, [&](const sst::JoinEntry& t) { return t.id == j.id; }))
        continue;  // proposed already: a node joins once
      if (identities != nullptr) identities[count] = identity;
      table[count++] = j;
      more_joiners = true;
    }
    pending_joiners_.erase(pending_joiners_.begin(),
                           pending_joiners_.begin() + static_cast<std::ptrdiff_t>(taken));
    set_field(kJoins, count);
    joiners_waiting_.store(!pending_joiners_.empty(), std::memory_order_release);
  }
  // A member still holding an earlier leader's proposal under our number, or a newer
  // number, would never echo ours (followers echo only higher numbers): outbid it. Two
  // leaders can pick the same number when the second did not see the first's proposal
  // before it took over (simulator seed 9746: the leader crashed one sample after the
  // member it proposed to remove; the next leader's proposal 1 met the old proposal 1).
  bool outbid = false;
  for (std::size_t r = 0; r < n_; ++r) {
    if (r == me_ || suspected_mask().test(r)) continue;
    const std::uint64_t theirs = field(r, kProposalNum);
    if (theirs > num || (theirs == num && num != 0 && proposal(r) != want)) outbid = true;
  }
  if (want != proposal(me_) || num == 0 || more_joiners || outbid) {
    for (std::size_t r = 0; r < n_; ++r)
      num = std::max(num, field(r, kProposalNum));
    ++num;
    set_proposal(want);
    set_field(kProposalNum, num);
    push_membership(true);
    return;  // the acks come later
  }
  // Commit once every member outside the proposal is wedged and echoed this proposal.
  for (std::size_t r = 0; r < n_; ++r) {
    if (r == me_ || want.test(r)) continue;
    if (field(r, kWedged) == 0 || field(r, kProposalNum) != num || proposal(r) != want ||
        field(r, kJoins) != field(me_, kJoins))
      return;
  }
  for (std::size_t s = 0; s < subgroups_; ++s)
    set_trim(s, smc_->trim(static_cast<std::uint32_t>(s), want));
  set_field(kCommitted, num);
  push_membership(true);
  committed_ = true;
}

void Membership::follow(std::size_t leader) {
  const std::uint64_t num = field(leader, kProposalNum);
  if (num == 0) return;
  // Its commit of what we echoed: echo the trims and the commit.
  const std::uint64_t c = field(leader, kCommitted);
  if (c != 0 && c == field(me_, kProposalNum) && proposal(leader) == proposal(me_)) {
    adopt_commit(leader);
    return;
  }
  // A newer proposal: echo it (we are wedged, so our final counters precede the echo).
  if (num > field(me_, kProposalNum)) {
    copy_joiners(leader);
    set_proposal(proposal(leader));
    set_field(kProposalNum, num);
    push_membership(true);
  }
}

void Membership::finish() {
  const MemberSet removed = proposal(me_);
  if (!delivered_) {
    // Every member that stays froze and pushed its final counters and guards before its
    // `wedged`: once we see that flag, its messages of this view are all here (unordered
    // subgroups take them all: Smc::deliver_to).
    const MemberSet suspected = suspected_mask();
    for (std::size_t r = 0; r < n_; ++r)
      if (r != me_ && !removed.test(r) && !suspected.test(r) && field(r, kWedged) == 0) return;
    for (std::size_t s = 0; s < subgroups_; ++s)
      smc_->deliver_to(static_cast<std::uint32_t>(s), trim(me_, s));
    delivered_ = true;
  }
  // Every member that stays must hold the commit before anyone moves on, so that a later
  // leader adopts it; a member we suspect meanwhile is not waited for.
  const std::uint64_t c = field(me_, kCommitted);
  const MemberSet suspected = suspected_mask();
  for (std::size_t r = 0; r < n_; ++r) {
    if (r == me_ || removed.test(r) || suspected.test(r)) continue;
    if (field(r, kCommitted) != c) return;
  }
  done_ = true;
  if (removed.test(me_)) leave_announced_.store(true, std::memory_order_release);
  ViewDecision d;
  d.removed = removed;
  d.leaving = leaving_mask() & removed;
  for (std::size_t s = 0; s < subgroups_; ++s)
    d.trims.push_back(trim(me_, s));
  const auto& l = sst_->layout();
  const auto* table = reinterpret_cast<const sst::JoinEntry*>(sst_->at(l.joiners(me_)));
  const auto joins = std::min<std::uint64_t>(field(me_, kJoins), sst::kMaxJoins);
  d.joined.assign(table, table + joins);
  if (l.has_identities()) {
    const auto* ids = reinterpret_cast<const sst::JoinIdentity*>(sst_->at(l.identities(me_)));
    d.identities.assign(ids, ids + joins);
  }
  if (callbacks_.decided) callbacks_.decided(d);
}

}  // namespace spindle::group
