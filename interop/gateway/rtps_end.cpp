// The RTPS side of the gateway: Cyclone DDS's C API (Debian cyclonedds-dev) with the sertype
// of cyclone_cdr.hpp, so that no RTPS is written here. One participant per end; its readers
// wait in one waitset served by the end's own thread, which sleeps while nothing arrives.
#include <dds/dds.h>
#include <dds/ddsi/ddsi_sertype.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "cyclone_cdr.hpp"
#include "ends.hpp"

namespace spindle::gateway {
namespace {

[[noreturn]] void fail(const std::string& what, dds_return_t rc) {
  throw std::runtime_error("rtps: " + what + ": " + dds_strretcode(rc));
}

dds_entity_t check(dds_entity_t e, const std::string& what) {
  if (e < 0) fail(what, e);
  return e;
}

struct Qos {
  dds_qos_t* q = dds_create_qos();
  ~Qos() { dds_delete_qos(q); }
  Qos() = default;
  Qos(const Qos&) = delete;
  Qos& operator=(const Qos&) = delete;
};

void apply(dds_qos_t* q, const TopicQos& c) {
  dds_qset_reliability(q,
                       c.reliability == Reliability::Reliable ? DDS_RELIABILITY_RELIABLE
                                                              : DDS_RELIABILITY_BEST_EFFORT,
                       DDS_SECS(1));
  dds_qset_durability(q, c.durability == Durability::TransientLocal ? DDS_DURABILITY_TRANSIENT_LOCAL
                                                                    : DDS_DURABILITY_VOLATILE);
  if (c.history_depth == 0)
    dds_qset_history(q, DDS_HISTORY_KEEP_ALL, 0);
  else
    dds_qset_history(q, DDS_HISTORY_KEEP_LAST, c.history_depth);
  if (c.deadline_s) dds_qset_deadline(q, static_cast<dds_duration_t>(*c.deadline_s * 1e9));
}

void partitions(dds_qos_t* q, const std::vector<std::string>& parts) {
  if (parts.empty()) return;
  std::vector<const char*> names;
  for (const auto& p : parts)
    names.push_back(p.c_str());
  dds_qset_partition(q, static_cast<uint32_t>(names.size()), names.data());
}

class RtpsOutlet final : public Outlet {
 public:
  RtpsOutlet(dds_entity_t writer, cdr::Encoding encoding, const types::Type& type, bool keyed,
             RouteStats& stats, std::string topic)
      : writer_(writer),
        encoding_(encoding),
        type_(type),
        keyed_(keyed),
        stats_(stats),
        topic_(std::move(topic)) {}

  void deliver(const Message& m) override {
    try {
      CdrSample s;
      s.value = m.value;
      dds_return_t rc = DDS_RETCODE_OK;
      const dds_time_t ts = m.source_ns >= 0 ? m.source_ns : dds_time();
      switch (m.kind) {
        case Message::Kind::Data:
          if (m.bytes && in_encoding(*m.bytes, encoding_)) {
            s.bytes = *m.bytes;  // as received: no decoding or encoding on the way
          } else {
            s.value = full_value(type_, m);
            s.bytes = types::encode(type_, *s.value, encoding_);
          }
          rc = dds_write_ts(writer_, &s, ts);
          if (rc == DDS_RETCODE_OK) stats_.data.fetch_add(1, std::memory_order_relaxed);
          break;
        case Message::Kind::Dispose:
        case Message::Kind::Unregister:
          if (keyed_) {
            s.bytes = types::encode_key(type_, *m.value, encoding_);
          } else {
            // A keyless topic's one instance: a key of no members, the header alone.
            s.bytes = {
                std::byte{0},
                std::byte{types::representation_id(type_, encoding_, cdr::kNativeEndianness)},
                std::byte{0}, std::byte{0}};
          }
          s.key_only = true;
          if (m.kind == Message::Kind::Dispose) {
            rc = dds_dispose_ts(writer_, &s, ts);
            if (rc == DDS_RETCODE_OK) stats_.disposed.fetch_add(1, std::memory_order_relaxed);
          } else {
            rc = dds_unregister_instance_ts(writer_, &s, ts);
            // Unregistering an instance this writer never wrote is no failure.
            if (rc == DDS_RETCODE_PRECONDITION_NOT_MET || rc == DDS_RETCODE_BAD_PARAMETER)
              rc = DDS_RETCODE_OK;
            if (rc == DDS_RETCODE_OK) stats_.unregistered.fetch_add(1, std::memory_order_relaxed);
          }
          break;
      }
      if (rc != DDS_RETCODE_OK) fail("writing", rc);
    } catch (const std::exception& e) {
      if (stats_.failed.fetch_add(1, std::memory_order_relaxed) < 10)
        std::fprintf(stderr, "spindle-gateway: %s: writing into the RTPS domain failed: %s\n",
                     topic_.c_str(), e.what());
    }
  }

