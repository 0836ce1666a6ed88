// The predicate thread (see predicate_loop.hpp).
#include "sst/predicate_loop.hpp"

#include <algorithm>
#include <optional>

namespace spindle::sst {

bool PredicateLoop::run_once() {
  ++stats_.steps;
  bool worked = sst_->poll_events();
  if (sst_->tick()) worked = true;
  if (predicates_->evaluate() > 0) worked = true;
  if (sst_->flush()) worked = true;
  if (worked) ++stats_.busy_steps;
  return worked;
}

void PredicateLoop::start() {
  if (thread_.joinable()) return;
  thread_ = std::jthread([this](std::stop_token st) { run(std::move(st)); });
}

void PredicateLoop::stop() {
  if (!thread_.joinable()) return;
  thread_.request_stop();
  thread_.join();
}

void PredicateLoop::run(std::stop_token st) {
  // Spin (yielding) while work keeps coming; after knobs.idle_spin without any, sleep on
  // the transport's wake-up source. The sleep slice starts short and doubles up to
  // knobs.sleep_slice, so a commit made soon after the loop dozed off (commits do not ring
  // the transport) waits tens of microseconds, while a long-idle loop wakes rarely.
  const auto& k = sst_->group().knobs;
  constexpr std::chrono::nanoseconds kFirstSlice = std::chrono::microseconds(50);
  auto& t = sst_->transport();
  std::optional<std::chrono::steady_clock::time_point> idle_since;
  std::chrono::nanoseconds slice = kFirstSlice;
  std::uint64_t sleeps = 0;
  while (!st.stop_requested()) {
    const std::uint64_t ticket = t.activity();
    if (run_once()) {
      idle_since.reset();
      slice = kFirstSlice;
      continue;
    }
    const auto now = std::chrono::steady_clock::now();
    if (!idle_since) idle_since = now;
    if (now - *idle_since < k.idle_spin) {
      std::this_thread::yield();
      continue;
    }
    ++sleeps;
    t.wait(ticket, std::min<std::chrono::nanoseconds>(slice, k.sleep_slice));
    slice = std::min<std::chrono::nanoseconds>(slice * 2, k.sleep_slice);
  }
  stats_.sleeps = sleeps;
}

}  // namespace spindle::sst
