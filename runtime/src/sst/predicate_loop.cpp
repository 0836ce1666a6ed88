// The predicate thread (see predicate_loop.hpp).
#include "sst/predicate_loop.hpp"

#include <algorithm>
#include <optional>
#include <thread>
#include <utility>

#include "core/cpu_relax.hpp"

namespace spindle::sst {

bool PredicateLoop::step(bool timers) {
  ++stats_.steps;
  bool worked = sst_->poll_events();
  if (timers && sst_->tick()) worked = true;
  if (predicates_->evaluate() > 0) worked = true;
  if (timers && sst_->after_step()) worked = true;
  if (sst_->flush()) worked = true;
  if (worked) ++stats_.busy_steps;
  return worked;
}

thread_local const PredicateLoop* PredicateLoop::stepping_ = nullptr;

namespace {
// A driver asks the stepping loop thread for the token at most this long; past it the
// thread is off its core (a small machine) and the caller sleeps its own way instead.
constexpr std::chrono::nanoseconds kHandover = std::chrono::microseconds(100);
// The loop thread standing by wakes at least this often: for its timers once a driver
// left without a ring (drivers run the timers while they step).
constexpr std::chrono::nanoseconds kStandBy = std::chrono::milliseconds(10);
// A driver yields its core this often while it spins without work: on a small machine the
// thread it waits for (a peer's, or this process's transport I/O thread) may need it.
constexpr std::chrono::nanoseconds kDriverYield = std::chrono::microseconds(20);
constexpr std::chrono::nanoseconds kOtherRan = std::chrono::microseconds(2);
constexpr std::uint64_t kClockEvery = 16;
}  // namespace

void PredicateLoop::start() {
  if (thread_.joinable()) return;
  stopping_.store(false);
  token_.store(kFree);
  thread_ = std::jthread([this](std::stop_token st) { run(std::move(st)); });
}

void PredicateLoop::stop() {
  if (!thread_.joinable()) return;
  stopping_.store(true);
  thread_.request_stop();
  // A loop thread standing by sleeps quietly: arm the transport so the ring wakes it.
  arm();
  sst_->transport().notify();
  thread_.join();
  disarm();
}

void PredicateLoop::arm() noexcept {
  if (!armed_.exchange(true)) sst_->transport().arm_waiter(true);
}

void PredicateLoop::disarm() noexcept {
  if (armed_.exchange(false)) sst_->transport().arm_waiter(false);
}

void PredicateLoop::stand_by() {
  auto& t = sst_->transport();
  const std::uint64_t ticket = t.activity();
  if (token_.load(std::memory_order_acquire) == kFree && want_.load() == 0) return;
  t.wait_quiet(ticket, kStandBy);
}

bool PredicateLoop::take_for_driver() {
  std::uint32_t seen = kFree;
  if (token_.compare_exchange_strong(seen, kDriven, std::memory_order_acquire)) return true;
  if (seen == kDriven) return false;  // another driver steps: its steps deliver for us too
  // The loop thread steps: it hands the token over at its next iteration.
  want_.fetch_add(1);
  const auto until = std::chrono::steady_clock::now() + kHandover;
  bool got = false;
  for (std::uint32_t i = 1;; ++i) {
    seen = kFree;
    if (token_.compare_exchange_weak(seen, kDriven, std::memory_order_acquire)) {
      got = true;
      break;
    }
    if (seen == kDriven || stopping_.load(std::memory_order_relaxed)) break;
    if (i % 64 == 0) {
      if (std::chrono::steady_clock::now() >= until) break;
      std::this_thread::yield();  // the loop thread may be queued behind this one
    } else {
      core::cpu_relax();
    }
  }
  want_.fetch_sub(1);
  if (!got && token_.load() != kDriven) {
    // The loop thread may have handed over and stand by: let it take the token back.
    arm();
    sst_->transport().notify();
  }
  return got;
}

template <class Last>
void PredicateLoop::release_driver(Last&& last, bool may_lease) {
  auto& t = sst_->transport();
  // As the loop thread does before it sleeps: from here on a local commit rings the
  // transport; the last look catches one made before.
  sst_->set_dozing(true);
  const std::uint64_t ticket = t.activity();
  const bool lease = may_lease && quick_returns_ >= kQuickToLease;
  const bool keep_streams = lease && replies_;  // read before the token goes
  const bool more = last();
  // Without a lease the loop thread takes over asleep: what is owed goes now rather than
  // costing it a wake-up at its deadline. On lease the application's next write carries it
  // (the reply of a ping-pong), or its next wait's timers send it.
  if (!lease && sst_->release_lazy()) sst_->flush();  // not work the loop thread must see to
  stepping_ = nullptr;
  timed_ = may_lease;
  if (may_lease) released_at_ = std::chrono::steady_clock::now();
  token_.store(kFree, std::memory_order_release);
  // On lease an application that replies (a ping-pong) is back within microseconds and reads
  // the streams again itself: handing them to the transport's own thread meanwhile would
  // cost two epoll_ctl calls per hop, and that thread a wake-up whenever a frame lands in the
  // gap. If it does not come back, the loop thread's stand-by, or the transport's watchdog
  // (tcp: 20 ms), takes them.
  if (keep_streams) return;
  // This thread polled the transport while it stepped: its own thread reads again.
  t.stop_polling();
  if (lease) return;
  arm();
  // Something landed after the last look (or it left work behind): wake the loop thread.
  if (more || t.activity() != ticket) t.notify();
}

void PredicateLoop::note_take(bool by_loop) noexcept {
  if (!timed_) return;
  const auto away = std::chrono::steady_clock::now() - released_at_;
  if (by_loop) {
    // The loop thread stepped in: a ring came while the application was away, or the
    // stand-by ran out. Only a long absence says the application is not coming back soon.
    if (away >= kComeBack) {
      quick_returns_ = 0;
      timed_ = false;
    }
    return;
  }
  timed_ = false;
  quick_returns_ = away < kComeBack ? std::min(quick_returns_ + 1, kQuickToLease) : 0;
}

Drive PredicateLoop::drive(std::chrono::steady_clock::time_point deadline,
                           std::chrono::nanoseconds spin, core::FunctionRef<bool()> done) {
  if (stopping_.load(std::memory_order_acquire)) return Drive::stopped;
  if (!take_for_driver()) {
    return stopping_.load() ? Drive::stopped : Drive::busy;
  }
  driven_.fetch_add(1, std::memory_order_relaxed);
  note_take(false);
  disarm();
  sst_->set_dozing(false);
  replies_ = std::exchange(wrote_, false);
  sst_->set_ride(quick_returns_ >= kQuickToLease && replies_);
  stepping_ = this;
  Drive result = Drive::done;
  driver_spin_.set_max(spin);
  const auto budget = driver_spin_.next();
  try {
    auto idle_since = std::chrono::steady_clock::now();
    auto last_yield = idle_since;
    bool worked = false;
    bool contended = false;
    for (;;) {
      if (done()) break;
      if (stopping_.load(std::memory_order_relaxed)) {
        result = Drive::stopped;
        break;
      }
      const bool timers = ++driver_steps_ % kClockEvery == 0;
      if (step(timers)) {
        worked = true;
        continue;
      }
      if (!timers) {
        core::cpu_relax();
        continue;
      }
      const auto now = std::chrono::steady_clock::now();
      if (std::exchange(worked, false)) idle_since = now;
      if (now >= deadline) {
        result = Drive::timeout;
        break;
      }
      if (now - idle_since >= budget) {
        result = Drive::idle;
        break;
      }
      if (contended || now - last_yield >= kDriverYield) {
        std::this_thread::yield();
        last_yield = std::chrono::steady_clock::now();
        // Another thread ran meanwhile (the yield took longer than a switch-less one): the
        // core is shared with work, so yield at every timed check (as the loop thread does).
        contended = last_yield - now > kOtherRan;
      }
    }
    if (result == Drive::done) driver_spin_.hit();
    if (result == Drive::idle) driver_spin_.miss();
    if (result == Drive::stopped) {
      stepping_ = nullptr;
      token_.store(kFree, std::memory_order_release);
      return result;
    }
    release_driver([this] { return step(true); }, result == Drive::done);
  } catch (...) {
    abandon();
    throw;
  }
  return result;
}

bool PredicateLoop::try_run(core::FunctionRef<void()> work) {
  if (stopping_.load(std::memory_order_acquire)) return false;
  std::uint32_t seen = kFree;
  if (!token_.compare_exchange_strong(seen, kDriven, std::memory_order_acquire)) return false;
  note_take(false);
  disarm();
  sst_->set_dozing(false);
  wrote_ = true;
  sst_->set_ride(quick_returns_ >= kQuickToLease);  // what rides goes with this very push
  stepping_ = this;
  try {
    work();
    release_driver(
        [&] {
          work();
          return false;
        },
        true);
  } catch (...) {
    abandon();
    throw;
  }
  return true;
}

void PredicateLoop::abandon() noexcept {
  // A step threw on a driving thread (out of memory): the loop thread takes over, and the
  // exception goes on to the application's call.
  stepping_ = nullptr;
  sst_->set_dozing(true);
  token_.store(kFree, std::memory_order_release);
  arm();
  sst_->transport().notify();
}

void PredicateLoop::run(std::stop_token st) {
  // Spin while work keeps coming; after the idle spin without any, sleep on
  // the transport's wake-up source. The spin is knobs.idle_spin while traffic is recent,
  // and short once spins stopped catching work (AdaptiveSpin). Peers' writes ring it, and so do
  // local commits while the loop dozes (Sst::nudge). The sleep slice still starts short and doubles
  // up to knobs.sleep_slice, and never past the next timer (heartbeats, suspicion timeouts). The
  // idle spin yields the core at its first step and then every kYieldEvery: on a small machine the
  // peer's predicate thread, which this one is waiting for, or the application thread that fills
  // the freed slots, may be queued behind it. The first yield comes at once, not at the next timed
  // step (up to kClockEvery idle steps later, while the application waited: shm, 2 members all
  // sending, 8 alternating runs, atomic/raw median 0.60 against 0.56). Yielding on every round
  // instead cost a third of a core in sched_yield calls (perf, shm, 2 members all sending) and
  // delayed the next look at memory by a scheduler pass. But when a yield did run another thread
  // (it took longer than kOtherRan), the core is shared with work: the loop then yields at every
  // timed idle check instead of pausing 20 us on a core another member's predicate thread needs
  // (perf, shm, 3 members one sending: a receiver sharing the sender's CPU spent 29 % of its time
  // in the pause loop; atomic/raw median 0.41 -> 0.54 over 4 alternating runs, 4 one 0.44 -> 0.54,
  // 3 all 0.49 -> 0.51, 2 members unchanged).
  //
  // The token (class comment): the loop thread steps only while it holds it. It gives it
  // up to sleep, and to a driver that asks (want_); while a driver holds it, it stands by.
  // Taking it back after a driver stepped, it does not spin: the driver spun already, and
  // will likely be back (an application between two waits); it dozes at its first idle
  // check instead.
  const auto& k = sst_->group().knobs;
  constexpr std::chrono::nanoseconds kFirstSlice = std::chrono::microseconds(50);
  constexpr std::chrono::nanoseconds kYieldEvery = std::chrono::microseconds(20);
  auto& t = sst_->transport();
  std::optional<std::chrono::steady_clock::time_point> idle_since;
  std::chrono::steady_clock::time_point last_yield;
  std::chrono::nanoseconds slice = kFirstSlice;
  std::uint64_t sleeps = 0;
  std::uint64_t n = 0;
  bool worked = false;        // the last step did work: yield at the next idle one
  bool contended = false;     // the last yield ran another thread: yield at every idle check
  bool own = false;           // holds the token
  bool dozed = false;         // gave the token up to sleep
  bool after_driver = false;  // took the token back from a driver: no idle spin
  std::uint64_t driven_seen = 0;
  std::chrono::nanoseconds spin{0};  // this idle period's (loop_spin_)
  loop_spin_.set_max(k.idle_spin);
  // Yields and notes whether another thread ran meanwhile (a yield nobody took returns in
  // well under a microsecond; a switch there and back alone takes longer).
  auto yield = [&](std::chrono::steady_clock::time_point before) {
    std::this_thread::yield();
    last_yield = std::chrono::steady_clock::now();
    contended = last_yield - before > kOtherRan;
  };
  while (!st.stop_requested()) {
    if (!own) {
      std::uint32_t seen = kFree;
      if (want_.load() != 0 ||
          !token_.compare_exchange_strong(seen, kLoop, std::memory_order_acquire)) {
        stand_by();
        continue;
      }
      own = true;
      note_take(true);
      disarm();
      sst_->set_dozing(false);
      sst_->set_ride(false);
      if (const auto d = driven_.load(std::memory_order_relaxed); d != driven_seen) {
        driven_seen = d;
        after_driver = true;
        idle_since.reset();
        slice = kFirstSlice;
      } else if (dozed) {
        slice = std::min<std::chrono::nanoseconds>(slice * 2, k.sleep_slice);
      }
      dozed = false;
    }
    if (want_.load(std::memory_order_relaxed) != 0) {
      // A driver asks: hand over (it takes the token as soon as it is free).
      driven_seen = driven_.load(std::memory_order_relaxed);
      token_.store(kFree, std::memory_order_release);
      own = false;
      continue;
    }
    // Timers and the idle clock every kClockEvery steps: a clock read costs as much as an
    // idle step (22 % of the CPU time of busy shm members went to clock_gettime).
    const bool timers = ++n % kClockEvery == 0;
    if (step(timers)) {
      if (idle_since) loop_spin_.hit();  // work came back within the spin
      idle_since.reset();
      slice = kFirstSlice;
      worked = true;
      continue;
    }
    if (std::exchange(worked, false)) {
      yield(std::chrono::steady_clock::now());
      continue;
    }
    if (!timers) {
      core::cpu_relax();
      continue;
    }
    const auto now = std::chrono::steady_clock::now();
    if (!idle_since) {
      idle_since = now;
      spin = after_driver ? std::chrono::nanoseconds(0) : loop_spin_.next();
    }
    if (now - *idle_since < spin) {
      if (contended || now - last_yield >= kYieldEvery) {
        yield(now);
      } else {
        core::cpu_relax();
      }
      continue;
    }
    // Doze: from here on a local commit rings the transport; look once more first, so a
    // commit published before the flag was seen is not slept through.
    // The wake-up ticket is taken only here, not on every step: peers bump it with every
    // write, and a loop reading it each round kept its cache line shared, so each of their
    // writes had to take it back (no throughput change measured). A ring after the ticket
    // ends the sleep; one before it is seen by this check.
    sst_->set_dozing(true);
    const std::uint64_t ticket = t.activity();
    if (run_once()) {
      sst_->set_dozing(false);
      idle_since.reset();
      slice = kFirstSlice;
      worked = true;
      continue;
    }
    // Acknowledgements left to ride on a reply go now: asleep, this thread would have to
    // wake for their deadline (one wake-up more per sample of a slow stream).
    if (sst_->release_lazy()) sst_->flush();  // not work that calls for another spin
    ++sleeps;
    if (!after_driver) loop_spin_.miss();
    // No longer than until the next heartbeat or suspicion check is due: everything else
    // that needs the loop rings the transport (peers' writes, events, local commits).
    auto doze = std::min<std::chrono::nanoseconds>(slice, k.sleep_slice);
    if (const auto due = sst_->tick_due_in()) doze = std::min(doze, *due);
    // Asleep, the loop holds no token: a driver or a writer may step meanwhile. The one
    // who takes the token next clears the dozing mark.
    after_driver = false;
    driven_seen = driven_.load(std::memory_order_relaxed);
    token_.store(kFree, std::memory_order_release);
    own = false;
    dozed = true;
    t.wait(ticket, doze);
  }
  if (own) token_.store(kFree, std::memory_order_release);
  stats_.sleeps = sleeps;
}

}  // namespace spindle::sst
