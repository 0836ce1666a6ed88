// The Spindle side of the gateway: one DomainParticipant, topics of dynamic types
// (<spindle/types/dynamic_topic.hpp>), a publisher and subscriber per partition list, and
// readers whose listener hands batches to the sinks.
#include <dds/dds.hpp>
#include <spindle/types/dynamic_topic.hpp>

#include <cstdio>
#include <map>
#include <mutex>
#include <unordered_map>

#include "ends.hpp"

namespace spindle::gateway {
namespace {

using spindle::types::DynamicSample;

dds::core::Time to_time(int64_t ns) {
  if (ns < 0) return dds::core::Time::now();
  return dds::core::Time(ns / 1000000000, static_cast<uint32_t>(ns % 1000000000));
}

int64_t to_ns(const dds::core::Time& t) {
  if (t == dds::core::Time::invalid()) return -1;
  return t.sec() * 1000000000 + t.nanosec();
}

template <typename Q>
void apply(Q& q, const TopicQos& c) {
  using namespace dds::core::policy;
  q << (c.reliability == Reliability::Reliable
            ? dds::core::policy::Reliability::Reliable(dds::core::Duration::from_secs(1))
            : dds::core::policy::Reliability::BestEffort());
  q << (c.durability == Durability::TransientLocal ? dds::core::policy::Durability::TransientLocal()
                                                   : dds::core::policy::Durability::Volatile());
  q << (c.history_depth == 0 ? History::KeepAll() : History::KeepLast(c.history_depth));
  if (c.deadline_s)
    q << Deadline(dds::core::Duration::from_millisecs(static_cast<uint64_t>(*c.deadline_s * 1000)));
  if (!c.consistency.empty()) {
    using spindle::policy::Consistency;
    q << (c.consistency == "unordered"  ? Consistency::Unordered()
          : c.consistency == "volatile" ? Consistency::Volatile()
          : c.consistency == "logged"   ? Consistency::Logged()
                                        : Consistency::Atomic());
  }
}

class SpindleOutlet final : public Outlet {
 public:
  SpindleOutlet(dds::pub::DataWriter<DynamicSample> w, const types::Type& type, RouteStats& stats,
                std::string topic)
      : writer_(std::move(w)),
        type_(type),
        encoding_(types::default_encoding(type)),
        stats_(stats),
        topic_(std::move(topic)) {}

  void deliver(const Message& m) override {
    try {
      DynamicSample s{&type_, nullptr, nullptr};
      if (m.kind == Message::Kind::Data && m.bytes && in_encoding(*m.bytes, encoding_)) {
        // Passed on as received: the writer needs no more of the value than the key.
        s.encoded = m.bytes;
        s.value = key_members(type_, *m.value);
      } else if (m.kind == Message::Kind::Data) {
        s.value = *full_value(type_, m);
      } else {
        s.value = *m.value;
      }
      const auto ts = to_time(m.source_ns);
      switch (m.kind) {
        case Message::Kind::Data:
          writer_.write(s, ts);
          stats_.data.fetch_add(1, std::memory_order_relaxed);
          break;
        case Message::Kind::Dispose: {
          auto h = writer_.lookup_instance(s);
          if (h.is_nil()) h = writer_.register_instance(s, ts);
          writer_.dispose_instance(h, ts);
          stats_.disposed.fetch_add(1, std::memory_order_relaxed);
          break;
        }
        case Message::Kind::Unregister: {
          const auto h = writer_.lookup_instance(s);
          // An instance this writer never wrote has nothing to unregister.
          if (!h.is_nil()) writer_.unregister_instance(h, ts);
          stats_.unregistered.fetch_add(1, std::memory_order_relaxed);
          break;
        }
      }
    } catch (const std::exception& e) {
      if (stats_.failed.fetch_add(1, std::memory_order_relaxed) < 10)
        std::fprintf(stderr, "spindle-gateway: %s: writing into the Spindle domain failed: %s\n",
                     topic_.c_str(), e.what());
    }
  }

 private:
  dds::pub::DataWriter<DynamicSample> writer_;
  const types::Type& type_;
  cdr::Encoding encoding_;  // the writer's: the type's default
  RouteStats& stats_;
  std::string topic_;
};

dds::sub::DataReader<dds::topic::PublicationBuiltinTopicData> builtin_publications(
    const dds::domain::DomainParticipant& dp) {
  std::vector<dds::sub::DataReader<dds::topic::PublicationBuiltinTopicData>> found;
  dds::sub::find<dds::sub::DataReader<dds::topic::PublicationBuiltinTopicData>>(
      dds::sub::builtin_subscriber(dp), "DCPSPublication", std::back_inserter(found));
  if (found.empty()) throw std::runtime_error("spindle: no DCPSPublication built-in reader");
  return found.front();
}

class SpindleEnd;

class SpindleReader final : public dds::sub::NoOpDataReaderListener<DynamicSample> {
 public:
  SpindleReader(SpindleEnd& end, Sink sink, RouteStats& stats)
      : end_(end), sink_(std::move(sink)), stats_(stats) {}
  void on_data_available(dds::sub::DataReader<DynamicSample>& reader) override;
  void drain(dds::sub::DataReader<DynamicSample>& reader);

