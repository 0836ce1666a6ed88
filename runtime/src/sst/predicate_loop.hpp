// The predicate thread of one participant (DESIGN §9): each step polls transport events,
// runs heartbeats, evaluates every predicate in order, then issues the queued SST pushes
// outside any lock. It busy-polls while there is work and, after knobs.idle_spin without
// any, sleeps on the transport's wake-up source (Transport::activity()/wait()).
//
// Threading: start()/stop() from the control thread; everything else the loop touches is
// owned by the loop's thread while it runs. run_once() is for single-threaded drivers
// (the in-memory simulator's actors) and must not be mixed with start().
//
// Local wake-ups: before sleeping the loop marks itself dozing (Sst::set_dozing) and looks
// once more; an application commit() made while it dozes rings the transport's wake-up
// source (Sst::nudge), so a commit after an idle period is sent at once. The sleep is cut
// into slices (50 us doubling up to knobs.sleep_slice) that end when the next timer is due
// (Sst::tick_due_in: a heartbeat to send, a peer's silence to check).
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>

#include "sst/predicates.hpp"
#include "sst/sst.hpp"

namespace spindle::sst {

struct LoopStats {
  std::uint64_t steps = 0;
  std::uint64_t busy_steps = 0;
  std::uint64_t sleeps = 0;
};

class PredicateLoop {
 public:
  PredicateLoop(Sst& sst, Predicates& predicates) : sst_(&sst), predicates_(&predicates) {}
  ~PredicateLoop() { stop(); }
  PredicateLoop(const PredicateLoop&) = delete;
  PredicateLoop& operator=(const PredicateLoop&) = delete;

  // One evaluation step (with the timers); true if it did any work.
  bool run_once() { return step(true); }

  void start();
  void stop();
  [[nodiscard]] bool running() const noexcept { return thread_.joinable(); }
  // True when called from the loop's own thread (an upcall).
  [[nodiscard]] bool on_loop_thread() const noexcept {
    return std::this_thread::get_id() == thread_.get_id();
  }
  [[nodiscard]] Sst& sst() noexcept { return *sst_; }
  // Read after stop() (or from the loop's own thread).
  [[nodiscard]] const LoopStats& stats() const noexcept { return stats_; }

 private:
  void run(std::stop_token st);
  bool step(bool timers);
  Sst* sst_;
  Predicates* predicates_;
  LoopStats stats_;
  std::jthread thread_;
};

}  // namespace spindle::sst
