// Shared pieces of the DCPS behaviour tests: one participant in the built-in one-member
// domain (no SPINDLE_CONFIG: TCP on 127.0.0.1, port 0) with a FlightState topic, a
// publisher and a subscriber; QoS presets; bounded waits; and a listener that records
// every callback. Only the public API (<dds/dds.hpp>) is used.
//
// Threading: a fixture is used from the test's thread; Recorder callbacks come from the
// participant's listener thread and are read from the test's thread under its mutex.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>
#include <dds/dds.hpp>

#include "avionics.hpp"

namespace dcps_api {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using FlightState = Avionics::FlightState;
using Reader = dds::sub::DataReader<FlightState>;
using Writer = dds::pub::DataWriter<FlightState>;
using Samples = dds::sub::LoanedSamples<FlightState>;
namespace policy = dds::core::policy;
namespace status = dds::sub::status;

// Polls `pred` every 2 ms until it holds or `timeout` passes; true if it held.
template <class Pred>
bool eventually(Pred&& pred, std::chrono::milliseconds timeout = 5000ms) {
  const auto until = Clock::now() + timeout;
  while (!pred()) {
    if (Clock::now() > until) return false;
    std::this_thread::sleep_for(2ms);
  }
  return true;
}

// `pred` holds at every check during `period` (for "nothing more happens").
template <class Pred>
bool stays(Pred&& pred, std::chrono::milliseconds period = 150ms) {
  const auto until = Clock::now() + period;
  do {
    if (!pred()) return false;
    std::this_thread::sleep_for(5ms);
  } while (Clock::now() < until);
  return true;
}

// A FlightState of `aircraft` (the key) whose timestamp_ns carries a test sequence number.
inline FlightState flight(std::uint32_t aircraft, std::uint64_t seq,
                          const std::string& callsign = "TEST") {
  FlightState s;
  s.aircraft_id(aircraft);
  s.timestamp_ns(seq);
  s.callsign(callsign);
  s.phase(Avionics::FlightPhase::CRUISE);
  return s;
}

// The sequence numbers of the valid samples, in the order returned.
inline std::vector<std::uint64_t> seqs(const Samples& samples) {
  std::vector<std::uint64_t> out;
  for (const auto& s : samples)
    if (s.info().valid()) out.push_back(s.data().timestamp_ns());
  return out;
}

// A reliable writer that may block up to 5 s on a full ring.
inline dds::pub::qos::DataWriterQos writer_qos() {
  dds::pub::qos::DataWriterQos q;
  q << policy::Reliability::Reliable(dds::core::Duration::from_secs(5));
  return q;
}

// A reliable reader keeping `history`.
inline dds::sub::qos::DataReaderQos reader_qos(
    const policy::History& history = policy::History::KeepAll()) {
  dds::sub::qos::DataReaderQos q;
  q << policy::Reliability::Reliable() << history;
  return q;
}

// One participant with a FlightState topic, a publisher and a subscriber.
struct Participant {
  Participant() = default;
  Participant(const Participant&) = delete;
  Participant& operator=(const Participant&) = delete;
  // Closed explicitly, as DDS applications delete their participant: once close() returns
  // no listener runs, so Recorders declared before the fixture may go next.
  ~Participant() {
    try {
      dp.close();
    } catch (const dds::core::AlreadyClosedError&) {
      // the test closed it
    }
  }

  dds::domain::DomainParticipant dp{dds::domain::default_id()};
  dds::topic::Topic<FlightState> topic{dp, "FlightState"};
  dds::pub::Publisher pub{dp};
  dds::sub::Subscriber sub{dp};

