// Zero-copy receive of messages larger than a slot (large_pins.hpp).
#include "group/large_pins.hpp"

#include <algorithm>

#include "rdmc/rdmc.hpp"

namespace spindle::group {

namespace {
// A sender may run this many messages past one held before readers are asked to let go.
constexpr std::uint64_t kReliefAfter = rdmc::kHeaders - rdmc::kHeaders / 4;
}  // namespace

LargePins::Held::~Held() {
  {
    std::lock_guard lock(shared->mu);
    shared->released.push_back(key);
  }
  shared->any.store(true, std::memory_order_release);
  if (shared->wake) shared->wake();
}

void LargePins::set_owner(const std::weak_ptr<void>& owner, std::function<void()> wake) {
  owner_ = owner;
  shared_->wake = std::move(wake);
}

void LargePins::offer(const Message& m, Key key, std::shared_ptr<const void> bytes) {
  offered_.push_back(Offered{m.subgroup, m.sender_rank, m.index, key, std::move(bytes), nullptr});
  if (!offered_.back().bytes) {
    auto& n = newest_[key.first];
    n = std::max(n, key.second);
  }
}

std::shared_ptr<const void> LargePins::pin(const Message& m) {
  const auto it = std::ranges::find_if(offered_, [&](const Offered& o) {
    return o.subgroup == m.subgroup && o.sender_rank == m.sender_rank && o.index == m.index;
  });
  if (it == offered_.end()) return nullptr;
  if (it->bytes) return it->bytes;
  if (!it->held) {
    auto owner = owner_.lock();
    if (!owner) return nullptr;
    it->held = std::make_shared<Held>(shared_, std::move(owner), it->key);
  }
  return it->held;
}

std::vector<LargePins::Key> LargePins::settle() {
  std::vector<Key> free_now;
  for (auto& o : offered_) {
    if (o.bytes) continue;
    if (o.held) {
      pinned_.emplace(o.key, o.subgroup);
      o.held.reset();  // its last hold may end here: take_released() has it then
    } else {
      free_now.push_back(o.key);
    }
  }
  offered_.clear();
  return free_now;
}

std::vector<LargePins::Key> LargePins::take_released() {
  if (!shared_->any.exchange(false, std::memory_order_acquire)) return {};
  std::vector<Key> out;
  {
    std::lock_guard lock(shared_->mu);
    out.swap(shared_->released);
  }
  for (const auto& k : out)
    pinned_.erase(k);
  return out;
}

std::vector<std::uint32_t> LargePins::relief() {
  std::vector<std::uint32_t> out;
  for (auto it = pinned_.begin(); it != pinned_.end();) {
    const auto [group, oldest] = it->first;
    const auto newest = newest_.find(group);
    if (newest != newest_.end() && newest->second >= oldest + kReliefAfter) {
      const auto [r, fresh] = relieved_for_.try_emplace(group, oldest);
      if (fresh || r->second != oldest) {
        r->second = oldest;
        if (std::ranges::find(out, it->second) == out.end()) out.push_back(it->second);
      }
    }
    it = pinned_.lower_bound({group + 1, 0});  // the next group's oldest
  }
  return out;
}

}  // namespace spindle::group
