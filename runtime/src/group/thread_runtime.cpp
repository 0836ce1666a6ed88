// Real clocks and threads (see thread_runtime.hpp).
#include "group/thread_runtime.hpp"

#include <algorithm>
#include <future>
#include <thread>
#include <utility>

#include "sst/predicate_loop.hpp"

namespace spindle::group {

using Clock = std::chrono::steady_clock;

ThreadExecutor::ThreadExecutor() : state_(std::make_shared<State>()) {
  thread_ = std::thread([s = state_] { run(s); });
}

ThreadExecutor::~ThreadExecutor() {
  stop();
}

void ThreadExecutor::post(Job job) {
  {
    std::lock_guard lock(state_->mu);
    if (state_->stopping) return;
    state_->jobs.push_back(std::move(job));
  }
  state_->cv.notify_one();
}

Executor::TimerId ThreadExecutor::schedule(TimePoint when, Job job) {
  TimerId id = 0;
  {
    std::lock_guard lock(state_->mu);
    if (state_->stopping) return 0;
    id = state_->next_timer++;
    state_->timers.emplace(when, std::pair{id, std::move(job)});
    state_->timer_at.emplace(id, when);
  }
  state_->cv.notify_one();
  return id;
}

bool ThreadExecutor::cancel(TimerId id) {
  std::lock_guard lock(state_->mu);
  auto at = state_->timer_at.find(id);
  if (at == state_->timer_at.end()) return false;
  auto [first, last] = state_->timers.equal_range(at->second);
  for (auto it = first; it != last; ++it) {
    if (it->second.first == id) {
      state_->timers.erase(it);
      break;
    }
  }
  state_->timer_at.erase(at);
  return true;
}

void ThreadExecutor::drain() {
  if (on_executor_thread()) return;
  std::promise<void> done;
  auto ran = done.get_future();
  {
    std::lock_guard lock(state_->mu);
    if (state_->stopping) return;
    state_->jobs.push_back([&done] { done.set_value(); });
  }
  state_->cv.notify_one();
  ran.wait();  // stop() runs queued jobs too, so this cannot wait forever
}

void ThreadExecutor::stop() {
  {
    std::lock_guard lock(state_->mu);
    state_->stopping = true;
  }
  state_->cv.notify_one();
  if (!thread_.joinable()) return;
  if (on_executor_thread()) {
    thread_.detach();  // called from a job: the thread ends after it, holding the state
  } else {
    thread_.join();
  }
}

bool ThreadExecutor::on_executor_thread() const noexcept {
  return std::this_thread::get_id() == thread_.get_id();
}

void ThreadExecutor::run(const std::shared_ptr<State>& state) {
  State& s = *state;
  std::unique_lock lock(s.mu);
  for (;;) {
    Job job;
    if (!s.jobs.empty()) {
      job = std::move(s.jobs.front());
      s.jobs.pop_front();
    } else if (s.stopping) {
      return;  // pending timers are dropped
    } else if (!s.timers.empty() && s.timers.begin()->first <= Clock::now()) {
      auto it = s.timers.begin();
      job = std::move(it->second.second);
      s.timer_at.erase(it->second.first);
      s.timers.erase(it);
    } else if (!s.timers.empty()) {
      // A copy: wait_until reads its deadline again after waking, and a cancel() meanwhile
      // may have erased the timer that held it.
      const TimePoint next = s.timers.begin()->first;
      s.cv.wait_until(lock, next);
      continue;
    } else {
      s.cv.wait(lock);
      continue;
    }
    lock.unlock();
    run_job(job);
    job = nullptr;  // destroy what it captured before taking the lock again
    lock.lock();
  }
}

// ------------------------------------------------------------------------ ThreadRuntime

ThreadRuntime::~ThreadRuntime() {
  control_.stop();
  stop();
  executor_.stop();
}

TimePoint ThreadRuntime::now() const noexcept {
  return Clock::now();
}

std::int64_t ThreadRuntime::wall_ns() const noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void ThreadRuntime::start(sst::PredicateLoop& loop) {
  loop.start();
  loop_.store(&loop);
}

void ThreadRuntime::stop() {
  auto* loop = loop_.exchange(nullptr);
  if (loop == nullptr) return;
  loop->stop_drivers();
  while (callers_.load() != 0)
    std::this_thread::yield();
  loop->stop();
}

bool ThreadRuntime::on_protocol_thread() const noexcept {
  const auto* loop = loop_.load();
  return loop != nullptr && loop->on_loop_thread();
}

namespace {
// Counts an application thread in ThreadRuntime::callers_ while it uses the loop.
struct Caller {
  explicit Caller(std::atomic<std::uint32_t>& n) noexcept : count(&n) { count->fetch_add(1); }
  ~Caller() { count->fetch_sub(1); }
  Caller(const Caller&) = delete;
  Caller& operator=(const Caller&) = delete;
  std::atomic<std::uint32_t>* count;
};
}  // namespace

bool ThreadRuntime::drive(TimePoint deadline, std::chrono::nanoseconds spin,
                          core::FunctionRef<bool()> done) {
  const Caller caller(callers_);
  auto* loop = loop_.load();
  return loop != nullptr && !loop->on_loop_thread() &&
         loop->drive(deadline, spin, done) == sst::Drive::done;
}

bool ThreadRuntime::try_run(const sst::PredicateLoop& loop, core::FunctionRef<void()> work) {
  const Caller caller(callers_);
  auto* running = loop_.load();
  return running == &loop && !running->on_loop_thread() && running->try_run(work);
}

bool ThreadRuntime::wait_until(TimePoint deadline, const std::function<bool()>& done) {
  return wait_in_slices(deadline, done);
}

bool wait_in_slices(TimePoint deadline, const std::function<bool()>& done) {
  // Short sleeps, growing: the protocol thread that makes `done` true needs the core on a
  // small machine, and a wait of seconds should not poll every 50 us.
  auto slice = std::chrono::microseconds(50);
  while (!done()) {
    const auto now = Clock::now();
    if (now >= deadline) return false;
    std::this_thread::sleep_for(std::min<Clock::duration>(slice, deadline - now));
    slice = std::min(slice * 2, std::chrono::microseconds(1000));
  }
  return true;
}

}  // namespace spindle::group
