// spindle::dcps::WaitSetDelegate: the shared state behind dds::core::cond::WaitSet — the
// attached conditions and the condition variable a waiting thread sleeps on.
//
// How a wait works: under mu_, evaluate every attached condition's trigger; if none is
// true, sleep on cv_ until generation_ moves. A condition whose source changed and whose
// trigger is now true calls wake(), which bumps generation_ under mu_ — so a change that
// lands between the evaluation and the sleep is never lost — and notifies cv_.
// Before it sleeps, the waiter runs the protocol of the first attached condition's entity
// itself, without mu_ (EntityDelegate::drive), until generation_ moves: a sample that
// arrives then is delivered, and its trigger seen, on the waiting thread, with no
// wake-up. Once the drive stops for another reason (its idle spin passed without work,
// another thread steps), the waiter sleeps on cv_ as above until the next change.
//
// Threading: any thread may attach, detach, list and wake; one thread at a time may
// wait. Lock order: attach_mu_ -> ConditionDelegate::waitsets_mu_ -> mu_ -> source locks
// (full order in spindle/detail/condition_delegate.hpp). Condition references are dropped
// only with no lock held.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <vector>

#include <dds/core/Duration.hpp>
#include <spindle/detail/condition_delegate.hpp>
#include <spindle/detail/entity_delegate.hpp>
#include <spindle/detail/thread_annotations.hpp>

namespace spindle::dcps {

class WaitSetDelegate {
 public:
  using ConditionPtr = std::shared_ptr<spindle::detail::ConditionDelegate>;

  WaitSetDelegate() = default;
  ~WaitSetDelegate();
  WaitSetDelegate(const WaitSetDelegate&) = delete;
  WaitSetDelegate& operator=(const WaitSetDelegate&) = delete;

  // False if already attached.
  bool attach(const ConditionPtr& cond) SPINDLE_EXCLUDES(attach_mu_, mu_);
  // False if not attached.
  bool detach(const ConditionPtr& cond) SPINDLE_EXCLUDES(attach_mu_, mu_);
  // The attached conditions (closed ones are dropped first).
  [[nodiscard]] std::vector<ConditionPtr> conditions() SPINDLE_EXCLUDES(attach_mu_, mu_);

  // The attached conditions whose trigger is true, waiting up to `timeout` for one, into
  // `out` (cleared first; its capacity is kept, so a waiter that reuses it allocates
  // nothing); empty on timeout. Throws PreconditionNotMetError if another thread is waiting.
  void wait(const dds::core::Duration& timeout, std::vector<ConditionPtr>& out)
      SPINDLE_EXCLUDES(mu_);

  // Called by an attached condition whose trigger became true.
  void wake() SPINDLE_EXCLUDES(mu_);

 private:
  void collect_triggered(std::vector<ConditionPtr>& out) const SPINDLE_REQUIRES(mu_);
  // Detaches the conditions whose entity was closed (ConditionDelegate::close).
  void drop_closed() SPINDLE_EXCLUDES(attach_mu_, mu_);

  detail::Mutex attach_mu_;
  mutable detail::Mutex mu_;
  std::condition_variable_any cv_;
  std::vector<ConditionPtr> conditions_ SPINDLE_GUARDED_BY(mu_);
  // Written under mu_; read without it by a driving waiter (atomic).
  std::atomic<std::uint64_t> generation_{0};
  bool waiting_ SPINDLE_GUARDED_BY(mu_) = false;
};

}  // namespace spindle::dcps
