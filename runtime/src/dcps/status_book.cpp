// StatusBook: event recording and the reset-on-read rule for every status.
#include <spindle/detail/status_book.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <tuple>
#include <type_traits>

namespace spindle::detail {

namespace st = dds::core::status;
using st::StatusMask;

namespace {

// The StatusMask bit of each status class, in the order of StatusBook::Statuses.
constexpr std::array<std::uint32_t, 11> kBits{
    StatusMask::kInconsistentTopic,        StatusMask::kSampleLost,
    StatusMask::kSampleRejected,           StatusMask::kLivelinessLost,
    StatusMask::kLivelinessChanged,        StatusMask::kOfferedDeadlineMissed,
    StatusMask::kRequestedDeadlineMissed,  StatusMask::kOfferedIncompatibleQos,
    StatusMask::kRequestedIncompatibleQos, StatusMask::kPublicationMatched,
    StatusMask::kSubscriptionMatched};

// Position of S in the tuple type Tuple.
template <class S, class Tuple>
struct index_in;
template <class S, class... Ts>
struct index_in<S, std::tuple<S, Ts...>> : std::integral_constant<std::size_t, 0> {};
template <class S, class T, class... Ts>
struct index_in<S, std::tuple<T, Ts...>>
    : std::integral_constant<std::size_t, 1 + index_in<S, std::tuple<Ts...>>::value> {};

}  // namespace

StatusMask StatusBook::status_changes() const {
  MutexLock lock(mu_);
  return StatusMask(changes_);
}

void StatusBook::set_changes(const StatusMask& mask) {
  const auto bits = static_cast<std::uint32_t>(mask.to_ulong());
  bool raised = false;
  {
    MutexLock lock(mu_);
    raised = (changes_ & bits) != bits;
    changes_ |= bits;
  }
  if (raised) observers_.notify();
}

void StatusBook::clear_changes(const StatusMask& mask) {
  MutexLock lock(mu_);
  changes_ &= ~static_cast<std::uint32_t>(mask.to_ulong());
}

template <class S, class Mutate>
S StatusBook::record(bool consume, Mutate&& mutate) {
  constexpr std::uint32_t bit = kBits[index_in<S, Statuses>::value];
  S out;
  bool raised = false;
  {
    MutexLock lock(mu_);
    S& s = std::get<S>(statuses_);
    mutate(s);
    out = s;
    if (consume) {
      s.reset_changes();
      changes_ &= ~bit;
    } else {
      raised = (changes_ & bit) == 0;
      changes_ |= bit;
    }
  }
  // Only a newly raised flag can turn a StatusCondition's trigger from false to true.
  if (raised) observers_.notify();
  return out;
}

template <class S>
S StatusBook::read() {
  static_assert(std::tuple_size_v<Statuses> == kBits.size());
  MutexLock lock(mu_);
  S& s = std::get<S>(statuses_);
  S out = s;
  s.reset_changes();
  changes_ &= ~kBits[index_in<S, Statuses>::value];
  return out;
}

template <class S>
S StatusBook::peek() const {
  MutexLock lock(mu_);
  return std::get<S>(statuses_);
}

st::InconsistentTopicStatus StatusBook::inconsistent_topic(bool consume) {
  return record<st::InconsistentTopicStatus>(consume, [](auto& s) { s.count(1); });
}

st::SampleLostStatus StatusBook::sample_lost(std::int32_t count, bool consume) {
  return record<st::SampleLostStatus>(consume, [count](auto& s) { s.count(count); });
}

st::SampleRejectedStatus StatusBook::sample_rejected(const st::SampleRejectedState& reason,
                                                     dds::core::InstanceHandle instance,
                                                     bool consume) {
  return record<st::SampleRejectedStatus>(consume, [&](auto& s) {
    s.count(1);
    s.last_reason_ = reason;
    s.last_instance_ = instance;
  });
}

st::LivelinessLostStatus StatusBook::liveliness_lost(bool consume) {
  return record<st::LivelinessLostStatus>(consume, [](auto& s) { s.count(1); });
}

st::LivelinessChangedStatus StatusBook::liveliness_changed(std::int32_t alive_delta,
                                                           std::int32_t not_alive_delta,
                                                           dds::core::InstanceHandle publication,
                                                           bool consume) {
  return record<st::LivelinessChangedStatus>(consume, [&](auto& s) {
    s.alive_ += alive_delta;
    s.alive_change_ += alive_delta;
    s.not_alive_ += not_alive_delta;
    s.not_alive_change_ += not_alive_delta;
    s.last_publication_ = publication;
  });
}

namespace {

void count_policies(dds::core::policy::QosPolicyCountSeq& seq,
                    std::span<const dds::core::policy::QosPolicyId> policies) {
  for (auto id : policies) {
    auto it =
        std::find_if(seq.begin(), seq.end(), [id](const auto& c) { return c.policy_id() == id; });
    if (it == seq.end()) {
      seq.emplace_back(id, 1);
    } else {
      *it = dds::core::policy::QosPolicyCount(id, it->count() + 1);
    }
  }
}

}  // namespace

template <class S>
S StatusBook::deadline_missed(dds::core::InstanceHandle instance, bool consume) {
  return record<S>(consume, [&](auto& s) {
    s.count(1);
    s.last_instance_ = instance;
  });
}

template <class S>
S StatusBook::incompatible_qos(std::span<const dds::core::policy::QosPolicyId> policies,
                               bool consume) {
  return record<S>(consume, [&](auto& s) {
    s.count(1);
    if (!policies.empty()) s.last_policy_ = policies.front();
    count_policies(s.policies_, policies);
  });
}

template <class S>
S StatusBook::matched(std::int32_t current_delta, dds::core::InstanceHandle peer, bool consume) {
  return record<S>(consume, [&](auto& s) {
    if (current_delta > 0) s.count(current_delta);
    s.current_ += current_delta;
    s.current_change_ += current_delta;
    s.last_peer_ = peer;
  });
}

st::OfferedDeadlineMissedStatus StatusBook::offered_deadline_missed(
    dds::core::InstanceHandle instance, bool consume) {
  return deadline_missed<st::OfferedDeadlineMissedStatus>(instance, consume);
}

st::RequestedDeadlineMissedStatus StatusBook::requested_deadline_missed(
    dds::core::InstanceHandle instance, bool consume) {
  return deadline_missed<st::RequestedDeadlineMissedStatus>(instance, consume);
}

st::OfferedIncompatibleQosStatus StatusBook::offered_incompatible_qos(
    std::span<const dds::core::policy::QosPolicyId> policies, bool consume) {
  return incompatible_qos<st::OfferedIncompatibleQosStatus>(policies, consume);
}

st::RequestedIncompatibleQosStatus StatusBook::requested_incompatible_qos(
    std::span<const dds::core::policy::QosPolicyId> policies, bool consume) {
  return incompatible_qos<st::RequestedIncompatibleQosStatus>(policies, consume);
}

st::PublicationMatchedStatus StatusBook::publication_matched(std::int32_t current_delta,
                                                             dds::core::InstanceHandle subscription,
                                                             bool consume) {
  return matched<st::PublicationMatchedStatus>(current_delta, subscription, consume);
}

st::SubscriptionMatchedStatus StatusBook::subscription_matched(
    std::int32_t current_delta, dds::core::InstanceHandle publication, bool consume) {
  return matched<st::SubscriptionMatchedStatus>(current_delta, publication, consume);
}

#define SPINDLE_STATUS_BOOK_INSTANTIATE(S) \
  template S StatusBook::read<S>();        \
  template S StatusBook::peek<S>() const;
SPINDLE_STATUS_BOOK_INSTANTIATE(st::InconsistentTopicStatus)
SPINDLE_STATUS_BOOK_INSTANTIATE(st::SampleLostStatus)
SPINDLE_STATUS_BOOK_INSTANTIATE(st::SampleRejectedStatus)
SPINDLE_STATUS_BOOK_INSTANTIATE(st::LivelinessLostStatus)
SPINDLE_STATUS_BOOK_INSTANTIATE(st::LivelinessChangedStatus)
SPINDLE_STATUS_BOOK_INSTANTIATE(st::OfferedDeadlineMissedStatus)
SPINDLE_STATUS_BOOK_INSTANTIATE(st::RequestedDeadlineMissedStatus)
SPINDLE_STATUS_BOOK_INSTANTIATE(st::OfferedIncompatibleQosStatus)
SPINDLE_STATUS_BOOK_INSTANTIATE(st::RequestedIncompatibleQosStatus)
SPINDLE_STATUS_BOOK_INSTANTIATE(st::PublicationMatchedStatus)
SPINDLE_STATUS_BOOK_INSTANTIATE(st::SubscriptionMatchedStatus)
#undef SPINDLE_STATUS_BOOK_INSTANTIATE

}  // namespace spindle::detail
