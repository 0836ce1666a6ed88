// The view-change protocol of one view (DESIGN §7; after Derecho): what a member does,
// through its SST row (sst/layout.hpp, MembershipRow and trims), once a member of the view
// is suspected or leaves, until the next view can be installed.
//
//   every member   suspicion (transport event, heartbeat silence, or a bit seen in another
//                  member's `suspected` column: gossip) -> wedge: freeze every subgroup
//                  (no send, receive or delivery; final counters pushed), then wedged = 1
//   leader         (lowest rank not suspected) proposal = suspected | leaving members,
//                  plus the participants asking to join (joiner table), proposal_num += 1 —
//                  or an empty proposal when only the subgroup layout changes; once
//                  every member outside the proposal is wedged and has echoed that proposal_num:
//                  trim[s] = min received_num of those members (their final counters), then
//                  committed = proposal_num
//   other members  wedged: echo the leader's proposal (proposal, proposal_num); on its
//                  commit, echo the trims and the commit
//   every member   after the commit: deliver each subgroup up to its trim (the ragged edge:
//                  identical everywhere), then wait until every member outside the
//                  proposal has echoed the commit or is suspected, then the next view is the
//                  current one minus the proposal
//
//   view v:   A(leader)   B         C (crashed)
//             suspect C   suspect C
//             wedge       wedge
//             propose {C}                                proposal: ranks to remove
//                         echo {C}
//             trims, commit                              trim = min received over A, B
//                         echo trims+commit
//             deliver to trim, install v+1 = {A, B}; re-send own messages past the trim
//
// Takeover: a new leader that echoed a commit keeps it (it never proposes anew in this
// view); one that did not, but sees a member that echoed a commit, adopts that commit with
// its trims; otherwise it proposes its echoed proposal plus what it suspects. A member that
// echoed a commit acks nothing else. Proposals only grow, so later trims never fall below
// earlier ones. Majority rule: a member that suspects half or more of the view (members
// that leave on purpose aside) before the commit halts instead of going on (no split
// brain). Suspicions after the commit do not count: the view is ending. A member whose
// process is known to have exited (same host: liveness.hpp) is no partition: it counts
// neither as lost nor in the view the majority is taken of, so survivors on its host go
// on whatever their number. While a suspected member on this host still looks alive and
// the rest would not make a majority, the halt waits kExitGrace: a closed stream is seen
// a moment before the process is reaped.
//
// Progress: a member that does not take its part in a view change under way — wedge, echo
// the leader's proposal, propose and, once every member echoed, commit (the leader), echo the
// commit — within the suspicion timeout is suspected, whatever its heartbeat says: a protocol
// thread stuck while the heartbeat goes on must not hold the view change, and with it every
// writer, for ever (simulator seed 2787 of group.stack_sim: a leader stalled after proposing
// a relayout was never suspected, and every writer waited).
//
// Threading: everything runs on the protocol thread (one recurrent predicate), except
// request_leave(), which any thread may call.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "group/liveness.hpp"
#include "group/view.hpp"
#include "sst/layout.hpp"
#include "sst/predicates.hpp"

namespace spindle::sst {
class Sst;
}
namespace spindle::smc {
class Smc;
}

namespace spindle::group {

// How long a member that would halt waits for a suspected member of its host, whose
// process still looks alive, to be seen exited.
inline constexpr std::chrono::milliseconds kExitGrace{250};

// The outcome of a view change, as every survivor sees it.
struct ViewDecision {
  sst::MemberSet removed;              // ranks of the ending view
  sst::MemberSet leaving;              // of those, the ones that left on purpose
  std::vector<std::int64_t> trims;     // per subgroup: delivered up to this seq (atomic)
  std::vector<sst::JoinEntry> joined;  // participants the next view adds, in rank order
  // Their certificate identities, in a secured view (sst::SstLayout::has_identities());
  // empty otherwise.
  std::vector<sst::JoinIdentity> identities;
};

class Membership {
 public:
  struct Callbacks {
    // The view can be installed (protocol thread; deliveries up to the trims are done).
    std::function<void(const ViewDecision&)> decided;
    // This member lost contact with too many (protocol thread); it must stop.
    std::function<void(const std::string& why)> halt;
    // What is certain about the process of the member of rank r (runtime.hpp); unset:
    // nothing (every suspicion counts for the majority rule).
    std::function<ProcessState(std::size_t rank)> process_state;
    // The runtime's clock (for kExitGrace); unset: no grace.
    std::function<std::chrono::steady_clock::time_point()> now;
    // Runs the protocol step again at that time (the end of kExitGrace), even if nothing
    // else wakes the protocol thread.
    std::function<void(std::chrono::steady_clock::time_point)> wake_at;
  };

