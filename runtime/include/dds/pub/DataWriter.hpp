// dds::pub::DataWriter<T>: publishes samples of T on a topic (DDS-PSM-Cxx §7.5.3). A write
// serializes the sample with idlc's generated CDR codec straight into an SMC ring slot of
// the topic's subgroup — no intermediate buffer — and returns; delivery to every matched
// reader of every member follows the topic's consistency level. A write blocks while the
// ring is full, up to reliability.max_blocking_time (then TimeoutError); a sample larger
// than a slot is refused with PreconditionNotMetError until RDMC lands.
//
// Threading: every operation may be called from any thread, concurrently (concurrent
// writes are ordered by the moment each reserved its slot).
#pragma once

#include <iterator>
#include <memory>
#include <new>
#include <utility>

#include <dds/core/InstanceHandle.hpp>
#include <dds/core/Time.hpp>
#include <dds/core/status/State.hpp>
#include <dds/pub/AnyDataWriter.hpp>
#include <dds/pub/DataWriterListener.hpp>
#include <dds/pub/Publisher.hpp>
#include <dds/topic/Topic.hpp>
#include <dds/topic/TopicInstance.hpp>
#include <spindle/detail/dcps.hpp>
#include <spindle/detail/type_support.hpp>

namespace dds::pub {

template <typename T>
class DataWriter : public AnyDataWriter {
 public:
  using DataType = T;

  DataWriter(const dds::core::null_type& n) : AnyDataWriter(n) {}  // NOLINT
  DataWriter(const Publisher& pub, const dds::topic::Topic<T>& topic)
      : DataWriter(pub, topic, pub.default_datawriter_qos()) {}
  DataWriter(const Publisher& pub, const dds::topic::Topic<T>& topic, const qos::DataWriterQos& q,
             DataWriterListener<T>* listener = nullptr,
             const dds::core::status::StatusMask& mask = dds::core::status::StatusMask::all())
      : AnyDataWriter(pub.core().create_writer(topic.core_ptr(), q, hook_factory(listener), mask)) {
  }
  explicit DataWriter(std::shared_ptr<Core> core) : AnyDataWriter(std::move(core)) {}
  // The writer `e` refers to; IllegalOperationError if it is not a writer of T. Implicit, as
  // the specification's references convert (`Publisher p = entity;`, `p = entity;`).
  DataWriter(const dds::core::Entity& e)  // NOLINT(google-explicit-constructor)
      : AnyDataWriter(checked_downcast<Core>(e, "DataWriter",
                                             spindle::detail::type_support<T>().type_name)) {}
  // `DataWriter<T> w = any_writer;` — the same check.
  DataWriter(const AnyDataWriter& w)  // NOLINT(google-explicit-constructor)
      : DataWriter(static_cast<const dds::core::Entity&>(w)) {}

