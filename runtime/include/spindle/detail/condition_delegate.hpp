// The shared state behind the PSM condition classes (dds::core::cond::Condition and its
// subclasses are reference types over these). A condition has a trigger value computed
// from its source — a flag (GuardCondition), an entity's status book (StatusCondition), a
// reader's history cache (ReadCondition) — a handler run by dispatch(), and the WaitSets
// it is attached to. When a source changes it calls source_changed() on the conditions
// observing it (through a ConditionObservers list); a condition whose trigger is then
// true wakes every WaitSet it is attached to. That is the only wake-up path: no polling.
//
// Not part of the DDS API: the runtime and the typed entity templates use it.
//
// Threading: every member function may be called from any thread. Handlers run on the
// thread that calls dispatch(), with no lock held.
// Lock order (outermost first; never take an earlier lock while holding a later one):
//   WaitSetDelegate::attach_mu_
//   ConditionObservers::mu_            (a source notifying its conditions)
//   ConditionDelegate::waitsets_mu_    (a condition waking its WaitSets)
//   WaitSetDelegate::mu_               (a WaitSet evaluating triggers / being woken)
//   source locks: HistoryCache::mu_, StatusBook::mu_   (leaves: held only to compute)
// ConditionDelegate::handler_mu_ is a leaf held only to copy or swap the handler.
// Consequence for owners: the last reference to a ReadCondition or StatusCondition must
// not be dropped while holding a WaitSet or condition lock (its destructor takes
// ConditionObservers::mu_); WaitSetDelegate releases condition references unlocked.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include <dds/core/status/State.hpp>
#include <dds/sub/status/DataState.hpp>
#include <spindle/detail/thread_annotations.hpp>

namespace spindle::dcps {
class HistoryCache;
class WaitSetDelegate;
}  // namespace spindle::dcps

namespace spindle::detail {

class StatusBook;
class EntityDelegate;

class ConditionDelegate : public std::enable_shared_from_this<ConditionDelegate> {
 public:
  // Called by dispatch() with the condition itself; the typed condition classes wrap the
  // application's functor so that it receives the typed condition.
  using Handler = std::function<void(ConditionDelegate&)>;

  ConditionDelegate() = default;
  ConditionDelegate(const ConditionDelegate&) = delete;
  ConditionDelegate& operator=(const ConditionDelegate&) = delete;
  virtual ~ConditionDelegate();

  [[nodiscard]] virtual bool trigger_value() const = 0;
  // The entity whose protocol makes the trigger change (EntityDelegate::drive); null for
  // a GuardCondition, or once the entity is gone.
  [[nodiscard]] virtual std::shared_ptr<EntityDelegate> source() const { return nullptr; }

  void set_handler(Handler handler) SPINDLE_EXCLUDES(handler_mu_);
  void reset_handler() SPINDLE_EXCLUDES(handler_mu_);
  [[nodiscard]] bool has_handler() const SPINDLE_EXCLUDES(handler_mu_);
  // Runs the handler, if one is set and the trigger is true, on this thread. Exceptions
  // from it propagate.
  void dispatch() SPINDLE_EXCLUDES(handler_mu_);

  // The condition's entity was closed: it never triggers again, and the WaitSets it is
  // attached to drop it (they are woken to do so; conditions() no longer lists it).
  void close() SPINDLE_EXCLUDES(waitsets_mu_);
  [[nodiscard]] bool is_closed() const noexcept { return closed_.load(std::memory_order_acquire); }

  // The source changed: if the trigger is now true, wake the attached WaitSets.
  void source_changed() SPINDLE_EXCLUDES(waitsets_mu_);

  // For WaitSetDelegate only. Idempotent.
  void attach_waitset(spindle::dcps::WaitSetDelegate* ws) SPINDLE_EXCLUDES(waitsets_mu_);
  void detach_waitset(spindle::dcps::WaitSetDelegate* ws) SPINDLE_EXCLUDES(waitsets_mu_);

