// The two sides of a gateway behind one interface: an End joins one domain (a Spindle domain
// through the DCPS API, an RTPS domain through Cyclone DDS's C API), reads a topic into a
// Sink and writes what another End read through an Outlet. Messages carry the sample as JSON
// (<spindle/types/dynamic_data.hpp>), so an End encodes for its own domain.
//
// The loop rule (docs/interop.md, "Loops"): every writer a gateway makes carries a marker in
// its USER_DATA — kMarkerPrefix, the gateway's id, the domain its samples come from — and an
// End's readers pass on only samples of writers whose USER_DATA does not start with
// kMarkerPrefix: a sample crosses one gateway, never two, so no topology of gateways sends one
// back where it came from. The markers also let two gateways between the same two domains
// find each other (gateway_writers) and pass each sample on once (Gateway's election).
//
// Threading: an End calls its sinks from its own threads (a Spindle listener thread, the RTPS
// end's reader thread); deliver() may be called from any thread. Counters are atomic.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <spindle/types/dynamic_data.hpp>

#include "config.hpp"

namespace spindle::gateway {

inline constexpr const char* kMarkerPrefix = "spindle-gateway/1 ";

struct Message {
  enum class Kind { Data, Dispose, Unregister };
  Kind kind = Kind::Data;
  // Data: the sample, or only its key members where `bytes` is set. Dispose/Unregister: a
  // sample whose key members name the instance.
  std::shared_ptr<const types::Json> value;
  // Data, where the reader had them: the sample as received (encapsulated). A writer whose
  // encoding they are in passes them on as they are: no decoding or encoding on the way.
  std::shared_ptr<const std::vector<std::byte>> bytes;
  int64_t source_ns = 0;  // source timestamp, nanoseconds since the epoch
};

// Per topic and direction.
struct RouteStats {
  std::atomic<uint64_t> data{0};  // samples written on the far side
  std::atomic<uint64_t> disposed{0};
  std::atomic<uint64_t> unregistered{0};
  std::atomic<uint64_t> from_gateways{0};  // read but not passed on: a gateway wrote them
  std::atomic<uint64_t> failed{0};         // could not be encoded or written on the far side
  std::atomic<uint64_t> standby{0};        // not passed on: another gateway passes this route on
};

using Sink = std::function<void(const Message&)>;

class Outlet {
 public:
  virtual ~Outlet() = default;
  // Writes `m` into the End's domain; counts it, or counts and logs a failure. Never throws.
  virtual void deliver(const Message& m) = 0;
};

struct TopicPlan {
  const TopicConfig* config = nullptr;
  const types::Type* type = nullptr;
};

class End {
 public:
  virtual ~End() = default;
  [[nodiscard]] virtual const EndConfig& config() const = 0;
  // A writer whose USER_DATA is `marker`.
  [[nodiscard]] virtual std::unique_ptr<Outlet> open_writer(const TopicPlan& t, RouteStats& stats,
                                                            const std::string& marker) = 0;
  // `sink` gets every sample of an application's writer; `stats` counts what is skipped.
  virtual void open_reader(const TopicPlan& t, Sink sink, RouteStats& stats) = 0;
  // Samples read before start() wait for it.
  virtual void start() = 0;
  // Stops calling sinks; returns when no sink runs.
  virtual void stop() = 0;
  // Bytes from the domain that did not decode as the topic's type (RTPS: refused by the
  // sertype); Spindle decodes before the reader sees them and counts nothing here.
  [[nodiscard]] virtual uint64_t refused() const { return 0; }
  // A writer alive in this End's domain, as its discovery data shows it.
  struct Publication {
    std::string topic;
    std::string type;
    std::string user_data;
  };
  [[nodiscard]] virtual std::vector<Publication> publications() = 0;
  // The USER_DATA of every gateway writer (kMarkerPrefix...) of `topic` alive in this End's
  // domain (this gateway's own among them).
  [[nodiscard]] std::vector<std::string> gateway_writers(const std::string& topic);
  // {topic name, type name} of every writer alive in this End's domain that no gateway made.
  [[nodiscard]] std::vector<std::pair<std::string, std::string>> application_topics();
  // "spindle:0", "rtps:1": the domain, as markers name it.
  [[nodiscard]] std::string domain_name() const {
    return std::string(config().kind == EndKind::Spindle ? "spindle:" : "rtps:") +
           std::to_string(config().domain);
  }
};

// The key members of `sample` alone (null for a keyless type): what a Message needs besides
// bytes that are passed on as they are.
[[nodiscard]] types::Json key_members(const types::Type& type, const types::Json& sample);
// The full sample of a Data message: `value`, or `bytes` decoded where `value` holds only
// the key. Throws types::DataError.
[[nodiscard]] std::shared_ptr<const types::Json> full_value(const types::Type& type,
                                                            const Message& m);
// Whether encapsulated `bytes` are in encoding `e`.
[[nodiscard]] bool in_encoding(const std::vector<std::byte>& bytes, cdr::Encoding e);

[[nodiscard]] std::unique_ptr<End> make_spindle_end(const EndConfig& config);
[[nodiscard]] std::unique_ptr<End> make_rtps_end(const EndConfig& config);

// What the samples of a reader's batches said about their instances, so that a dispose or
// unregister that the reader folded into a data sample's instance state (no invalid sample
// of its own) is still passed on, once, after the instance's last sample.
struct BatchItem {
  int64_t instance = 0;
  bool valid = false;
  bool disposed = false;    // instance state NOT_ALIVE_DISPOSED
  bool no_writers = false;  // instance state NOT_ALIVE_NO_WRITERS
  bool from_gateway = false;
  Message message;  // Data for a valid sample; the key for an invalid one
};

class Batches {
 public:
  // The messages to pass on for one batch (in the order taken). `more`: the take was cut at
  // its limit, so an instance's end folded into its last sample here may show again in the
  // next batch; it is held until a batch without more (or that sample's successor) decides.
  [[nodiscard]] std::vector<Message> add(std::vector<BatchItem>& batch, bool more);

 private:
  std::vector<std::pair<int64_t, Message>> held_;
};

}  // namespace spindle::gateway
