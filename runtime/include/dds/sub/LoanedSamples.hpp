// dds::sub::LoanedSamples<T>: the collection a read or take returns (DDS-PSM-Cxx §7.5.4):
// random-access const iterators over dds::sub::Sample<T>, so both
//   for (const auto& s : samples) use(s.data(), s.info());
// and `it->data()` work. It holds one vector of Samples whose data objects are shared
// with the reader's cache (no copy of T), so returning it by value costs a move; a copy
// shares the same data objects. dds::sub::move() is the PSM's explicit move.
//
// spindle::detail::LoanedSamplesSink<T> is how the runtime fills one from an untyped
// history-cache read (spindle/detail/sample_sink.hpp).
//
// Threading: a value type; distinct LoanedSamples may be used from distinct threads.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include <dds/sub/Sample.hpp>
#include <spindle/detail/sample_sink.hpp>

namespace spindle::detail {
template <typename T>
class LoanedSamplesSink;
}

namespace dds::sub {

template <typename T>
class LoanedSamples {
 public:
  using DataType = T;
  using value_type = Sample<T>;
  using const_iterator = typename std::vector<Sample<T>>::const_iterator;
  using iterator = const_iterator;

  LoanedSamples() = default;

  [[nodiscard]] const_iterator begin() const noexcept { return samples_.cbegin(); }
  [[nodiscard]] const_iterator end() const noexcept { return samples_.cend(); }
  [[nodiscard]] const_iterator cbegin() const noexcept { return samples_.cbegin(); }
  [[nodiscard]] const_iterator cend() const noexcept { return samples_.cend(); }
  [[nodiscard]] std::uint32_t length() const noexcept {
    return static_cast<std::uint32_t>(samples_.size());
  }
  [[nodiscard]] bool empty() const noexcept { return samples_.empty(); }
  [[nodiscard]] const Sample<T>& operator[](std::size_t i) const { return samples_[i]; }

 private:
  friend class spindle::detail::LoanedSamplesSink<T>;
  std::vector<Sample<T>> samples_;
};

// The PSM's explicit transfer of a loan: `auto mine = dds::sub::move(samples);`.
template <typename T>
LoanedSamples<T> move(LoanedSamples<T>& samples) noexcept {
  return std::move(samples);
}

}  // namespace dds::sub

namespace spindle::detail {

// Appends what a cache read/take pushes to a LoanedSamples<T>. The cache's untyped data
// pointers were made from std::shared_ptr<const T> by the typed reader, so the cast back is
// exact; an invalid sample without key data gets a default-constructed T.
template <typename T>
class LoanedSamplesSink final : public SampleSink {
 public:
  explicit LoanedSamplesSink(dds::sub::LoanedSamples<T>& out) : out_(&out) {}

  void reserve(std::size_t n) override { out_->samples_.reserve(out_->samples_.size() + n); }
  void push(std::shared_ptr<const void>&& data, const dds::sub::SampleInfo& info) override {
    std::shared_ptr<const T> typed =
        data ? std::static_pointer_cast<const T>(std::move(data)) : std::make_shared<const T>();
    out_->samples_.emplace_back(std::move(typed), info);
  }
  // Sorts the samples by their data (a query's ORDER BY); stable, so ties keep the cache's
  // order.
  template <typename Less>
  void sort(Less less) {
    std::stable_sort(out_->samples_.begin(), out_->samples_.end(),
                     [&](const auto& a, const auto& b) { return less(a.data(), b.data()); });
  }

 private:
  dds::sub::LoanedSamples<T>* out_;
};

}  // namespace spindle::detail
