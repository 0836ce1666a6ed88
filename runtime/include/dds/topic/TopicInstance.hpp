// dds::topic::TopicInstance<T>: a sample with the handle of its instance
// (DDS-PSM-Cxx §7.5.2), for DataWriter<T>::write(const TopicInstance<T>&).
//
// Threading: a value type; not shared.
#pragma once

#include <dds/core/InstanceHandle.hpp>

namespace dds::topic {

template <typename T>
class TopicInstance {
 public:
  TopicInstance() = default;
  explicit TopicInstance(const dds::core::InstanceHandle& h) : handle_(h) {}
  TopicInstance(const dds::core::InstanceHandle& h, const T& sample)
      : handle_(h), sample_(sample) {}

  operator T&() noexcept { return sample_; }              // NOLINT(google-explicit-constructor)
  operator const T&() const noexcept { return sample_; }  // NOLINT(google-explicit-constructor)

  [[nodiscard]] const dds::core::InstanceHandle& handle() const noexcept { return handle_; }
  void handle(const dds::core::InstanceHandle& h) noexcept { handle_ = h; }
  [[nodiscard]] const T& sample() const noexcept { return sample_; }
  [[nodiscard]] T& sample() noexcept { return sample_; }
  void sample(const T& s) { sample_ = s; }

 private:
  dds::core::InstanceHandle handle_;
  T sample_{};
};

}  // namespace dds::topic
