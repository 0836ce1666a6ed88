// The simulator's Runtime (see sim_runtime.hpp).
#include "group/sim_runtime.hpp"

#include <utility>

#include "sst/predicate_loop.hpp"
#include "sst/sst.hpp"

namespace spindle::group {

namespace {
TimePoint at(transport::sim::Duration d) {
  return TimePoint(std::chrono::duration_cast<TimePoint::duration>(d));
}
}  // namespace

// ------------------------------------------------------------------------ SimExecutor

void SimExecutor::post(Job job) {
  if (stopping_) return;
  jobs_.push_back(std::move(job));
  armed_(TimePoint{});  // as soon as possible
}

Executor::TimerId SimExecutor::schedule(TimePoint when, Job job) {
  if (stopping_) return 0;
  const TimerId id = next_++;
  timers_.emplace(when, std::pair{id, std::move(job)});
  armed_(timers_.begin()->first);
  return id;
}

bool SimExecutor::cancel(TimerId id) {
  for (auto it = timers_.begin(); it != timers_.end(); ++it) {
    if (it->second.first == id) {
      timers_.erase(it);
      return true;
    }
  }
  return false;
}

void SimExecutor::run(Job& job) {
  running_ = true;
  run_job(job);
  running_ = false;
}

bool SimExecutor::run_jobs() {
  bool ran = false;
  while (!jobs_.empty()) {
    Job job = std::move(jobs_.front());
    jobs_.pop_front();
    run(job);
    ran = true;
  }
  return ran;
}

bool SimExecutor::run_due(TimePoint now) {
  if (running_) return false;  // a job waiting on the network: no re-entry
  bool ran = run_jobs();
  while (!stopping_ && !timers_.empty() && timers_.begin()->first <= now) {
    Job job = std::move(timers_.begin()->second.second);
    timers_.erase(timers_.begin());
    run(job);
    ran = run_jobs() || true;
  }
  if (!timers_.empty()) armed_(timers_.begin()->first);
  return ran;
}

void SimExecutor::drain() {
  if (running_) return;
  (void)run_jobs();
}

void SimExecutor::stop() {
  if (!running_) (void)run_jobs();
  stopping_ = true;
  timers_.clear();
}

// ------------------------------------------------------------------------- SimRuntime

SimRuntime::SimRuntime(transport::sim::Network& net, transport::NodeId node)
    : net_(&net),
      node_(node),
      executor_([this](TimePoint when) { arm(when); }),
      control_([this](TimePoint when) { arm(when); }) {
  net_->set_actor(node_, [this] { return step(); });
}

void SimRuntime::arm(TimePoint when) {
  net_->wake_at(node_,
                std::chrono::duration_cast<transport::sim::Duration>(when.time_since_epoch()));
}

SimRuntime::~SimRuntime() {
  net_->set_actor(node_, {});
}

TimePoint SimRuntime::now() const noexcept {
  return at(net_->now());
}

std::int64_t SimRuntime::wall_ns() const noexcept {
  return kEpochNs + net_->now().count();
}

void SimRuntime::start(sst::PredicateLoop& loop) {
  loop_ = &loop;
  // An actor sleeps between steps until something reaches its node: a local commit must
  // ring the node's wake-up source, as it does while a real loop dozes.
  loop.sst().set_dozing(true);
  net_->node(node_).notify();  // run it: peers may have sent already
}

void SimRuntime::stop() {
  loop_ = nullptr;
}

bool SimRuntime::step() {
  bool worked = false;
  if (loop_ != nullptr) {
    in_loop_ = true;
    worked = loop_->run_once();
    in_loop_ = false;
  }
  if (control_.run_due(now())) worked = true;
  if (executor_.run_due(now())) worked = true;
  return worked;
}

bool SimRuntime::wait_until(TimePoint deadline, const std::function<bool()>& done) {
  // Jobs posted by the waiting application thread itself run as the node's next step.
  net_->node(node_).notify();
  while (!done()) {
    if (now() >= deadline || !net_->step()) return done();
  }
  return true;
}

ProcessState SimRuntime::process_state(const Member& m) {
  const std::uint32_t host = net_->host_of(node_);
  if (host == 0 || net_->host_of(m.id) != host) return ProcessState::unknown;
  return net_->crashed(m.id) ? ProcessState::exited : ProcessState::alive;
}

}  // namespace spindle::group