 private:
  dds_entity_t writer_;
  cdr::Encoding encoding_;
  const types::Type& type_;
  bool keyed_;
  RouteStats& stats_;
  std::string topic_;
};

struct RtpsReader {
  dds_entity_t reader = 0;
  dds_entity_t condition = 0;
  Sink sink;
  RouteStats* stats = nullptr;
  std::unordered_map<dds_instance_handle_t, bool> writers;  // publication -> a gateway's
  Batches batches;
};

class RtpsEnd final : public End {
 public:
  explicit RtpsEnd(const EndConfig& c) : config_(c) {
    if (!c.config.empty()) {
      domain_ = dds_create_domain(c.domain, c.config.c_str());
      if (domain_ < 0) fail("domain " + std::to_string(c.domain) + " with its config", domain_);
    }
    participant_ = check(dds_create_participant(c.domain, nullptr, nullptr),
                         "participant in domain " + std::to_string(c.domain));
    waitset_ = check(dds_create_waitset(participant_), "waitset");
    publications_ =
        check(dds_create_reader(participant_, DDS_BUILTIN_TOPIC_DCPSPUBLICATION, nullptr, nullptr),
              "DCPSPublication reader");
  }

  ~RtpsEnd() override {
    stop();
    dds_delete(participant_);
    if (domain_ > 0) dds_delete(domain_);
  }

  const EndConfig& config() const override { return config_; }
  uint64_t refused() const override { return stats_.refused.load(); }

  std::unique_ptr<Outlet> open_writer(const TopicPlan& t, RouteStats& stats,
                                      const std::string& marker) override {
    const dds_entity_t topic = topic_for(t);
    Qos q;
    apply(q.q, t.config->qos);
    const cdr::Encoding e = types::default_encoding(*t.type);
    const dds_data_representation_id_t rep = representation(e);
    dds_qset_data_representation(q.q, 1, &rep);
    dds_qset_userdata(q.q, marker.data(), marker.size());
    dds_qset_writer_data_lifecycle(q.q, false);
    const dds_entity_t w =
        check(dds_create_writer(publisher_for(t.config->partitions), topic, q.q, nullptr),
              "writer of " + t.config->name);
    const types::Type& r = types::resolve(*t.type);
    const bool keyed = r.kind == types::TypeKind::Struct && !types::key_paths(r).empty();
    return std::make_unique<RtpsOutlet>(w, e, r, keyed, stats, t.config->name);
  }

  void open_reader(const TopicPlan& t, Sink sink, RouteStats& stats) override {
    const dds_entity_t topic = topic_for(t);
    Qos q;
    apply(q.q, t.config->qos);
    std::vector<dds_data_representation_id_t> reps;
    const auto& r = types::resolve(*t.type);
    for (const auto e : {cdr::Encoding::Xcdr1, cdr::Encoding::Xcdr2})
      if ((r.representations & cdr::bit_of(e)) != 0) reps.push_back(representation(e));
    dds_qset_data_representation(q.q, static_cast<uint32_t>(reps.size()), reps.data());
    dds_qset_ignorelocal(q.q, DDS_IGNORELOCAL_PARTICIPANT);
    auto slot = std::make_unique<RtpsReader>();
    slot->reader =
        check(dds_create_reader(subscriber_for(t.config->partitions), topic, q.q, nullptr),
              "reader of " + t.config->name);
    slot->condition =
        check(dds_create_readcondition(slot->reader, DDS_ANY_STATE), "read condition");
    slot->sink = std::move(sink);
    slot->stats = &stats;
    std::lock_guard lock(mu_);
    const auto index = static_cast<dds_attach_t>(slots_.size());
    const dds_return_t rc = dds_waitset_attach(waitset_, slot->condition, index);
    if (rc != DDS_RETCODE_OK) fail("waitset", rc);
    slots_.push_back(std::move(slot));
  }