 private:
  bool from_gateway(dds::sub::DataReader<DynamicSample>& reader,
                    const dds::core::InstanceHandle& h);

  SpindleEnd& end_;
  Sink sink_;
  RouteStats& stats_;
  std::mutex mu_;  // one drain at a time: messages leave in the order taken
  std::unordered_map<uint64_t, bool> writers_;  // publication handle -> a gateway's
  Batches batches_;
};

class SpindleEnd final : public End {
 public:
  explicit SpindleEnd(const EndConfig& c)
      : config_(c), dp_(c.domain), publications_(builtin_publications(dp_)) {}

  ~SpindleEnd() override { stop(); }

  const EndConfig& config() const override { return config_; }

  std::unique_ptr<Outlet> open_writer(const TopicPlan& t, RouteStats& stats,
                                      const std::string& marker) override {
    auto topic = topic_for(t);
    dds::pub::qos::DataWriterQos q = topic.qos();
    apply(q, t.config->qos);
    const std::string& m = marker;
    q << dds::core::policy::UserData(dds::core::ByteSeq(m.begin(), m.end()));
    // A gateway that stops leaves the instances it wrote to their other writers.
    q << dds::core::policy::WriterDataLifecycle::ManuallyDisposeUnregisteredInstances();
    dds::pub::DataWriter<DynamicSample> w(publisher_for(t.config->partitions), topic, q);
    return std::make_unique<SpindleOutlet>(w, *t.type, stats, t.config->name);
  }

  void open_reader(const TopicPlan& t, Sink sink, RouteStats& stats) override {
    auto topic = topic_for(t);
    dds::sub::qos::DataReaderQos q = topic.qos();
    apply(q, t.config->qos);
    auto slot = std::make_unique<SpindleReader>(*this, std::move(sink), stats);
    dds::sub::DataReader<DynamicSample> r(subscriber_for(t.config->partitions), topic, q,
                                          slot.get(),
                                          dds::core::status::StatusMask::data_available());
    std::lock_guard lock(mu_);
    readers_.emplace_back(std::move(r), std::move(slot));
  }

  void start() override {
    std::vector<std::pair<dds::sub::DataReader<DynamicSample>, SpindleReader*>> now;
    {
      std::lock_guard lock(mu_);
      started_ = true;
      for (auto& [r, s] : readers_)
        now.emplace_back(r, s.get());
    }
    for (auto& [r, s] : now)
      s->drain(r);  // what arrived before start
  }

  void stop() override {
    std::vector<std::pair<dds::sub::DataReader<DynamicSample>, std::unique_ptr<SpindleReader>>>
        gone;
    {
      std::lock_guard lock(mu_);
      started_ = false;
      gone.swap(readers_);
    }
    for (auto& [r, s] : gone)
      r.close();  // returns once no listener call runs
  }

  std::vector<Publication> publications() override {
    std::vector<Publication> out;
    for (const auto& s :
         publications_.select()
             .state(dds::sub::status::DataState(dds::sub::status::SampleState::any(),
                                                dds::sub::status::ViewState::any(),
                                                dds::sub::status::InstanceState::alive()))
             .read()) {
      if (!s.info().valid()) continue;
      const auto& ud = s.data().user_data().value();
      out.push_back(
          {s.data().topic_name(), s.data().type_name(), std::string(ud.begin(), ud.end())});
    }
    return out;
  }

  bool started() {
    std::lock_guard lock(mu_);
    return started_;
  }

 private:
  dds::topic::Topic<DynamicSample> topic_for(const TopicPlan& t) {
    std::lock_guard lock(mu_);
    auto it = topics_.find(t.config->name);
    if (it != topics_.end()) return it->second;
    // Readers keep the bytes and only the key as JSON: samples are relayed as received.
    auto topic = spindle::types::create_topic(dp_, t.config->name, *t.type, dp_.default_topic_qos(),
                                              spindle::types::Decoding::key_only);
    topics_.emplace(t.config->name, topic);
    return topic;
  }

