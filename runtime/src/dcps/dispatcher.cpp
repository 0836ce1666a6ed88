// The listener and timer thread (see dispatcher.hpp).
#include "dcps/dispatcher.hpp"

#include <exception>
#include <iostream>
#include <utility>

namespace spindle::dcps {

Dispatcher::Dispatcher() : thread_([this] { run(); }) {}

Dispatcher::~Dispatcher() {
  stop();
}

void Dispatcher::post(Job job) {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    jobs_.push_back(std::move(job));
  }
  cv_.notify_one();
}

Dispatcher::TimerId Dispatcher::schedule(Clock::time_point when, Job job) {
  TimerId id = 0;
  {
    std::lock_guard lock(mu_);
    if (stopping_) return 0;
    id = next_timer_++;
    timers_.emplace(when, std::pair{id, std::move(job)});
    timer_at_.emplace(id, when);
  }
  cv_.notify_one();
  return id;
}

bool Dispatcher::cancel(TimerId id) {
  std::lock_guard lock(mu_);
  auto at = timer_at_.find(id);
  if (at == timer_at_.end()) return false;
  auto [first, last] = timers_.equal_range(at->second);
  for (auto it = first; it != last; ++it) {
    if (it->second.first == id) {
      timers_.erase(it);
      break;
    }
  }
  timer_at_.erase(at);
  return true;
}

void Dispatcher::stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_ && !thread_.joinable()) return;
    stopping_ = true;
  }
  cv_.notify_one();
  if (thread_.joinable() && std::this_thread::get_id() != thread_.get_id()) thread_.join();
}

bool Dispatcher::on_dispatcher_thread() const noexcept {
  return std::this_thread::get_id() == thread_.get_id();
}

void Dispatcher::run() {
  std::unique_lock lock(mu_);
  for (;;) {
    Job job;
    if (!jobs_.empty()) {
      job = std::move(jobs_.front());
      jobs_.pop_front();
    } else if (!timers_.empty() && timers_.begin()->first <= Clock::now()) {
      auto it = timers_.begin();
      job = std::move(it->second.second);
      timer_at_.erase(it->second.first);
      timers_.erase(it);
    } else if (stopping_) {
      return;
    } else if (!timers_.empty()) {
      cv_.wait_until(lock, timers_.begin()->first);
      continue;
    } else {
      cv_.wait(lock);
      continue;
    }
    lock.unlock();
    try {
      job();
    } catch (const std::exception& e) {
      // A listener that throws must not take the participant down; say so and go on.
      std::cerr << "spindle: a listener threw: " << e.what() << '\n';
    } catch (...) {
      std::cerr << "spindle: a listener threw a non-standard exception\n";
    }
    lock.lock();
  }
}

}  // namespace spindle::dcps
