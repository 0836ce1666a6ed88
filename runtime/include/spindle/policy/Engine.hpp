// spindle::policy::Engine: the Spindle vendor QoS policy with the multicast engine's knobs
// for a topic's subgroup (DESIGN §5, §6): the SMC ring (window_size slots of max_payload
// bytes per sender) and, for samples larger than a slot, RDMC's block size and algorithm.
// It goes into TopicQos, DataWriterQos and DataReaderQos with `<<`. A writer's values size
// its own sender ring; a reader's and a topic's are the defaults the entity layer starts
// from. It takes no part in request/offered matching.
//
// lag_bound (topics not retained, docs/dev/smc.md "Lagging members"): how long a reader's process
// may stop taking the writer's samples (paused, swapped out, busy) before the writer and
// the other readers go on without it; it then catches up, what it missed counted as
// SAMPLE_LOST, and holds again from the next view. Zero or infinite: never (the process
// holds the writer until it is suspected). A topic's subgroup takes the longest of its
// writers' bounds; a policy left at its defaults takes the domain file's engine.lag_bound.
//
// Memory per sender and subgroup is about window_size * max_payload bytes in every member's
// SST copy, so large windows of large slots are expensive; the limits below are those of
// the SMC implementation, and a ring may not exceed kMaxRingBytes.
//
// Threading: a value type.
#pragma once

#include <cstdint>
#include <string>

#include <dds/core/Duration.hpp>

#include <dds/core/SafeEnumeration.hpp>
#include <dds/core/policy/CorePolicy.hpp>

namespace spindle::policy {

struct RdmcAlgorithm_def {
  enum Type { SEQUENTIAL, CHAIN, BINOMIAL_TREE, BINOMIAL_PIPELINE };
};
using RdmcAlgorithm = dds::core::safe_enum<RdmcAlgorithm_def>;

class Engine {
 public:
  static constexpr std::uint32_t kMaxWindowSize = 65536;
  static constexpr std::uint32_t kMaxPayload = 1u << 20;
  static constexpr std::uint32_t kMinRdmcBlockSize = 1024;
  static constexpr std::uint32_t kMaxRdmcBlockSize = 64u << 20;
  // window_size * max_payload: the bytes of one sender's ring in every member's SST copy.
  static constexpr std::uint64_t kMaxRingBytes = 256u << 20;

  explicit Engine(std::uint32_t window_size = 100, std::uint32_t max_payload = 1024,
                  std::uint32_t rdmc_block_size = 1u << 20,
                  RdmcAlgorithm::Type rdmc_algorithm = RdmcAlgorithm::BINOMIAL_PIPELINE) noexcept
      : window_size_(window_size),
        max_payload_(max_payload),
        rdmc_block_size_(rdmc_block_size),
        rdmc_algorithm_(rdmc_algorithm) {}

  // Slots in each sender's ring: how many samples may be in flight before write() blocks.
  Engine& window_size(std::uint32_t n) noexcept {
    window_size_ = n;
    return *this;
  }
  // Bytes of serialized sample a slot holds; larger samples go by RDMC.
  Engine& max_payload(std::uint32_t bytes) noexcept {
    max_payload_ = bytes;
    return *this;
  }
  Engine& rdmc_block_size(std::uint32_t bytes) noexcept {
    rdmc_block_size_ = bytes;
    return *this;
  }
  Engine& rdmc_algorithm(RdmcAlgorithm::Type algorithm) noexcept {
    rdmc_algorithm_ = algorithm;
    return *this;
  }
  Engine& lag_bound(const dds::core::Duration& d) noexcept {
    lag_bound_ = d;
    return *this;
  }
  [[nodiscard]] std::uint32_t window_size() const noexcept { return window_size_; }
  [[nodiscard]] std::uint32_t max_payload() const noexcept { return max_payload_; }
  [[nodiscard]] std::uint32_t rdmc_block_size() const noexcept { return rdmc_block_size_; }
  [[nodiscard]] RdmcAlgorithm rdmc_algorithm() const noexcept { return rdmc_algorithm_; }
  [[nodiscard]] const dds::core::Duration& lag_bound() const noexcept { return lag_bound_; }
  friend bool operator==(const Engine&, const Engine&) = default;

 private:
  std::uint32_t window_size_;
  std::uint32_t max_payload_;
  std::uint32_t rdmc_block_size_;
  RdmcAlgorithm rdmc_algorithm_;
  dds::core::Duration lag_bound_ = dds::core::Duration::from_millisecs(100);
};

}  // namespace spindle::policy

namespace dds::core::policy {

SPINDLE_DDS_POLICY_TRAITS(spindle::policy::Engine, 0x8002, "Engine");

}  // namespace dds::core::policy