  Writer writer(const dds::pub::qos::DataWriterQos& q = writer_qos()) {
    return Writer(pub, topic, q);
  }
  Reader reader(const dds::sub::qos::DataReaderQos& q = reader_qos()) {
    return Reader(sub, topic, q);
  }
  // A reader, then a writer, once they matched each other:
  //   auto [reader, writer] = p.matched_pair();
  std::pair<Reader, Writer> matched_pair(const dds::sub::qos::DataReaderQos& rq = reader_qos(),
                                         const dds::pub::qos::DataWriterQos& wq = writer_qos());
  // The same with `policies` added to both the reader's and the writer's QoS.
  template <class... P>
  std::pair<Reader, Writer> matched_pair_with(const P&... policies) {
    auto rq = reader_qos();
    auto wq = writer_qos();
    ((rq << policies, wq << policies), ...);
    return matched_pair(rq, wq);
  }
};

// Until `writer` matches `readers` readers and `reader` matches `writers` writers (counted
// without reading the statuses, so their change fields stay untouched).
inline void wait_matched(const dds::pub::AnyDataWriter& writer,
                         const dds::sub::AnyDataReader& reader, std::size_t readers = 1,
                         std::size_t writers = 1) {
  REQUIRE(eventually([&] {
    return writer.matched_subscriptions().size() == readers &&
           reader.matched_publications().size() == writers;
  }));
}

inline std::pair<Reader, Writer> Participant::matched_pair(const dds::sub::qos::DataReaderQos& rq,
                                                           const dds::pub::qos::DataWriterQos& wq) {
  auto r = reader(rq);
  auto w = writer(wq);
  wait_matched(w, r);
  return {r, w};
}

// Until every sample this participant wrote was delivered (in a one-member domain: is in
// the readers' caches).
inline void flush(dds::pub::AnyDataWriter& writer) {
  writer.wait_for_acknowledgments(dds::core::Duration::from_secs(5));
}

// Writes `samples`, then flushes.
template <class W, class... S>
void deliver(W& writer, const S&... samples) {
  (writer.write(samples), ...);
  flush(writer);
}

// Writes samples 1..n of `aircraft`, then flushes.
template <class W>
void deliver_series(W& writer, std::uint32_t aircraft, std::uint64_t n) {
  for (std::uint64_t i = 1; i <= n; ++i)
    writer.write(flight(aircraft, i));
  flush(writer);
}

// The four counts of a publication or subscription matched status.
template <class S>
void check_matched(const S& s, std::int32_t current, std::int32_t current_change,
                   std::int32_t total, std::int32_t total_change) {
  CHECK(s.current_count() == current);
  CHECK(s.current_count_change() == current_change);
  CHECK(s.total_count() == total);
  CHECK(s.total_count_change() == total_change);
}

// Records every listener callback it gets: counts by name, and the last status of each
// kind. Usable as a reader, writer, subscriber, publisher or participant listener.
class Recorder : public virtual dds::domain::NoOpDomainParticipantListener,
                 public virtual dds::sub::NoOpDataReaderListener<FlightState>,
                 public virtual dds::pub::NoOpDataWriterListener<FlightState> {
 public:
  int count(const std::string& callback) const {
    std::lock_guard lock(mu_);
    auto it = counts_.find(callback);
    return it == counts_.end() ? 0 : it->second;
  }
  int total() const {
    std::lock_guard lock(mu_);
    int n = 0;
    for (const auto& [k, v] : counts_)
      n += v;
    return n;
  }
  dds::core::status::PublicationMatchedStatus publication_matched() const {
    std::lock_guard lock(mu_);
    return pub_matched_;
  }
  dds::core::status::SubscriptionMatchedStatus subscription_matched() const {
    std::lock_guard lock(mu_);
    return sub_matched_;
  }
  // The last incompatible policy id, and the last SAMPLE_REJECTED total_count, heard.
  dds::core::policy::QosPolicyId last_policy() const {
    std::lock_guard lock(mu_);
    return last_policy_;
  }
  std::int32_t last_total() const {
    std::lock_guard lock(mu_);
    return last_total_;
  }
  // The readers an AnyDataReader callback named.
  std::vector<dds::core::InstanceHandle> readers() const {
    std::lock_guard lock(mu_);
    return readers_;
  }
  // Called at the end of on_data_on_readers (e.g. to notify_datareaders()).
  std::function<void(dds::sub::Subscriber&)> on_readers_action;

  // typed reader
  void on_data_available(Reader&) override { note("reader.data_available"); }
  void on_subscription_matched(Reader&,
                               const dds::core::status::SubscriptionMatchedStatus& s) override {
    std::lock_guard lock(mu_);
    ++counts_["reader.subscription_matched"];
    sub_matched_ = s;
  }
  // typed writer
  void on_publication_matched(Writer&,
                              const dds::core::status::PublicationMatchedStatus& s) override {
    std::lock_guard lock(mu_);
    ++counts_["writer.publication_matched"];
    pub_matched_ = s;
  }
  // subscriber / participant
  void on_data_available(dds::sub::AnyDataReader& r) override {
    std::lock_guard lock(mu_);
    ++counts_["any.data_available"];
    readers_.push_back(r.instance_handle());
  }
  void on_subscription_matched(dds::sub::AnyDataReader&,
                               const dds::core::status::SubscriptionMatchedStatus& s) override {
    std::lock_guard lock(mu_);
    ++counts_["any.subscription_matched"];
    sub_matched_ = s;
  }
  void on_publication_matched(dds::pub::AnyDataWriter&,
                              const dds::core::status::PublicationMatchedStatus& s) override {
    std::lock_guard lock(mu_);
    ++counts_["any.publication_matched"];
    pub_matched_ = s;
  }
  void on_requested_incompatible_qos(
      Reader&, const dds::core::status::RequestedIncompatibleQosStatus& s) override {
    std::lock_guard lock(mu_);
    ++counts_["reader.requested_incompatible_qos"];
    last_policy_ = s.last_policy_id();
  }
  void on_offered_incompatible_qos(
      Writer&, const dds::core::status::OfferedIncompatibleQosStatus& s) override {
    std::lock_guard lock(mu_);
    ++counts_["writer.offered_incompatible_qos"];
    last_policy_ = s.last_policy_id();
  }
  void on_sample_rejected(Reader&, const dds::core::status::SampleRejectedStatus& s) override {
    std::lock_guard lock(mu_);
    ++counts_["reader.sample_rejected"];
    last_total_ = s.total_count();
  }
  void on_requested_deadline_missed(
      dds::sub::AnyDataReader&, const dds::core::status::RequestedDeadlineMissedStatus&) override {
    note("any.requested_deadline_missed");
  }
  // The other overload of each name above (one of a name hides the rest).
  void on_requested_incompatible_qos(
      dds::sub::AnyDataReader&, const dds::core::status::RequestedIncompatibleQosStatus&) override {
    note("any.requested_incompatible_qos");
  }
  void on_offered_incompatible_qos(
      dds::pub::AnyDataWriter&, const dds::core::status::OfferedIncompatibleQosStatus&) override {
    note("any.offered_incompatible_qos");
  }
  void on_sample_rejected(dds::sub::AnyDataReader&,
                          const dds::core::status::SampleRejectedStatus&) override {
    note("any.sample_rejected");
  }
  void on_requested_deadline_missed(
      Reader&, const dds::core::status::RequestedDeadlineMissedStatus&) override {
    note("reader.requested_deadline_missed");
  }
  void on_offered_deadline_missed(Writer&,
                                  const dds::core::status::OfferedDeadlineMissedStatus&) override {
    note("writer.offered_deadline_missed");
  }
  void on_offered_deadline_missed(dds::pub::AnyDataWriter&,
                                  const dds::core::status::OfferedDeadlineMissedStatus&) override {
    note("any.offered_deadline_missed");
  }
  void on_data_on_readers(dds::sub::Subscriber& s) override {
    note("any.data_on_readers");
    if (on_readers_action) on_readers_action(s);
  }

 private:
  void note(const std::string& callback) {
    std::lock_guard lock(mu_);
    ++counts_[callback];
  }
  mutable std::mutex mu_;
  std::map<std::string, int> counts_;
  dds::core::status::PublicationMatchedStatus pub_matched_;
  dds::core::status::SubscriptionMatchedStatus sub_matched_;
  std::vector<dds::core::InstanceHandle> readers_;
  dds::core::policy::QosPolicyId last_policy_ = 0;
  std::int32_t last_total_ = 0;
};

}  // namespace dcps_api