  Membership(sst::Sst& sst, smc::Smc& smc, sst::Predicates& predicates, Callbacks callbacks);
  ~Membership();
  Membership(const Membership&) = delete;
  Membership& operator=(const Membership&) = delete;

  // This member will leave: its `leaving` flag goes out at the next step (any thread; a
  // dozing predicate loop is woken for it, as for a relayout).
  void request_leave() noexcept;
  // This member is closing (it will leave soon): losing the others now is no reason to
  // halt (any thread).
  void closing() noexcept { closing_.store(true, std::memory_order_release); }
  // The subgroup layout should change (an endpoint came or went; layout.hpp): if this
  // member leads, it proposes a view change that removes nobody (any thread).
  void request_relayout() noexcept;
  // The same, asked by a member that need not be the leader: this member was left behind in
  // a subgroup for a lag (smc.hpp) and caught up, and holds again in the next view. It goes
  // to the leader through this member's row (MembershipRow::relayout). Predicate thread.
  void request_rejoin() noexcept;
  // A member this one removes on purpose: its certificate was revoked (security.crl, read
  // again while the domain runs). Suspected at the next step, and never counted as lost by
  // the majority rule, so that a view of two goes on without it (any thread).
  void evict(std::size_t rank, const std::string& why);
  // Why a member was suspected (the SST's report), for the messages (protocol thread).
  void note_suspicion(std::size_t rank, const std::string& why);
  // What note_suspicion() said of `rank` first; empty when this member did not suspect it
  // (protocol thread).
  [[nodiscard]] std::string suspected_why(std::size_t rank) const {
    return rank < why_.size() ? why_[rank] : std::string();
  }
  // A participant asks to join (the leader's join listener; any thread): the next
  // proposal this member makes as leader adds it.
  void add_joiner(const sst::JoinEntry& e, const sst::JoinIdentity& identity = {});
  // True once every other member not suspected holds a proposal that removes us (or the
  // change that removes us is decided): it will go on without us and count no failure
  // (any thread).
  [[nodiscard]] bool leave_announced() const noexcept {
    return leave_announced_.load(std::memory_order_acquire);
  }
  [[nodiscard]] bool wedged() const noexcept { return wedged_; }
  // Fault injection (simulator tests): this member stops taking part in view changes while
  // its heartbeat goes on, as a protocol thread stuck in a trigger would (any thread).
  void stall() noexcept { stalled_.store(true, std::memory_order_release); }
  // Steps of the view-change protocol taken so far (any thread): one that stands still
  // while a join waits tells the engine its protocol is stuck (Engine::on_join).
  [[nodiscard]] std::uint64_t steps() const noexcept {
    return steps_.load(std::memory_order_acquire);
  }
  // Ranks that wedged for a view change (their rows say so): their streams stop on purpose.
  [[nodiscard]] sst::MemberSet wedged_mask() const;

