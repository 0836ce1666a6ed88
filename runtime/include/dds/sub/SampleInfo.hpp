// dds::sub::SampleInfo: what a reader knows about one returned sample besides its data
// (DDS-PSM-Cxx §7.5.4, DCPS §2.2.2.5.5): the writer's source timestamp, the sample/view/
// instance states, generation counts and ranks, whether the data is valid (an invalid
// sample only reports an instance state change, e.g. a dispose), the instance and the
// writer.
//
// The runtime fills a SampleInfo with the full constructor; applications only read it.
// Threading: a value type.
#pragma once

#include <dds/core/InstanceHandle.hpp>
#include <dds/core/Time.hpp>
#include <dds/sub/GenerationCount.hpp>
#include <dds/sub/Rank.hpp>
#include <dds/sub/status/DataState.hpp>

namespace dds::sub {

class SampleInfo {
 public:
  SampleInfo() = default;
  SampleInfo(const dds::core::Time& source_timestamp, const dds::core::Time& reception_timestamp,
             const dds::sub::status::DataState& state, const GenerationCount& generation_count,
             const Rank& rank, bool valid, dds::core::InstanceHandle instance_handle,
             dds::core::InstanceHandle publication_handle)
      : source_timestamp_(source_timestamp),
        reception_timestamp_(reception_timestamp),
        state_(state),
        generation_count_(generation_count),
        rank_(rank),
        instance_handle_(instance_handle),
        publication_handle_(publication_handle),
        valid_(valid) {}

  // The writer's source timestamp.
  [[nodiscard]] const dds::core::Time& timestamp() const noexcept { return source_timestamp_; }
  // Spindle extension: when this reader's cache received the sample.
  [[nodiscard]] const dds::core::Time& reception_timestamp() const noexcept {
    return reception_timestamp_;
  }
  [[nodiscard]] const dds::sub::status::DataState& state() const noexcept { return state_; }
  [[nodiscard]] const GenerationCount& generation_count() const noexcept {
    return generation_count_;
  }
  [[nodiscard]] const Rank& rank() const noexcept { return rank_; }
  // False for a sample that carries no data, only the instance's new state.
  [[nodiscard]] bool valid() const noexcept { return valid_; }
  [[nodiscard]] dds::core::InstanceHandle instance_handle() const noexcept {
    return instance_handle_;
  }
  // The writer that wrote (or disposed/unregistered) the sample.
  [[nodiscard]] dds::core::InstanceHandle publication_handle() const noexcept {
    return publication_handle_;
  }

 private:
  dds::core::Time source_timestamp_ = dds::core::Time::invalid();
  dds::core::Time reception_timestamp_ = dds::core::Time::invalid();
  dds::sub::status::DataState state_;
  GenerationCount generation_count_;
  Rank rank_;
  dds::core::InstanceHandle instance_handle_;
  dds::core::InstanceHandle publication_handle_;
  bool valid_ = false;
};

}  // namespace dds::sub