  std::vector<Publication> publications() override {
    std::vector<Publication> out;
    constexpr size_t kMax = 256;
    void* buf[kMax] = {nullptr};
    dds_sample_info_t infos[kMax];
    const dds_return_t n =
        dds_read_mask(publications_, buf, infos, kMax, kMax,
                      DDS_ANY_SAMPLE_STATE | DDS_ANY_VIEW_STATE | DDS_ALIVE_INSTANCE_STATE);
    for (dds_return_t i = 0; i < n; ++i) {
      const auto* ep = static_cast<const dds_builtintopic_endpoint_t*>(buf[i]);
      if (!infos[i].valid_data || ep->topic_name == nullptr || ep->type_name == nullptr) continue;
      Publication p{ep->topic_name, ep->type_name, {}};
      void* ud = nullptr;
      size_t size = 0;
      if (ep->qos != nullptr && dds_qget_userdata(ep->qos, &ud, &size) && ud != nullptr)
        p.user_data.assign(static_cast<const char*>(ud), size);
      dds_free(ud);
      out.push_back(std::move(p));
    }
    if (n > 0) dds_return_loan(publications_, buf, n);
    return out;
  }

  void start() override {
    std::lock_guard lock(mu_);
    if (thread_.joinable()) return;
    running_ = true;
    thread_ = std::thread([this] { serve(); });
  }

  void stop() override {
    {
      std::lock_guard lock(mu_);
      if (!thread_.joinable()) return;
      running_ = false;
    }
    dds_waitset_set_trigger(waitset_, true);
    thread_.join();
  }

 private:
  dds_entity_t topic_for(const TopicPlan& t) {
    std::lock_guard lock(mu_);
    auto it = topics_.find(t.config->name);
    if (it != topics_.end()) return it->second;
    ddsi_sertype* st = make_sertype(*t.type, &stats_);
    const dds_entity_t topic = dds_create_topic_sertype(participant_, t.config->name.c_str(), &st,
                                                        nullptr, nullptr, nullptr);
    if (topic < 0) {
      ddsi_sertype_unref(st);
      fail("topic " + t.config->name, topic);
    }
    topics_.emplace(t.config->name, topic);
    return topic;
  }

  dds_entity_t publisher_for(const std::vector<std::string>& parts) {
    std::lock_guard lock(mu_);
    auto it = publishers_.find(parts);
    if (it != publishers_.end()) return it->second;
    Qos q;
    partitions(q.q, parts);
    const dds_entity_t p = check(dds_create_publisher(participant_, q.q, nullptr), "publisher");
    publishers_.emplace(parts, p);
    return p;
  }

  dds_entity_t subscriber_for(const std::vector<std::string>& parts) {
    std::lock_guard lock(mu_);
    auto it = subscribers_.find(parts);
    if (it != subscribers_.end()) return it->second;
    Qos q;
    partitions(q.q, parts);
    const dds_entity_t s = check(dds_create_subscriber(participant_, q.q, nullptr), "subscriber");
    subscribers_.emplace(parts, s);
    return s;
  }

  bool from_gateway(RtpsReader& slot, dds_instance_handle_t h) {
    const auto it = slot.writers.find(h);
    if (it != slot.writers.end()) return it->second;
    dds_builtintopic_endpoint_t* ep = dds_get_matched_publication_data(slot.reader, h);
    if (ep == nullptr) return false;  // gone already: an application's unless seen before
    bool gw = false;
    void* ud = nullptr;
    size_t size = 0;
    if (ep->qos != nullptr && dds_qget_userdata(ep->qos, &ud, &size) && ud != nullptr) {
      const size_t n = std::strlen(kMarkerPrefix);
      gw = size >= n && std::memcmp(ud, kMarkerPrefix, n) == 0;
    }
    dds_free(ud);
    dds_builtintopic_free_endpoint(ep);
    slot.writers.emplace(h, gw);
    return gw;
  }