 private:
  mutable Mutex handler_mu_;
  Handler handler_ SPINDLE_GUARDED_BY(handler_mu_);
  Mutex waitsets_mu_;
  std::vector<spindle::dcps::WaitSetDelegate*> waitsets_ SPINDLE_GUARDED_BY(waitsets_mu_);
  std::atomic<bool> closed_{false};
};

// The conditions that watch one source (a history cache, a status book). Non-owning: a
// condition adds itself on construction and removes itself in its destructor; notify()
// holds the list's lock while calling, so a condition is never called after it removed
// itself.
class ConditionObservers {
 public:
  void add(ConditionDelegate* c) SPINDLE_EXCLUDES(mu_);
  void remove(ConditionDelegate* c) SPINDLE_EXCLUDES(mu_);
  // Calls source_changed() on each observer. Call with no source lock held.
  void notify() SPINDLE_EXCLUDES(mu_);
  // Closes each observer (ConditionDelegate::close): its source's entity was closed.
  void close_all() SPINDLE_EXCLUDES(mu_);
  [[nodiscard]] bool empty() const noexcept { return size_.load(std::memory_order_acquire) == 0; }

 private:
  Mutex mu_;
  std::vector<ConditionDelegate*> list_ SPINDLE_GUARDED_BY(mu_);
  std::atomic<std::size_t> size_{0};
};

// GuardCondition: the application sets the trigger.
class GuardConditionDelegate final : public ConditionDelegate {
 public:
  [[nodiscard]] bool trigger_value() const override {
    return trigger_.load(std::memory_order_acquire);
  }
  void set_trigger_value(bool value);

 private:
  std::atomic<bool> trigger_{false};
};

// StatusCondition: true while the entity has a changed status among the enabled ones.
// One per entity (EntityDelegate::status_condition()). Holds the entity weakly — the
// entity owns its status condition.
class StatusConditionDelegate final : public ConditionDelegate {
 public:
  StatusConditionDelegate(std::shared_ptr<StatusBook> book, std::weak_ptr<EntityDelegate> entity);
  ~StatusConditionDelegate() override;
  StatusConditionDelegate(const StatusConditionDelegate&) = delete;
  StatusConditionDelegate& operator=(const StatusConditionDelegate&) = delete;

  [[nodiscard]] bool trigger_value() const override;
  [[nodiscard]] dds::core::status::StatusMask enabled_statuses() const;
  void enabled_statuses(const dds::core::status::StatusMask& mask);
  // Null once the entity is gone.
  [[nodiscard]] std::shared_ptr<EntityDelegate> entity() const { return entity_.lock(); }
  [[nodiscard]] std::shared_ptr<EntityDelegate> source() const override { return entity(); }

 private:
  std::shared_ptr<StatusBook> book_;
  std::weak_ptr<EntityDelegate> entity_;
  std::atomic<std::uint32_t> enabled_{dds::core::status::StatusMask::kAll};
};

// ReadCondition: true while the reader's history cache holds a sample whose states match
// the mask. Keeps the cache alive; keeps the reader (an opaque owner token) alive too, so
// that data_reader() stays valid as long as the condition.
class ReadConditionDelegate final : public ConditionDelegate {
 public:
  // `content` (QueryCondition): only valid samples whose data passes it count; empty for
  // a plain ReadCondition.
  ReadConditionDelegate(std::shared_ptr<spindle::dcps::HistoryCache> cache,
                        const dds::sub::status::DataState& state,
                        std::shared_ptr<EntityDelegate> reader,
                        std::function<bool(const void*)> content = {});
  ~ReadConditionDelegate() override;
  ReadConditionDelegate(const ReadConditionDelegate&) = delete;
  ReadConditionDelegate& operator=(const ReadConditionDelegate&) = delete;

  [[nodiscard]] bool trigger_value() const override;
  [[nodiscard]] const dds::sub::status::DataState& state_filter() const noexcept { return state_; }
  [[nodiscard]] const std::shared_ptr<EntityDelegate>& reader() const noexcept { return reader_; }
  [[nodiscard]] std::shared_ptr<EntityDelegate> source() const override { return reader_; }
  [[nodiscard]] const std::shared_ptr<spindle::dcps::HistoryCache>& cache() const noexcept {
    return cache_;
  }
  [[nodiscard]] const std::function<bool(const void*)>& content() const noexcept {
    return content_;
  }

 private:
  std::shared_ptr<spindle::dcps::HistoryCache> cache_;
  dds::sub::status::DataState state_;
  std::shared_ptr<EntityDelegate> reader_;
  std::function<bool(const void*)> content_;
};

}  // namespace spindle::detail
