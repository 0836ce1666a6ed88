// dds::sub::DataReader<T>: receives the samples of a topic (DDS-PSM-Cxx §7.5.5). Samples of
// matched writers are deserialized once, on delivery, into the reader's history cache
// (keyed instances, sample/view/instance states; HISTORY, RESOURCE_LIMITS, OWNERSHIP,
// DESTINATION_ORDER, TIME_BASED_FILTER, LIFESPAN, READER_DATA_LIFECYCLE). read() and take()
// return LoanedSamples<T> that share the cached objects (no copy of T);
//   reader.select().state(DataState::new_data()).instance(h).max_samples(10).take()
// narrows a read or take; read(iterator)/take(iterator) copy Samples out instead.
//
// Threading: every operation may be called from any thread, concurrently with deliveries.
#pragma once

#include <cstdint>
#include <memory>

#include <dds/core/InstanceHandle.hpp>
#include <dds/core/status/State.hpp>
#include <dds/sub/AnyDataReader.hpp>
#include <dds/sub/DataReaderListener.hpp>
#include <dds/sub/LoanedSamples.hpp>
#include <dds/sub/Subscriber.hpp>
#include <dds/sub/status/DataState.hpp>
#include <dds/topic/Topic.hpp>
#include <spindle/detail/dcps.hpp>
#include <spindle/detail/type_support.hpp>

namespace dds::sub {

template <typename T>
class DataReader : public AnyDataReader {
 public:
  using DataType = T;

  DataReader(const dds::core::null_type& n) : AnyDataReader(n) {}  // NOLINT
  DataReader(const Subscriber& sub, const dds::topic::Topic<T>& topic)
      : DataReader(sub, topic, sub.default_datareader_qos()) {}
  DataReader(const Subscriber& sub, const dds::topic::Topic<T>& topic, const qos::DataReaderQos& q,
             DataReaderListener<T>* listener = nullptr,
             const dds::core::status::StatusMask& mask = dds::core::status::StatusMask::all())
      : AnyDataReader(sub.core().create_reader(topic.core_ptr(), q, hook_factory(listener), mask)) {
  }
  explicit DataReader(std::shared_ptr<Core> core) : AnyDataReader(std::move(core)) {}
  // The reader `e` refers to; InvalidDowncastError if it is not a reader of T.
  explicit DataReader(const dds::core::Entity& e)
      : AnyDataReader(checked_downcast<Core>(e, "DataReader",
                                             spindle::detail::type_support<T>().type_name)) {}

  // What a read or take selects; build it with reader.select().
  class Selector {
   public:
    explicit Selector(const DataReader& reader) : reader_(reader) {}
    Selector& state(const status::DataState& s) {
      sel_.state = s;
      return *this;
    }
    Selector& instance(const dds::core::InstanceHandle& h) {
      sel_.scope = Core::Scope::instance;
      sel_.instance = h;
      return *this;
    }
    Selector& next_instance(const dds::core::InstanceHandle& h) {
      sel_.scope = Core::Scope::next_instance;
      sel_.instance = h;
      return *this;
    }
    Selector& max_samples(std::uint32_t n) {
      sel_.max_samples = static_cast<std::int32_t>(n);
      return *this;
    }
    [[nodiscard]] LoanedSamples<T> read() { return reader_.run(sel_, false); }
    [[nodiscard]] LoanedSamples<T> take() { return reader_.run(sel_, true); }

   private:
    DataReader reader_;
    typename Core::Selection sel_;
  };

  [[nodiscard]] Selector select() { return Selector(*this); }
  [[nodiscard]] LoanedSamples<T> read() { return run({}, false); }
  [[nodiscard]] LoanedSamples<T> take() { return run({}, true); }

  // The PSM's copying forms: up to `max_samples` Samples into [sfit, ...), or every sample
  // through a back-insert iterator (`reader.take(std::back_inserter(vec))`). Each Sample
  // shares its data with the reader's cache, as in LoanedSamples. Return how many.
  template <typename SamplesFWIterator>
  std::uint32_t read(SamplesFWIterator sfit, std::uint32_t max_samples) {
    return copy(select().max_samples(max_samples).read(), sfit);
  }
  template <typename SamplesFWIterator>
  std::uint32_t take(SamplesFWIterator sfit, std::uint32_t max_samples) {
    return copy(select().max_samples(max_samples).take(), sfit);
  }
  template <typename SamplesBIIterator>
  std::uint32_t read(SamplesBIIterator sbit) {
    return copy(read(), sbit);
  }
  template <typename SamplesBIIterator>
  std::uint32_t take(SamplesBIIterator sbit) {
    return copy(take(), sbit);
  }