  void drain(RtpsReader& slot) {
    constexpr size_t kBatch = 64;
    std::vector<CdrSample> samples(kBatch);
    void* ptrs[kBatch];
    dds_sample_info_t infos[kBatch];
    for (size_t i = 0; i < kBatch; ++i)
      ptrs[i] = &samples[i];
    for (;;) {
      const dds_return_t n = dds_take(slot.reader, ptrs, infos, kBatch, kBatch);
      if (n <= 0) {
        std::vector<BatchItem> none;
        for (const auto& m : slot.batches.add(none, false))
          slot.sink(m);
        return;
      }
      std::vector<BatchItem> batch;
      batch.reserve(static_cast<size_t>(n));
      for (dds_return_t i = 0; i < n; ++i) {
        const auto& info = infos[i];
        CdrSample& s = samples[static_cast<size_t>(i)];
        BatchItem b;
        b.instance = static_cast<int64_t>(info.instance_handle);
        b.valid = info.valid_data;
        b.disposed = info.instance_state == DDS_NOT_ALIVE_DISPOSED_INSTANCE_STATE;
        b.no_writers = info.instance_state == DDS_NOT_ALIVE_NO_WRITERS_INSTANCE_STATE;
        b.from_gateway = from_gateway(slot, info.publication_handle);
        if (b.from_gateway) slot.stats->from_gateways.fetch_add(1, std::memory_order_relaxed);
        b.message.source_ns = info.source_timestamp;
        b.message.value = std::move(s.value);
        if (b.valid)
          b.message.bytes = std::make_shared<const std::vector<std::byte>>(std::move(s.bytes));
        s = CdrSample{};
        if (!b.message.value) continue;
        batch.push_back(std::move(b));
      }
      const bool more = static_cast<size_t>(n) == kBatch;
      for (const auto& m : slot.batches.add(batch, more))
        slot.sink(m);
      if (!more) return;
    }
  }

  void serve() {
    std::vector<dds_attach_t> fired(64);
    for (;;) {
      {
        std::lock_guard lock(mu_);
        if (!running_) return;
      }
      const dds_return_t n = dds_waitset_wait(waitset_, fired.data(), fired.size(), DDS_MSECS(500));
      if (n < 0) {
        std::fprintf(stderr, "spindle-gateway: rtps waitset: %s\n", dds_strretcode(n));
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        continue;
      }
      std::vector<RtpsReader*> ready;
      {
        std::lock_guard lock(mu_);
        if (!running_) return;
        for (dds_return_t i = 0; i < n && static_cast<size_t>(i) < fired.size(); ++i) {
          const auto index = static_cast<size_t>(fired[static_cast<size_t>(i)]);
          if (index < slots_.size()) ready.push_back(slots_[index].get());
        }
      }
      for (RtpsReader* slot : ready) {
        try {
          drain(*slot);
        } catch (const std::exception& e) {
          std::fprintf(stderr, "spindle-gateway: rtps reader: %s\n", e.what());
        }
      }
    }
  }

  EndConfig config_;
  CdrSertypeStats stats_;
  dds_entity_t publications_ = 0;
  dds_entity_t domain_ = 0;
  dds_entity_t participant_ = 0;
  dds_entity_t waitset_ = 0;
  std::mutex mu_;
  bool running_ = false;
  std::thread thread_;
  std::map<std::string, dds_entity_t> topics_;
  std::map<std::vector<std::string>, dds_entity_t> publishers_;
  std::map<std::vector<std::string>, dds_entity_t> subscribers_;
  std::vector<std::unique_ptr<RtpsReader>> slots_;
};

}  // namespace

std::unique_ptr<End> make_rtps_end(const EndConfig& config) {
  return std::make_unique<RtpsEnd>(config);
}

}  // namespace spindle::gateway
