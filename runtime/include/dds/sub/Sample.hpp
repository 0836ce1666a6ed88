// dds::sub::Sample<T>: one sample as returned by a read/take — its data and its
// SampleInfo (DDS-PSM-Cxx §7.5.4). The data is shared, immutable and owned by a
// std::shared_ptr (the reader deserializes each received sample once and every read of it
// shares that object), so a Sample is cheap to copy.
//
// Threading: a value type; the shared data is immutable and safe to read from any thread.
#pragma once

#include <memory>
#include <utility>

#include <dds/sub/SampleInfo.hpp>

namespace dds::sub {

template <typename T>
class Sample {
 public:
  using DataType = T;

  // A default-constructed T with a default SampleInfo.
  Sample() : data_(std::make_shared<const T>()) {}
  Sample(const T& data, const SampleInfo& info)
      : data_(std::make_shared<const T>(data)), info_(info) {}
  // Spindle: shares `data` (never null) instead of copying it.
  Sample(std::shared_ptr<const T> data, const SampleInfo& info)
      : data_(std::move(data)), info_(info) {}

  [[nodiscard]] const T& data() const noexcept { return *data_; }
  void data(const T& d) { data_ = std::make_shared<const T>(d); }
  [[nodiscard]] const SampleInfo& info() const noexcept { return info_; }
  void info(const SampleInfo& i) { info_ = i; }
  // `sample->data()`, as iterators of LoanedSamples allow `it->data()`.
  [[nodiscard]] const Sample* operator->() const noexcept { return this; }
  // Spindle: the shared data object, e.g. to keep a sample past the LoanedSamples.
  [[nodiscard]] const std::shared_ptr<const T>& shared_data() const noexcept { return data_; }

 private:
  std::shared_ptr<const T> data_;
  SampleInfo info_;
};

}  // namespace dds::sub