  [[nodiscard]] dds::core::InstanceHandle lookup_instance(const T& key) const {
    return core().lookup_instance(&key);
  }
  // The key fields of instance `h`, into `key`; InvalidArgumentError for an unknown handle.
  T& key_value(T& key, const dds::core::InstanceHandle& h) {
    auto data = core().key_value(h);
    if (!data) throw dds::core::InvalidArgumentError("DataReader::key_value: unknown instance");
    key = *std::static_pointer_cast<const T>(data);
    return key;
  }

  [[nodiscard]] dds::topic::Topic<T> topic() const { return dds::topic::Topic<T>(core().topic()); }
  [[nodiscard]] dds::topic::Topic<T> topic_description() const { return topic(); }
  DataReader& operator<<(const qos::DataReaderQos& q) {
    qos(q);
    return *this;
  }
  using AnyDataReader::qos;

  void listener(DataReaderListener<T>* l, const dds::core::status::StatusMask& mask) {
    if (l == nullptr) {
      core().listener(nullptr, mask);
      return;
    }
    core().listener(std::make_shared<Hook>(l, core_ptr()), mask);
  }
  [[nodiscard]] DataReaderListener<T>* listener() const {
    auto* h = dynamic_cast<Hook*>(core().listener().get());
    return h == nullptr ? nullptr : h->target();
  }

 private:
  static spindle::detail::ReaderHookFactory hook_factory(DataReaderListener<T>* l) {
    if (l == nullptr) return {};
    return [l](const std::shared_ptr<Core>& c) { return std::make_shared<Hook>(l, c); };
  }
  template <typename OutIterator>
  static std::uint32_t copy(const LoanedSamples<T>& samples, OutIterator out) {
    for (const auto& s : samples)
      *out++ = s;
    return samples.length();
  }
  LoanedSamples<T> run(const typename Core::Selection& sel, bool take) const {
    LoanedSamples<T> out;
    spindle::detail::LoanedSamplesSink<T> sink(out);
    if (take) {
      core().take(sel, sink);
    } else {
      core().read(sel, sink);
    }
    return out;
  }

  // The listener goes in before the reader is announced (spindle::detail::ReaderHookFactory).

  class Hook final : public spindle::detail::ReaderListenerHook {
   public:
    Hook(DataReaderListener<T>* l, const std::shared_ptr<Core>& c) : l_(l), core_(c) {}
    DataReaderListener<T>* target() const noexcept { return l_; }
    void on_requested_deadline_missed(
        const dds::core::status::RequestedDeadlineMissedStatus& s) override {
      with([&](DataReader<T>& r) { l_->on_requested_deadline_missed(r, s); });
    }
    void on_requested_incompatible_qos(
        const dds::core::status::RequestedIncompatibleQosStatus& s) override {
      with([&](DataReader<T>& r) { l_->on_requested_incompatible_qos(r, s); });
    }
    void on_sample_rejected(const dds::core::status::SampleRejectedStatus& s) override {
      with([&](DataReader<T>& r) { l_->on_sample_rejected(r, s); });
    }
    void on_liveliness_changed(const dds::core::status::LivelinessChangedStatus& s) override {
      with([&](DataReader<T>& r) { l_->on_liveliness_changed(r, s); });
    }
    void on_data_available() override {
      with([&](DataReader<T>& r) { l_->on_data_available(r); });
    }
    void on_subscription_matched(const dds::core::status::SubscriptionMatchedStatus& s) override {
      with([&](DataReader<T>& r) { l_->on_subscription_matched(r, s); });
    }
    void on_sample_lost(const dds::core::status::SampleLostStatus& s) override {
      with([&](DataReader<T>& r) { l_->on_sample_lost(r, s); });
    }

   private:
    template <class F>
    void with(F&& f) {
      if (auto c = core_.lock()) {
        DataReader<T> r(c);
        f(r);
      }
    }
    DataReaderListener<T>* l_;
    std::weak_ptr<Core> core_;
  };
};

}  // namespace dds::sub