 private:
  [[nodiscard]] bool needed() const;
  // Calls f on each value needed() compares, until f returns false (then false).
  template <class F>
  bool each_watched(F f) const;
  // A member that joined with this view is still connecting here (Sst::connecting).
  [[nodiscard]] bool joiners_connecting() const;
  void step();
  void gossip();
  void wedge();
  // Suspects every member that has been behind in this view change for longer than the
  // suspicion timeout (Progress, above); true if it suspected one.
  [[nodiscard]] bool check_progress(const sst::MemberSet& suspected);
  [[nodiscard]] bool echoed(const sst::MemberSet& suspected, std::size_t leader,
                            const sst::MemberSet& proposal, std::uint64_t num) const;
  void lead();
  void follow(std::size_t leader);
  void finish();
  [[nodiscard]] std::uint64_t field(std::size_t rank, std::size_t offset) const;
  void set_field(std::size_t offset, std::uint64_t value);
  [[nodiscard]] std::int64_t trim(std::size_t rank, std::size_t subgroup) const;
  void set_trim(std::size_t subgroup, std::int64_t value);
  void adopt_commit(std::size_t from);
  void push_membership(bool with_tables);
  void copy_joiners(std::size_t from);
  [[nodiscard]] sst::MemberSet proposal(std::size_t rank) const;
  void set_proposal(const sst::MemberSet& p);
  [[nodiscard]] sst::MemberSet suspected_mask() const;
  [[nodiscard]] sst::MemberSet leaving_mask() const;
  // Of `suspected`, the members whose process exited (certain), and those on this host
  // whose process still looks alive.
  void certain(const sst::MemberSet& suspected, sst::MemberSet& exited,
               sst::MemberSet& alive_here) const;
  // The majority rule: held, lost (this member must halt; `why` says so), or waiting for
  // a same-host member to be seen exited (kExitGrace).
  enum class Majority : std::uint8_t { held, waiting, lost };
  [[nodiscard]] Majority majority(const sst::MemberSet& suspected, sst::MemberSet leaving,
                                  std::string& why);

  sst::Sst* sst_;
  smc::Smc* smc_;
  sst::Predicates* predicates_;
  Callbacks callbacks_;
  sst::Predicates::Id id_ = 0;
  std::size_t me_ = 0;
  std::size_t n_ = 0;
  std::size_t subgroups_ = 0;

  std::mutex joiners_mu_;  // a leaf
  struct PendingJoiner {
    sst::JoinEntry entry;
    sst::JoinIdentity identity;  // secured views only
  };
  std::vector<PendingJoiner> pending_joiners_;
  std::atomic<bool> joiners_waiting_{false};
  std::atomic<bool> leave_{false};
  std::atomic<bool> relayout_{false};
  bool rejoin_ = false;  // request_rejoin(): our row asks the leader for a relayout
  std::atomic<bool> closing_{false};
  std::atomic<bool> leave_announced_{false};
  std::vector<std::string> why_;  // per rank: why it is suspected
  // evict(): the ranks asked for (any thread), and why (guarded by evict_mu_, a leaf).
  std::atomic<std::uint64_t> evictions_{0};  // evict() calls that added a rank
  [[nodiscard]] sst::MemberSet evicted() const;
  mutable std::mutex evict_mu_;
  sst::MemberSet evict_;  // guarded by evict_mu_
  std::vector<std::string> evict_why_;
  bool wedged_ = false;
  bool committed_ = false;  // we hold a commit (ours as leader, or echoed)
  bool delivered_ = false;  // delivered up to the trims
  bool done_ = false;       // decided or halted
  // The majority rule waits for a same-host member to be seen exited until then.
  std::optional<std::chrono::steady_clock::time_point> exit_grace_until_;
  sst::MemberSet joining_;  // ranks that joined with this view (View's Member::joining)
  // Progress: per rank, since when it has been behind in this view change (none: it is not);
  // and the earliest moment one of them will have been behind too long.
  std::vector<std::optional<std::chrono::steady_clock::time_point>> behind_since_;
  std::optional<std::chrono::steady_clock::time_point> progress_due_;
  std::atomic<bool> stalled_{false};
  std::atomic<std::uint64_t> steps_{0};
  // What needed() saw at the last step, and its scratch for the current look.
  mutable std::vector<std::uint64_t> seen_last_;
  mutable std::vector<std::uint64_t> seen_now_;
};

}  // namespace spindle::group
