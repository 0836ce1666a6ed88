// spindle::detail::EntityDelegate: the shared state behind every dds::core::Entity
// reference (participant, topic, publisher, writer, subscriber, reader). It owns what
// every entity has — its instance handle, enabled/closed flags, its StatusBook and its one
// StatusCondition — and the entity layer derives its own delegates from it, overriding
// enable()/close()/retain() to do the entity-specific work (and calling the base).
//
// Ownership: created with std::make_shared (the StatusCondition refers back to it
// weakly); owns its StatusConditionDelegate, so the condition lives as long as the entity
// or the last StatusCondition reference, whichever is longer.
//
// Not part of the DDS API. Threading: every member may be called from any thread.
// cond_mu_ is a leaf lock held only to create the status condition.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>

#include <dds/core/InstanceHandle.hpp>
#include <dds/core/status/State.hpp>
#include <spindle/detail/condition_delegate.hpp>
#include <spindle/detail/status_book.hpp>
#include <spindle/detail/thread_annotations.hpp>

namespace spindle::detail {

class EntityDelegate : public std::enable_shared_from_this<EntityDelegate> {
 public:
  explicit EntityDelegate(dds::core::InstanceHandle handle, bool enabled = true);
  EntityDelegate(const EntityDelegate&) = delete;
  EntityDelegate& operator=(const EntityDelegate&) = delete;
  virtual ~EntityDelegate();

  // Throws AlreadyClosedError once closed. Derived classes call the base first.
  virtual void enable();
  // Idempotent. After close() every operation but close() throws AlreadyClosedError.
  virtual void close();
  // For the entity layer, right after creation: the factory's EntityFactory does not
  // autoenable, so the entity starts disabled until enable().
  void start_disabled() noexcept { enabled_.store(false, std::memory_order_release); }
  // PSM retain(): keep the entity alive without references. The base does nothing; the
  // owner of entity lifetimes (the participant) overrides it.
  virtual void retain();

  // A thread waiting for this entity's conditions (a WaitSet) runs the protocol's steps
  // meanwhile, so that a delivery needs no other thread (docs/user-guide.md, "Performance"):
  // true once done(arg) held; false when it stopped for another reason (the deadline,
  // the idle spin without work, another thread stepping) or the entity has no protocol
  // to run. The caller then sleeps as before. The base: false at once.
  virtual bool drive(std::chrono::steady_clock::time_point deadline, bool (*done)(const void*),
                     const void* arg);

  [[nodiscard]] bool is_enabled() const noexcept {
    return enabled_.load(std::memory_order_acquire);
  }
  [[nodiscard]] bool is_closed() const noexcept { return closed_.load(std::memory_order_acquire); }
  // Throws dds::core::AlreadyClosedError when closed.
  void check_open() const;

  [[nodiscard]] dds::core::InstanceHandle instance_handle() const;
  [[nodiscard]] dds::core::status::StatusMask status_changes() const;

  [[nodiscard]] StatusBook& statuses() const noexcept { return *book_; }
  [[nodiscard]] const std::shared_ptr<StatusBook>& status_book() const noexcept { return book_; }
  // The entity's one StatusCondition, created on first use.
  [[nodiscard]] std::shared_ptr<StatusConditionDelegate> status_condition()
      SPINDLE_EXCLUDES(cond_mu_);

 private:
  const dds::core::InstanceHandle handle_;
  std::atomic<bool> enabled_;
  std::atomic<bool> closed_{false};
  std::shared_ptr<StatusBook> book_;
  Mutex cond_mu_;
  std::shared_ptr<StatusConditionDelegate> status_condition_ SPINDLE_GUARDED_BY(cond_mu_);
};

}  // namespace spindle::detail