  dds::pub::Publisher publisher_for(const std::vector<std::string>& parts) {
    std::lock_guard lock(mu_);
    auto it = publishers_.find(parts);
    if (it != publishers_.end()) return it->second;
    dds::pub::qos::PublisherQos q;
    if (!parts.empty()) q << dds::core::policy::Partition(parts);
    dds::pub::Publisher p(dp_, q);
    publishers_.emplace(parts, p);
    return p;
  }

  dds::sub::Subscriber subscriber_for(const std::vector<std::string>& parts) {
    std::lock_guard lock(mu_);
    auto it = subscribers_.find(parts);
    if (it != subscribers_.end()) return it->second;
    dds::sub::qos::SubscriberQos q;
    if (!parts.empty()) q << dds::core::policy::Partition(parts);
    dds::sub::Subscriber s(dp_, q);
    subscribers_.emplace(parts, s);
    return s;
  }

  EndConfig config_;
  dds::domain::DomainParticipant dp_;
  dds::sub::DataReader<dds::topic::PublicationBuiltinTopicData> publications_;
  std::mutex mu_;
  bool started_ = false;
  std::map<std::string, dds::topic::Topic<DynamicSample>> topics_;
  std::map<std::vector<std::string>, dds::pub::Publisher> publishers_;
  std::map<std::vector<std::string>, dds::sub::Subscriber> subscribers_;
  std::vector<std::pair<dds::sub::DataReader<DynamicSample>, std::unique_ptr<SpindleReader>>>
      readers_;
};

void SpindleReader::on_data_available(dds::sub::DataReader<DynamicSample>& reader) {
  // Nothing may escape into the listener thread: what fails here is said and the next
  // notification drains again.
  try {
    if (end_.started()) drain(reader);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "spindle-gateway: spindle reader: %s\n", e.what());
  }
}

bool SpindleReader::from_gateway(dds::sub::DataReader<DynamicSample>& reader,
                                 const dds::core::InstanceHandle& h) {
  const auto it = writers_.find(h.value());
  if (it != writers_.end()) return it->second;
  try {
    const auto data = dds::sub::matched_publication_data(reader, h);
    const auto& ud = data.user_data().value();
    const std::string prefix = kMarkerPrefix;
    const bool gw =
        ud.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), ud.begin());
    writers_.emplace(h.value(), gw);
    return gw;
  } catch (const std::exception&) {
    return false;  // a writer already gone: an application's unless it was seen before
  }
}

void SpindleReader::drain(dds::sub::DataReader<DynamicSample>& reader) {
  std::lock_guard lock(mu_);
  for (;;) {
    constexpr uint32_t kBatch = 256;
    auto samples = reader.select().max_samples(kBatch).take();
    if (samples.length() == 0) {
      std::vector<BatchItem> none;
      for (const auto& m : batches_.add(none, false))
        sink_(m);
      return;
    }
    std::vector<BatchItem> batch;
    batch.reserve(samples.length());
    for (const auto& s : samples) {
      BatchItem b;
      const auto& info = s.info();
      b.instance = static_cast<int64_t>(info.instance_handle().value());
      b.valid = info.valid();
      const auto st = info.state().instance_state();
      b.disposed = st == dds::sub::status::InstanceState::not_alive_disposed();
      b.no_writers = st == dds::sub::status::InstanceState::not_alive_no_writers();
      b.from_gateway = from_gateway(reader, info.publication_handle());
      if (b.from_gateway) stats_.from_gateways.fetch_add(1, std::memory_order_relaxed);
      b.message.source_ns = to_ns(info.timestamp());
      if (b.valid) {
        const auto& d = s.data();
        if (d.encoded) {
          // The bytes go on as they are where they can: the key is all else that is needed.
          b.message.bytes = d.encoded;
          b.message.value = std::make_shared<const types::Json>(key_members(*d.type, d.value));
        } else {
          b.message.value = std::make_shared<const types::Json>(d.value);
        }
      } else {
        // An invalid sample's data holds its instance's key (the reader keeps it).
        DynamicSample key = s.data();
        if (key.value.is_null()) {
          try {
            reader.key_value(key, info.instance_handle());
          } catch (const std::exception&) {
          }
        }
        if (key.value.is_null()) continue;  // no key to name the instance with
        b.message.value = std::make_shared<const types::Json>(std::move(key.value));
      }
      batch.push_back(std::move(b));
    }
    const bool more = samples.length() == kBatch;
    for (const auto& m : batches_.add(batch, more))
      sink_(m);
    if (!more) return;
  }
}

}  // namespace

std::unique_ptr<End> make_spindle_end(const EndConfig& config) {
  return std::make_unique<SpindleEnd>(config);
}

}  // namespace spindle::gateway