  // --- writing ---------------------------------------------------------------------------
  void write(const T& sample) { write(sample, dds::core::Time::now()); }
  void write(const T& sample, const dds::core::Time& timestamp) {
    if constexpr (spindle::detail::is_self_contained<T>) {
      if (core().is_loan(&sample)) {
        core().write_loan(&sample, timestamp);
        return;
      }
    }
    core().write(&sample, timestamp, {});
  }
  void write(const T& sample, const dds::core::InstanceHandle& h) {
    core().write(&sample, dds::core::Time::now(), h);
  }
  void write(const T& sample, const dds::core::InstanceHandle& h,
             const dds::core::Time& timestamp) {
    core().write(&sample, timestamp, h);
  }
  void write(const dds::topic::TopicInstance<T>& i) { write(i.sample(), i.handle()); }
  void write(const dds::topic::TopicInstance<T>& i, const dds::core::Time& timestamp) {
    write(i.sample(), i.handle(), timestamp);
  }
  // Each sample of [begin, end) in turn (with `timestamp`, or each its own time).
  template <typename FWIterator>
  void write(const FWIterator& begin, const FWIterator& end) {
    for (auto it = begin; it != end; ++it)
      write(*it);
  }
  template <typename FWIterator>
  void write(const FWIterator& begin, const FWIterator& end, const dds::core::Time& timestamp) {
    for (auto it = begin; it != end; ++it)
      write(*it, timestamp);
  }
  // Samples with their instance handles, pairwise; the shorter range ends both.
  template <typename SamplesFWIterator, typename HandlesFWIterator>
  void write(const SamplesFWIterator& data_begin, const SamplesFWIterator& data_end,
             const HandlesFWIterator& handle_begin, const HandlesFWIterator& handle_end) {
    auto h = handle_begin;
    for (auto it = data_begin; it != data_end && h != handle_end; ++it, ++h)
      write(*it, *h);
  }
  template <typename SamplesFWIterator, typename HandlesFWIterator>
  void write(const SamplesFWIterator& data_begin, const SamplesFWIterator& data_end,
             const HandlesFWIterator& handle_begin, const HandlesFWIterator& handle_end,
             const dds::core::Time& timestamp) {
    auto h = handle_begin;
    for (auto it = data_begin; it != data_end && h != handle_end; ++it, ++h)
      write(*it, *h, timestamp);
  }
  DataWriter& operator<<(const T& sample) {
    write(sample);
    return *this;
  }
  DataWriter& operator<<(const std::pair<T, dds::core::Time>& data) {
    write(data.first, data.second);
    return *this;
  }
  DataWriter& operator<<(const std::pair<T, dds::core::InstanceHandle>& data) {
    write(data.first, data.second);
    return *this;
  }

  // --- loans (zero copy) -------------------------------------------------------------------
  // A sample constructed directly in an SMC slot of the topic's ring: fill it and write() it
  // (published in place, no serialization, no copy), or return_loan() it. Only for
  // self-contained types (primitives, enums, fixed arrays and structs of them — no
  // strings, sequences, optional members or unions); others throw UnsupportedError.
  // Blocks while the ring is full, like write().
  T& loan_sample() {
    if constexpr (spindle::detail::is_self_contained<T>) {
      return *::new (core().loan()) T();
    } else {
      (void)core().loan();  // throws UnsupportedError naming the type
      throw dds::core::UnsupportedError("DataWriter::loan_sample: unsupported type");
    }
  }
  void return_loan(T& sample) { core().return_loan(&sample); }

  // --- instances -------------------------------------------------------------------------
  dds::core::InstanceHandle register_instance(const T& key) {
    return core().register_instance(&key, dds::core::Time::now());
  }
  dds::core::InstanceHandle register_instance(const T& key, const dds::core::Time& timestamp) {
    return core().register_instance(&key, timestamp);
  }
  DataWriter& unregister_instance(const dds::core::InstanceHandle& h) {
    core().unregister_instance(h, dds::core::Time::now());
    return *this;
  }
  DataWriter& unregister_instance(const dds::core::InstanceHandle& h,
                                  const dds::core::Time& timestamp) {
    core().unregister_instance(h, timestamp);
    return *this;
  }
  DataWriter& unregister_instance(const T& key) { return unregister_instance(checked_lookup(key)); }
  DataWriter& unregister_instance(const T& key, const dds::core::Time& timestamp) {
    return unregister_instance(checked_lookup(key), timestamp);
  }
  DataWriter& dispose_instance(const dds::core::InstanceHandle& h) {
    core().dispose_instance(h, dds::core::Time::now());
    return *this;
  }
  DataWriter& dispose_instance(const dds::core::InstanceHandle& h,
                               const dds::core::Time& timestamp) {
    core().dispose_instance(h, timestamp);
    return *this;
  }
  DataWriter& dispose_instance(const T& key) { return dispose_instance(checked_lookup(key)); }
  DataWriter& dispose_instance(const T& key, const dds::core::Time& timestamp) {
    return dispose_instance(checked_lookup(key), timestamp);
  }
  [[nodiscard]] dds::core::InstanceHandle lookup_instance(const T& key) const {
    return core().lookup_instance(&key);
  }
  // The key fields of instance `h`, into `key`.
  T& key_value(T& key, const dds::core::InstanceHandle& h) {
    key = *std::static_pointer_cast<const T>(core().key_value(h));
    return key;
  }
  [[nodiscard]] T key_value(const dds::core::InstanceHandle& h) {
    T key;
    key_value(key, h);
    return key;
  }
  dds::topic::TopicInstance<T>& key_value(dds::topic::TopicInstance<T>& i,
                                          const dds::core::InstanceHandle& h) {
    i.handle(h);
    key_value(i.sample(), h);
    return i;
  }

