// EntityDelegate: the state every entity shares (handle, enabled/closed, statuses, the
// one StatusCondition).
#include <spindle/detail/entity_delegate.hpp>

#include <utility>

#include <dds/core/Exception.hpp>

namespace spindle::detail {

EntityDelegate::EntityDelegate(dds::core::InstanceHandle handle, bool enabled)
    : handle_(handle), enabled_(enabled), book_(std::make_shared<StatusBook>()) {}

EntityDelegate::~EntityDelegate() {
  // A StatusCondition that outlives its entity never triggers again.
  std::shared_ptr<StatusConditionDelegate> cond;
  {
    MutexLock lock(cond_mu_);
    cond = status_condition_;
  }
  if (cond) cond->close();
}

bool EntityDelegate::drive(std::chrono::steady_clock::time_point /*deadline*/,
                           bool (* /*done*/)(const void*), const void* /*arg*/) {
  return false;
}

void EntityDelegate::enable() {
  check_open();
  enabled_.store(true, std::memory_order_release);
}

void EntityDelegate::close() {
  closed_.store(true, std::memory_order_release);
  std::shared_ptr<StatusConditionDelegate> cond;
  {
    MutexLock lock(cond_mu_);
    cond = status_condition_;
  }
  if (cond) cond->close();  // WaitSets drop the condition of a closed entity
}

void EntityDelegate::retain() {
  check_open();
}

void EntityDelegate::check_open() const {
  if (is_closed()) throw dds::core::AlreadyClosedError("dds::core::Entity: already closed");
}

dds::core::InstanceHandle EntityDelegate::instance_handle() const {
  check_open();
  return handle_;
}

dds::core::status::StatusMask EntityDelegate::status_changes() const {
  check_open();
  return book_->status_changes();
}

std::shared_ptr<StatusConditionDelegate> EntityDelegate::status_condition() {
  check_open();
  MutexLock lock(cond_mu_);
  if (!status_condition_) {
    status_condition_ = std::make_shared<StatusConditionDelegate>(book_, weak_from_this());
  }
  return status_condition_;
}

}  // namespace spindle::detail
