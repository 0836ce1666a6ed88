// dds::sub::SharedSamples<T>: LoanedSamples that copies share (DDS-PSM-Cxx §7.5.5): made
// from a LoanedSamples (which it takes over), it keeps the samples as long as any copy.
//
// Threading: copies may be used from different threads; one object from one at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>

#include <dds/sub/LoanedSamples.hpp>

namespace dds::sub {

template <typename T>
class SharedSamples {
 public:
  using DataType = T;
  using const_iterator = typename LoanedSamples<T>::const_iterator;
  using iterator = const_iterator;

  SharedSamples() : samples_(std::make_shared<LoanedSamples<T>>()) {}
  SharedSamples(LoanedSamples<T> ls)  // NOLINT(google-explicit-constructor)
      : samples_(std::make_shared<LoanedSamples<T>>(std::move(ls))) {}

  [[nodiscard]] const_iterator begin() const noexcept { return samples_->begin(); }
  [[nodiscard]] const_iterator end() const noexcept { return samples_->end(); }
  [[nodiscard]] std::uint32_t length() const noexcept { return samples_->length(); }

 private:
  std::shared_ptr<LoanedSamples<T>> samples_;
};

}  // namespace dds::sub