  // --- entity ----------------------------------------------------------------------------
  [[nodiscard]] dds::topic::Topic<T> topic() const { return dds::topic::Topic<T>(core().topic()); }
  [[nodiscard]] dds::topic::TopicDescription topic_description() const { return topic(); }
  DataWriter& operator<<(const qos::DataWriterQos& q) {
    qos(q);
    return *this;
  }
  const DataWriter& operator>>(qos::DataWriterQos& q) const {
    q = qos();
    return *this;
  }
  using AnyDataWriter::qos;

  void listener(DataWriterListener<T>* l, const dds::core::status::StatusMask& mask) {
    if (l == nullptr) {
      core().listener(nullptr, mask);
      return;
    }
    core().listener(std::make_shared<Hook>(l, core_ptr()), mask);
  }
  [[nodiscard]] DataWriterListener<T>* listener() const {
    auto* h = dynamic_cast<Hook*>(core().listener().get());
    return h == nullptr ? nullptr : h->target();
  }

 private:
  static spindle::detail::WriterHookFactory hook_factory(DataWriterListener<T>* l) {
    if (l == nullptr) return {};
    return [l](const std::shared_ptr<Core>& c) { return std::make_shared<Hook>(l, c); };
  }
  dds::core::InstanceHandle checked_lookup(const T& key) const {
    auto h = lookup_instance(key);
    if (h.is_nil()) throw dds::core::PreconditionNotMetError("DataWriter: unknown instance");
    return h;
  }

  // The listener goes in before the writer is announced (spindle::detail::WriterHookFactory).

  class Hook final : public spindle::detail::WriterListenerHook {
   public:
    Hook(DataWriterListener<T>* l, const std::shared_ptr<Core>& c) : l_(l), core_(c) {}
    DataWriterListener<T>* target() const noexcept { return l_; }
    void on_offered_deadline_missed(
        const dds::core::status::OfferedDeadlineMissedStatus& s) override {
      with([&](DataWriter<T>& w) { l_->on_offered_deadline_missed(w, s); });
    }
    void on_offered_incompatible_qos(
        const dds::core::status::OfferedIncompatibleQosStatus& s) override {
      with([&](DataWriter<T>& w) { l_->on_offered_incompatible_qos(w, s); });
    }
    void on_liveliness_lost(const dds::core::status::LivelinessLostStatus& s) override {
      with([&](DataWriter<T>& w) { l_->on_liveliness_lost(w, s); });
    }
    void on_publication_matched(const dds::core::status::PublicationMatchedStatus& s) override {
      with([&](DataWriter<T>& w) { l_->on_publication_matched(w, s); });
    }

   private:
    template <class F>
    void with(F&& f) {
      if (auto c = core_.lock()) {
        DataWriter<T> w(c);
        f(w);
      }
    }
    DataWriterListener<T>* l_;
    std::weak_ptr<Core> core_;
  };
};

template <typename T>
DataWriter<T> AnyDataWriter::get() const {
  if (is_nil()) return DataWriter<T>(dds::core::null);
  if (core().type().type_name != spindle::detail::type_support<T>().type_name) {
    throw dds::core::InvalidDowncastError("AnyDataWriter::get: the writer's type is '" +
                                          std::string(core().type().type_name) + "'");
  }
  return DataWriter<T>(core_ptr());
}

}  // namespace dds::pub
