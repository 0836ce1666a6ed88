// dds::core::policy::QosPolicyCount: how many times a policy was found incompatible, as
// reported by the offered/requested incompatible-QoS statuses (DDS-PSM-Cxx §7.5.2).
// Policy ids are the DDS specification's QosPolicyId values (RELIABILITY = 11, ...);
// policy_id<P>::value gives them per policy class (CorePolicy.hpp).
//
// Threading: a value type.
#pragma once

#include <cstdint>
#include <vector>

namespace dds::core::policy {

using QosPolicyId = std::uint32_t;

class QosPolicyCount {
 public:
  constexpr QosPolicyCount() = default;
  constexpr QosPolicyCount(QosPolicyId policy_id, std::int32_t count) noexcept
      : id_(policy_id), count_(count) {}
  [[nodiscard]] constexpr QosPolicyId policy_id() const noexcept { return id_; }
  [[nodiscard]] constexpr std::int32_t count() const noexcept { return count_; }
  friend constexpr bool operator==(const QosPolicyCount&, const QosPolicyCount&) = default;

 private:
  QosPolicyId id_ = 0;
  std::int32_t count_ = 0;
};

using QosPolicyCountSeq = std::vector<QosPolicyCount>;

}  // namespace dds::core::policy
