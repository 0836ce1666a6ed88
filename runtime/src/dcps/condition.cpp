// The condition delegates: ConditionDelegate (handler, WaitSet registry, wake-up),
// ConditionObservers, and the guard, status and read condition kinds.
#include <algorithm>
#include <utility>

#include <spindle/detail/condition_delegate.hpp>
#include <spindle/detail/entity_delegate.hpp>
#include <spindle/detail/status_book.hpp>

#include "dcps/history_cache.hpp"
#include "dcps/waitset_delegate.hpp"

namespace spindle::detail {

ConditionDelegate::~ConditionDelegate() = default;

void ConditionDelegate::set_handler(Handler handler) {
  Handler old;
  {
    MutexLock lock(handler_mu_);
    old = std::exchange(handler_, std::move(handler));
  }
  // `old` (and what it captured) is destroyed unlocked.
}

void ConditionDelegate::reset_handler() {
  set_handler(nullptr);
}

bool ConditionDelegate::has_handler() const {
  MutexLock lock(handler_mu_);
  return static_cast<bool>(handler_);
}

void ConditionDelegate::dispatch() {
  Handler h;
  {
    MutexLock lock(handler_mu_);
    h = handler_;
  }
  if (h && trigger_value()) h(*this);
}

void ConditionDelegate::close() {
  closed_.store(true, std::memory_order_release);
  MutexLock lock(waitsets_mu_);
  for (auto* ws : waitsets_)
    ws->wake();
}

void ConditionDelegate::source_changed() {
  if (!trigger_value()) return;
  MutexLock lock(waitsets_mu_);
  for (auto* ws : waitsets_)
    ws->wake();
}

void ConditionDelegate::attach_waitset(spindle::dcps::WaitSetDelegate* ws) {
  MutexLock lock(waitsets_mu_);
  if (std::find(waitsets_.begin(), waitsets_.end(), ws) == waitsets_.end()) {
    waitsets_.push_back(ws);
  }
}

void ConditionDelegate::detach_waitset(spindle::dcps::WaitSetDelegate* ws) {
  MutexLock lock(waitsets_mu_);
  std::erase(waitsets_, ws);
}

void ConditionObservers::add(ConditionDelegate* c) {
  MutexLock lock(mu_);
  list_.push_back(c);
  size_.store(list_.size(), std::memory_order_release);
}

void ConditionObservers::remove(ConditionDelegate* c) {
  MutexLock lock(mu_);
  std::erase(list_, c);
  size_.store(list_.size(), std::memory_order_release);
}

void ConditionObservers::notify() {
  if (empty()) return;
  MutexLock lock(mu_);
  for (auto* c : list_)
    c->source_changed();
}

void ConditionObservers::close_all() {
  MutexLock lock(mu_);
  for (auto* c : list_)
    c->close();
}

void GuardConditionDelegate::set_trigger_value(bool value) {
  trigger_.store(value, std::memory_order_release);
  if (value) source_changed();
}

StatusConditionDelegate::StatusConditionDelegate(std::shared_ptr<StatusBook> book,
                                                 std::weak_ptr<EntityDelegate> entity)
    : book_(std::move(book)), entity_(std::move(entity)) {
  book_->observers().add(this);
}

StatusConditionDelegate::~StatusConditionDelegate() {
  book_->observers().remove(this);
}

bool StatusConditionDelegate::trigger_value() const {
  if (is_closed()) return false;
  const auto enabled = dds::core::status::StatusMask(enabled_.load(std::memory_order_acquire));
  return book_->status_changes().intersects(enabled);
}

dds::core::status::StatusMask StatusConditionDelegate::enabled_statuses() const {
  return dds::core::status::StatusMask(enabled_.load(std::memory_order_acquire));
}

void StatusConditionDelegate::enabled_statuses(const dds::core::status::StatusMask& mask) {
  enabled_.store(static_cast<std::uint32_t>(mask.to_ulong()), std::memory_order_release);
  source_changed();  // a newly enabled status may already be pending
}

ReadConditionDelegate::ReadConditionDelegate(std::shared_ptr<spindle::dcps::HistoryCache> cache,
                                             const dds::sub::status::DataState& state,
                                             std::shared_ptr<EntityDelegate> reader,
                                             std::function<bool(const void*)> content)
    : cache_(std::move(cache)),
      state_(state),
      reader_(std::move(reader)),
      content_(std::move(content)) {
  cache_->observers().add(this);
}

ReadConditionDelegate::~ReadConditionDelegate() {
  cache_->observers().remove(this);
}

bool ReadConditionDelegate::trigger_value() const {
  if (is_closed()) return false;
  return content_ ? cache_->has_matching(state_, content_) : cache_->has_matching(state_);
}

}  // namespace spindle::detail
