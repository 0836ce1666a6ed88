// WaitSetDelegate and the out-of-line parts of dds::core::cond::WaitSet.
#include "dcps/waitset_delegate.hpp"

#include <algorithm>
#include <chrono>
#include <iterator>
#include <utility>

#include <dds/core/Exception.hpp>
#include <dds/core/cond/WaitSet.hpp>

namespace spindle::dcps {

using detail::MutexLock;

WaitSetDelegate::~WaitSetDelegate() {
  std::vector<ConditionPtr> conds;
  {
    MutexLock attach(attach_mu_);
    {
      MutexLock lock(mu_);
      conds.swap(conditions_);
    }
    for (const auto& c : conds)
      c->detach_waitset(this);
  }
  // `conds` is released here, with no lock held.
}

bool WaitSetDelegate::attach(const ConditionPtr& cond) {
  MutexLock attach(attach_mu_);
  {
    MutexLock lock(mu_);
    if (std::find(conditions_.begin(), conditions_.end(), cond) != conditions_.end()) return false;
  }
  cond->attach_waitset(this);
  {
    MutexLock lock(mu_);
    conditions_.push_back(cond);
    ++generation_;  // a waiter re-evaluates: the new condition may be true already
  }
  cv_.notify_all();
  return true;
}

bool WaitSetDelegate::detach(const ConditionPtr& cond) {
  ConditionPtr dropped;
  {
    MutexLock attach(attach_mu_);
    {
      MutexLock lock(mu_);
      auto it = std::find(conditions_.begin(), conditions_.end(), cond);
      if (it == conditions_.end()) return false;
      dropped = std::move(*it);
      conditions_.erase(it);
    }
    cond->detach_waitset(this);
  }
  return true;
}

std::vector<WaitSetDelegate::ConditionPtr> WaitSetDelegate::conditions() {
  drop_closed();
  MutexLock lock(mu_);
  return conditions_;
}

void WaitSetDelegate::drop_closed() {
  std::vector<ConditionPtr> closed;
  {
    MutexLock attach(attach_mu_);
    {
      MutexLock lock(mu_);
      const auto is_closed = [](const ConditionPtr& c) { return c->is_closed(); };
      std::copy_if(conditions_.begin(), conditions_.end(), std::back_inserter(closed), is_closed);
      std::erase_if(conditions_, is_closed);
    }
    for (const auto& c : closed)
      c->detach_waitset(this);
  }
  // `closed` is released here, with no lock held.
}

void WaitSetDelegate::collect_triggered(std::vector<ConditionPtr>& out) const {
  for (const auto& c : conditions_) {
    if (c->trigger_value()) out.push_back(c);
  }
}

void WaitSetDelegate::wait(const dds::core::Duration& timeout,
                           std::vector<ConditionPtr>& triggered) {
  triggered.clear();
  const bool forever = timeout.is_infinite();
  const auto deadline = forever ? std::chrono::steady_clock::time_point::max()
                                : std::chrono::steady_clock::now() + timeout.to_chrono();
  drop_closed();
  MutexLock lock(mu_);
  if (waiting_) {
    throw dds::core::PreconditionNotMetError(
        "dds::core::cond::WaitSet::wait: another thread is already waiting on this WaitSet");
  }
  waiting_ = true;
  struct Done {
    bool* flag;
    ~Done() { *flag = false; }
  } done{&waiting_};
  bool drove = false;  // at most one drive per change: after it, sleep until the next
  for (;;) {
    collect_triggered(triggered);
    if (!triggered.empty()) return;
    const std::uint64_t seen = generation_.load();
    if (!drove) {
      drove = true;
      std::shared_ptr<spindle::detail::EntityDelegate> source;
      for (const auto& c : conditions_) {
        if ((source = c->source())) break;
      }
      if (source) {
        mu_.unlock();
        struct Moved {
          const std::atomic<std::uint64_t>* generation;
          std::uint64_t seen;
        } moved_since{&generation_, seen};
        const bool moved = source->drive(
            deadline,
            [](const void* a) {
              const auto* m = static_cast<const Moved*>(a);
              return m->generation->load(std::memory_order_acquire) != m->seen;
            },
            &moved_since);
        source.reset();  // no lock held: the entity's last reference may go here
        mu_.lock();
        if (moved) {
          drove = false;
          continue;
        }
        if (generation_.load() != seen) continue;
      }
    }
    // cv_ releases and re-acquires mu_ itself; MutexLock still owns it on return.
    const auto moved = [&]()
                           SPINDLE_NO_THREAD_SAFETY_ANALYSIS { return generation_.load() != seen; };
    if (forever) {
      cv_.wait(mu_, moved);
    } else if (!cv_.wait_until(mu_, deadline, moved)) {
      collect_triggered(triggered);  // a last look: the deadline and a trigger may coincide
      return;
    }
  }
}

void WaitSetDelegate::wake() {
  {
    MutexLock lock(mu_);
    ++generation_;
  }
  cv_.notify_all();
}

}  // namespace spindle::dcps

namespace dds::core::cond {

WaitSet::WaitSet() : Reference(std::make_shared<delegate_type>()) {}

WaitSet::ConditionSeq WaitSet::wait(const dds::core::Duration& timeout) {
  ConditionSeq triggered;
  wait(triggered, timeout);
  return triggered;
}

WaitSet::ConditionSeq WaitSet::wait() {
  return wait(dds::core::Duration::infinite());
}

WaitSet::ConditionSeq& WaitSet::wait(ConditionSeq& triggered, const dds::core::Duration& timeout) {
  // Cleared before waiting: dropping the caller's references must not happen under a lock.
  triggered.clear();
  // The delegate's list, one per thread and kept between waits: a waiter that reuses
  // `triggered` allocates nothing per wait (docs/user-guide.md, "Performance").
  thread_local std::vector<delegate_type::ConditionPtr> conds;
  checked().wait(timeout, conds);
  if (conds.empty()) throw TimeoutError("dds::core::cond::WaitSet::wait: timed out");
  triggered.reserve(conds.size());
  for (auto& c : conds)
    triggered.emplace_back(std::move(c));
  conds.clear();  // no reference kept past the wait
  return triggered;
}

WaitSet::ConditionSeq& WaitSet::wait(ConditionSeq& triggered) {
  return wait(triggered, dds::core::Duration::infinite());
}

void WaitSet::dispatch() {
  dispatch(dds::core::Duration::infinite());
}

void WaitSet::dispatch(const dds::core::Duration& timeout) {
  for (auto& c : wait(timeout))
    c.dispatch();
}

WaitSet& WaitSet::attach_condition(const Condition& cond) {
  if (cond.is_nil()) throw NullReferenceError("dds::core::cond::WaitSet: null condition");
  checked().attach(cond.delegate());
  return *this;
}

bool WaitSet::detach_condition(const Condition& cond) {
  if (cond.is_nil()) return false;
  return checked().detach(cond.delegate());
}

WaitSet::ConditionSeq WaitSet::conditions() const {
  ConditionSeq out;
  conditions(out);
  return out;
}

WaitSet::ConditionSeq& WaitSet::conditions(ConditionSeq& conds) const {
  conds.clear();
  for (auto& c : checked().conditions())
    conds.emplace_back(std::move(c));
  return conds;
}

}  // namespace dds::core::cond
