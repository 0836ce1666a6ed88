// dds::sub::DataReader<T>: receives the samples of a topic (DDS-PSM-Cxx §7.5.5). Samples of
// matched writers are deserialized once, on delivery, into the reader's history cache
// (keyed instances, sample/view/instance states; HISTORY, RESOURCE_LIMITS, OWNERSHIP,
// DESTINATION_ORDER, TIME_BASED_FILTER, LIFESPAN, READER_DATA_LIFECYCLE). read() and take()
// return LoanedSamples<T> that share the cached objects (no copy of T);
//   reader.select().state(DataState::new_data()).instance(h).max_samples(10).take()
//   reader >> dds::sub::take >> dds::sub::max_samples(10) >> samples;
// narrow a read or take (content(query) and condition(qc) by content too);
// read(iterator)/take(iterator) copy Samples out instead. A reader made on a
// ContentFilteredTopic keeps only the data samples that pass its filter.
//
// Threading: every operation may be called from any thread, concurrently with deliveries.
#pragma once

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>

#include <dds/core/InstanceHandle.hpp>
#include <dds/core/status/State.hpp>
#include <dds/sub/AnyDataReader.hpp>
#include <dds/sub/DataReaderListener.hpp>
#include <dds/sub/LoanedSamples.hpp>
#include <dds/sub/Query.hpp>
#include <dds/sub/Subscriber.hpp>
#include <dds/sub/cond/QueryCondition.hpp>
#include <dds/sub/cond/ReadCondition.hpp>
#include <dds/sub/status/DataState.hpp>
#include <dds/topic/ContentFilteredTopic.hpp>
#include <dds/topic/Topic.hpp>
#include <dds/topic/TopicDescription.hpp>
#include <dds/topic/TopicInstance.hpp>
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
      : AnyDataReader(
            sub.core().create_reader(topic.core_ptr(), q, hook_factory(listener), mask, nullptr)) {}
  DataReader(const Subscriber& sub, const dds::topic::ContentFilteredTopic<T>& topic)
      : DataReader(sub, topic, sub.default_datareader_qos()) {}
  DataReader(const Subscriber& sub, const dds::topic::ContentFilteredTopic<T>& topic,
             const qos::DataReaderQos& q, DataReaderListener<T>* listener = nullptr,
             const dds::core::status::StatusMask& mask = dds::core::status::StatusMask::all())
      : AnyDataReader(sub.core().create_reader(topic.filtered().topic(), q, hook_factory(listener),
                                               mask, topic.filtered_ptr())) {}
  explicit DataReader(std::shared_ptr<Core> core) : AnyDataReader(std::move(core)) {}
  // The reader `e` refers to; IllegalOperationError if it is not a reader of T. Implicit, as
  // the specification's references convert (`Publisher p = entity;`, `p = entity;`).
  DataReader(const dds::core::Entity& e)  // NOLINT(google-explicit-constructor)
      : AnyDataReader(checked_downcast<Core>(e, "DataReader",
                                             spindle::detail::type_support<T>().type_name)) {}
  // `DataReader<T> r = condition.data_reader();` — the same check.
  DataReader(const AnyDataReader& r)  // NOLINT(google-explicit-constructor)
      : DataReader(static_cast<const dds::core::Entity&>(r)) {}

  // What a read or take selects; build it with reader.select().
  class Selector {
   public:
    explicit Selector(const DataReader& reader) : reader_(reader) {
      sel_.state = reader.core().default_state();
    }
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
    // Only the valid samples that pass `query`, in its ORDER BY order when it has one.
    Selector& content(const dds::sub::Query& query) {
      const auto f = query.spindle_filter();
      sel_.content = [f](const void* data) { return data != nullptr && f->matches(data); };
      order_ = f;
      return *this;
    }
    // The states of `rc`, and its query when it is a QueryCondition.
    Selector& condition(const dds::sub::cond::ReadCondition& rc) {
      sel_.state = rc.state_filter();
      sel_.content = static_cast<spindle::detail::ReadConditionDelegate&>(*rc.delegate()).content();
      order_.reset();
      return *this;
    }
    Selector& condition(const dds::sub::cond::QueryCondition& qc) {
      sel_.state = qc.state_filter();
      return content(qc.query());
    }
    [[nodiscard]] LoanedSamples<T> read() { return reader_.run(sel_, false, order_.get()); }
    [[nodiscard]] LoanedSamples<T> take() { return reader_.run(sel_, true, order_.get()); }
    template <typename SamplesFWIterator>
    std::uint32_t read(SamplesFWIterator sfit, std::uint32_t max_samples) {
      return copy(this->max_samples(max_samples).read(), sfit);
    }
    template <typename SamplesFWIterator>
    std::uint32_t take(SamplesFWIterator sfit, std::uint32_t max_samples) {
      return copy(this->max_samples(max_samples).take(), sfit);
    }
    template <typename SamplesBIIterator>
    std::uint32_t read(SamplesBIIterator sbit) {
      return copy(read(), sbit);
    }
    template <typename SamplesBIIterator>
    std::uint32_t take(SamplesBIIterator sbit) {
      return copy(take(), sbit);
    }

   private:
    DataReader reader_;
    typename Core::Selection sel_;
    std::shared_ptr<spindle::detail::ContentFilterCore> order_;
  };

  // The stream form of a Selector (DDS-PSM-Cxx §7.5.5.2.4):
  //   reader >> dds::sub::take >> dds::sub::max_samples(10) >> samples;
  // reads unless told take; `>> samples` runs it.
  class ManipulatorSelector {
   public:
    explicit ManipulatorSelector(const DataReader& reader) : selector_(reader) {}
    [[nodiscard]] bool read_mode() const noexcept { return read_; }
    void read_mode(bool read) noexcept { read_ = read; }
    ManipulatorSelector& max_samples(std::uint32_t n) {
      selector_.max_samples(n);
      return *this;
    }
    ManipulatorSelector& instance(const dds::core::InstanceHandle& h) {
      selector_.instance(h);
      return *this;
    }
    ManipulatorSelector& next_instance(const dds::core::InstanceHandle& h) {
      selector_.next_instance(h);
      return *this;
    }
    ManipulatorSelector& state(const status::DataState& s) {
      selector_.state(s);
      return *this;
    }
    ManipulatorSelector& content(const dds::sub::Query& query) {
      selector_.content(query);
      return *this;
    }
    ManipulatorSelector& operator>>(LoanedSamples<T>& samples) {
      samples = read_ ? selector_.read() : selector_.take();
      return *this;
    }
    ManipulatorSelector& operator>>(ManipulatorSelector& (*manipulator)(ManipulatorSelector&)) {
      return manipulator(*this);
    }
    template <typename Functor>
    requires std::invocable<Functor&, ManipulatorSelector&> ManipulatorSelector
    operator>>(Functor f) {
      f(*this);
      return *this;
    }

   private:
    Selector selector_;
    bool read_ = true;
  };

  ManipulatorSelector operator>>(LoanedSamples<T>& samples) {
    ManipulatorSelector s(*this);
    s >> samples;
    return s;
  }
  ManipulatorSelector operator>>(ManipulatorSelector& (*manipulator)(ManipulatorSelector&)) {
    ManipulatorSelector s(*this);
    manipulator(s);
    return s;
  }
  template <typename Functor>
  requires std::invocable<Functor&, ManipulatorSelector&> ManipulatorSelector
  operator>>(Functor f) {
    ManipulatorSelector s(*this);
    f(s);
    return s;
  }

  [[nodiscard]] Selector select() { return Selector(*this); }
  [[nodiscard]] LoanedSamples<T> read() { return select().read(); }
  [[nodiscard]] LoanedSamples<T> take() { return select().take(); }

  // The states read() and take() select when not told otherwise (any, to begin with).
  [[nodiscard]] status::DataState default_filter_state() const { return core().default_state(); }
  DataReader& default_filter_state(const status::DataState& state) {
    core().default_state(state);
    return *this;
  }

  // The PSM's copying forms: up to `max_samples` Samples into [sfit, ...), or every sample
  // through a back-insert iterator (`reader.take(std::back_inserter(vec))`). Each Sample
  // shares its data with the reader's cache, as in LoanedSamples. Return how many.
  template <typename SamplesFWIterator>
  std::uint32_t read(SamplesFWIterator sfit, std::uint32_t max_samples) {
    return select().read(sfit, max_samples);
  }
  template <typename SamplesFWIterator>
  std::uint32_t take(SamplesFWIterator sfit, std::uint32_t max_samples) {
    return select().take(sfit, max_samples);
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
  // The same as a TopicInstance (handle and key fields), as the specification has it.
  [[nodiscard]] dds::topic::TopicInstance<T> key_value(const dds::core::InstanceHandle& h) {
    dds::topic::TopicInstance<T> i(h);
    key_value(i.sample(), h);
    return i;
  }

  [[nodiscard]] dds::topic::Topic<T> topic() const { return dds::topic::Topic<T>(core().topic()); }
  // The Topic, or the ContentFilteredTopic, the reader was made on.
  [[nodiscard]] dds::topic::TopicDescription topic_description() const {
    return dds::topic::TopicDescription(core().description());
  }
  DataReader& operator<<(const qos::DataReaderQos& q) {
    qos(q);
    return *this;
  }
  const DataReader& operator>>(qos::DataReaderQos& q) const {
    q = qos();
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
  LoanedSamples<T> run(const typename Core::Selection& sel, bool take,
                       const spindle::detail::ContentFilterCore* order = nullptr) const {
    LoanedSamples<T> out;
    spindle::detail::LoanedSamplesSink<T> sink(out);
    if (take) {
      core().take(sel, sink);
    } else {
      core().read(sel, sink);
    }
    if (order != nullptr && order->ordered()) {
      sink.sort([order](const T& a, const T& b) { return order->before(&a, &b); });
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

template <typename T>
DataReader<T> AnyDataReader::get() const {
  if (is_nil()) return DataReader<T>(dds::core::null);
  if (core().type().type_name != spindle::detail::type_support<T>().type_name) {
    throw dds::core::InvalidDowncastError("AnyDataReader::get: the reader's type is '" +
                                          std::string(core().type().type_name) + "'");
  }
  return DataReader<T>(core_ptr());
}

// The manipulators of DataReader::ManipulatorSelector (DDS-PSM-Cxx §7.5.5.2.4).
template <typename SELECTOR>
SELECTOR& read(SELECTOR& selector) {
  selector.read_mode(true);
  return selector;
}
template <typename SELECTOR>
SELECTOR& take(SELECTOR& selector) {
  selector.read_mode(false);
  return selector;
}

namespace functors {
struct MaxSamplesManipulatorFunctor {
  std::uint32_t n;
  template <typename S>
  void operator()(S& s) const {
    s.max_samples(n);
  }
};
struct ContentFilterManipulatorFunctor {
  Query query;
  template <typename S>
  void operator()(S& s) const {
    s.content(query);
  }
};
struct StateFilterManipulatorFunctor {
  status::DataState state;
  template <typename S>
  void operator()(S& s) const {
    s.state(state);
  }
};
struct InstanceManipulatorFunctor {
  dds::core::InstanceHandle handle;
  template <typename S>
  void operator()(S& s) const {
    s.instance(handle);
  }
};
struct NextInstanceManipulatorFunctor {
  dds::core::InstanceHandle handle;
  template <typename S>
  void operator()(S& s) const {
    s.next_instance(handle);
  }
};
}  // namespace functors

inline functors::MaxSamplesManipulatorFunctor max_samples(std::uint32_t n) {
  return {n};
}
inline functors::ContentFilterManipulatorFunctor content(const Query& query) {
  return {query};
}
inline functors::StateFilterManipulatorFunctor state(const status::DataState& s) {
  return {s};
}
inline functors::InstanceManipulatorFunctor instance(const dds::core::InstanceHandle& h) {
  return {h};
}
inline functors::NextInstanceManipulatorFunctor next_instance(const dds::core::InstanceHandle& h) {
  return {h};
}

}  // namespace dds::sub
