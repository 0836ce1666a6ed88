// The predicate thread (see predicate_loop.hpp).
#include "sst/predicate_loop.hpp"

#include <spindle/transport/idle_waiter.hpp>

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
  const auto& k = sst_->group().knobs;
  transport::IdleWaiter waiter(sst_->transport(),
                               transport::IdlePolicy{k.idle_spin, k.sleep_slice});
  while (!st.stop_requested()) {
    // Pushes held back by `retry` are not work: transport activity rings when the peer's
    // queue drains, which ends the sleep.
    (void)waiter.step([this] { return run_once(); });
  }
  stats_.sleeps = waiter.sleeps();
}

}  // namespace spindle::sst
