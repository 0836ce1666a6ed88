// spindle::detail::SampleSink: where a reader history cache (spindle::dcps::HistoryCache)
// writes the samples a read or take selected. The cache is untyped — a sample is a
// std::shared_ptr<const void> to the object the typed DataReader<T> deserialized — and
// the sink is the typed side: LoanedSamplesSink<T> (LoanedSamples.hpp) turns each pushed
// sample into a dds::sub::Sample<T>.
//
// Not part of the DDS API. Threading: the cache calls reserve() and push() with its lock
// held, from the thread that called read/take; a sink must not call back into the cache,
// block, or run application code.
#pragma once

#include <cstddef>
#include <memory>

#include <dds/sub/SampleInfo.hpp>

namespace spindle::detail {

class SampleSink {
 public:
  // At most `n` more samples are coming.
  virtual void reserve(std::size_t n) = 0;
  // One sample, in the order of the returned collection. `data` is null only for an
  // invalid sample of an instance whose key data the cache never received.
  virtual void push(std::shared_ptr<const void>&& data, const dds::sub::SampleInfo& info) = 0;

 protected:
  SampleSink() = default;
  SampleSink(const SampleSink&) = default;
  SampleSink& operator=(const SampleSink&) = default;
  ~SampleSink() = default;
};

}  // namespace spindle::detail
