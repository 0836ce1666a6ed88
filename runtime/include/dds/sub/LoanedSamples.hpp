// dds::sub::LoanedSamples<T>: the collection a read or take returns (DDS-PSM-Cxx §7.5.4):
// random-access const iterators over dds::sub::Sample<T>, so both
//   for (const auto& s : samples) use(s.data(), s.info());
// and `it->data()` work. It holds one vector of Samples whose data objects are shared
// with the reader's cache (no copy of T), so returning it by value costs a move; a copy
// shares the same data objects. dds::sub::move() is the PSM's explicit move. The vector is
// recycled: a LoanedSamples that ends gives its (cleared) vector to a program-wide pool for
// T (spindle/detail/recycle.hpp), where the next take finds it, so a steady loop of takes
// allocates no vector.
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
#include <spindle/detail/recycle.hpp>
#include <spindle/detail/sample_sink.hpp>

namespace spindle::detail {
template <typename T>
class LoanedSamplesSink;
}

namespace dds::sub {

template <typename T>
class LoanedSamples {
  using Vector = std::vector<Sample<T>>;

 public:
  using DataType = T;
  using value_type = Sample<T>;
  using const_iterator = typename Vector::const_iterator;
  using iterator = const_iterator;

  LoanedSamples() = default;
  LoanedSamples(const LoanedSamples& other) {
    if (other.samples_) {
      samples_ = recycled();
      *samples_ = *other.samples_;
    }
  }
  LoanedSamples& operator=(const LoanedSamples& other) {
    if (this != &other) {
      LoanedSamples copy(other);
      std::swap(samples_, copy.samples_);
    }
    return *this;
  }
  LoanedSamples(LoanedSamples&&) noexcept = default;
  LoanedSamples& operator=(LoanedSamples&&) noexcept = default;
  ~LoanedSamples() = default;

  [[nodiscard]] const_iterator begin() const noexcept { return view().cbegin(); }
  [[nodiscard]] const_iterator end() const noexcept { return view().cend(); }
  [[nodiscard]] const_iterator cbegin() const noexcept { return begin(); }
  [[nodiscard]] const_iterator cend() const noexcept { return end(); }
  [[nodiscard]] std::uint32_t length() const noexcept {
    return static_cast<std::uint32_t>(view().size());
  }
  [[nodiscard]] bool empty() const noexcept { return length() == 0; }
  [[nodiscard]] const Sample<T>& operator[](std::size_t i) const { return view()[i]; }

 private:
  friend class spindle::detail::LoanedSamplesSink<T>;

  // Gives a vector back to the pool, emptied (its samples' references dropped here).
  struct Recycle {
    void operator()(Vector* v) const noexcept {
      v->clear();
      if (!pool().put(v)) delete v;
    }
  };
  using Owned = std::unique_ptr<Vector, Recycle>;
  struct PoolKey {};
  static auto& pool() noexcept { return spindle::detail::SlotPool<PoolKey, 8>::instance(); }
  // A vector from the pool (empty, with the capacity an earlier take gave it), or a new one.
  static Owned recycled() {
    if (void* v = pool().get()) return Owned(static_cast<Vector*>(v));
    return Owned(new Vector());
  }
  Vector& samples() {
    if (!samples_) samples_ = recycled();
    return *samples_;
  }
  // The samples, or one empty vector for all that hold none (made once, never freed).
  const Vector& view() const noexcept {
    static const Vector* const none = new Vector();
    return samples_ ? *samples_ : *none;
  }

  Owned samples_;
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

  void reserve(std::size_t n) override {
    auto& v = out_->samples();
    v.reserve(v.size() + n);
  }
  void push(std::shared_ptr<const void>&& data, const dds::sub::SampleInfo& info) override {
    std::shared_ptr<const T> typed =
        data ? std::static_pointer_cast<const T>(std::move(data)) : std::make_shared<const T>();
    out_->samples().emplace_back(std::move(typed), info);
  }
  // Sorts the samples by their data (a query's ORDER BY); stable, so ties keep the cache's
  // order.
  template <typename Less>
  void sort(Less less) {
    auto& v = out_->samples();
    std::stable_sort(v.begin(), v.end(),
                     [&](const auto& a, const auto& b) { return less(a.data(), b.data()); });
  }

 private:
  dds::sub::LoanedSamples<T>* out_;
};

}  // namespace spindle::detail
