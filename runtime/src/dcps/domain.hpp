// spindle::dcps::Domain: the engine behind one DomainParticipant — this process's
// membership in its domain's group (DESIGN §1, §7). It owns the transport, the SST, the
// predicates, SMC and the predicate thread for the current view, maps topics onto
// subgroups, puts samples into SMC slots and hands delivered ones to the local readers of
// their topic (TopicSink) and builtin messages (discovery) to the participant.
//
// Subgroup layout. Until view changes exist the domain file lists the members, and every
// topic's subgroup is the whole group with every member a potential sender (null-sends keep
// silent ones cheap). Topics with the same membership and ordering share a subgroup
// (DESIGN §7), so the static layout is two subgroups: 0 atomic (atomic, volatile, logged —
// the last two behave as atomic until the storage issue lands) and 1 unordered. A topic's
// samples are told apart by the topic id in each slot's header (wire.hpp). layout() and
// subgroup_for() are the one place a view change will replace.
//
// Threading: built and destroyed on an application thread (the participant's). publish()
// from any application thread (lock-free SMC path). subscribe()/unsubscribe() from any
// thread; sinks and the builtin handler are called on the predicate thread, with sinks_mu_
// held (lock order: sinks_mu_ before anything a sink locks; nothing calls back into the
// Domain with a sink lock held). Listeners never run here: they go to dispatcher().
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include <spindle/transport/transport.hpp>

#include "config/domain_config.hpp"
#include "dcps/dispatcher.hpp"
#include "dcps/wire.hpp"
#include "group/group.hpp"

namespace spindle::sst {
class Sst;
class Predicates;
class PredicateLoop;
}  // namespace spindle::sst
namespace spindle::smc {
class Smc;
struct Message;
}  // namespace spindle::smc

namespace spindle::dcps {

using transport::NodeId;

// The smallest slot payload the layout gives, whatever engine.slot_size says: room for a
// discovery record (discovery.hpp) with default QoS and names of a usual length.
inline constexpr std::uint32_t kMinSlotPayload = 512;

// The two subgroups of the static layout.
inline constexpr std::uint32_t kAtomicSubgroup = 0;
inline constexpr std::uint32_t kUnorderedSubgroup = 1;

// The group of the first view: the configured members, and the subgroups above.
[[nodiscard]] group::GroupDescription layout(const config::DomainConfig& config);
// The subgroup a topic's samples travel in, from its consistency level.
[[nodiscard]] std::uint32_t subgroup_for(bool unordered) noexcept;

// A local reader of one topic (predicate thread).
class TopicSink {
 public:
  virtual ~TopicSink() = default;
  virtual void on_sample(const ParsedSample& sample, NodeId sender) = 0;
  // After the last sample of one delivery batch: apply what was collected.
  virtual void on_batch_end() = 0;

 protected:
  TopicSink() = default;
  TopicSink(const TopicSink&) = default;
  TopicSink& operator=(const TopicSink&) = default;
};

struct DomainStats {
  std::uint64_t published = 0;  // messages this node put into slots
  std::uint64_t delivered = 0;  // messages delivered here (all topics, builtin included)
  std::uint64_t malformed = 0;  // slots that failed parse(); dropped
  std::string last_malformed;   // why the last one failed, and who sent it
};

class Domain {
 public:
  using Clock = std::chrono::steady_clock;
  using BuiltinHandler = std::function<void(const ParsedSample&, NodeId sender)>;
  // `left`: the member disconnected cleanly (its participant closed) rather than failed.
  using SuspicionHandler = std::function<void(NodeId node, bool left, const std::string& why)>;

  // Connects to every configured member (blocking up to engine.connect_timeout). Throws
  // dds::core::Error naming the members it could not reach.
  Domain(const config::DomainConfig& config, std::unique_ptr<transport::Transport> transport);
  // Starts the predicate thread: deliveries begin. Call it once the builtin and suspicion
  // handlers are set — peers may have sent already, and an `unordered` message delivered
  // before the builtin handler exists would be dropped (a discovery record lost for good).
  void start();
  ~Domain();
  Domain(const Domain&) = delete;
  Domain& operator=(const Domain&) = delete;

  [[nodiscard]] NodeId node() const noexcept { return config_.node_id; }
  [[nodiscard]] const config::DomainConfig& config() const noexcept { return config_; }
  [[nodiscard]] const group::GroupDescription& group() const noexcept { return group_; }
  [[nodiscard]] std::string_view transport_kind() const noexcept;

  // Messages this node sent in `subgroup` that some member has not delivered yet.
  [[nodiscard]] std::uint64_t in_flight(std::uint32_t subgroup) const noexcept;
  // The largest payload (after the header) one slot of `subgroup` takes.
  [[nodiscard]] std::uint32_t max_payload(std::uint32_t subgroup) const noexcept;

  // Publishes one message of `payload_size` bytes: reserves a slot (sleeping while the
  // ring is full, until `deadline`), writes `header`, lets `fill` write the payload into
  // the slot itself, and commits. Throws dds::core::TimeoutError when the ring stayed
  // full, dds::core::PreconditionNotMetError when the payload exceeds max_payload(). If
  // `fill` throws, the slot is committed as an empty message that readers skip, and the
  // exception propagates.
  void publish(std::uint32_t subgroup, const SampleHeader& header, std::size_t payload_size,
               const std::function<void(std::span<std::byte>)>& fill, Clock::time_point deadline);

  // A slot reserved for a loan (DataWriter::loan_sample): the application builds the
  // payload in place, then commit() or abandon(). Move-only; one per loaned sample.
  struct Slot {
    std::uint32_t subgroup = 0;
    std::byte* payload = nullptr;  // 64-byte aligned, `capacity` bytes
    std::uint32_t capacity = 0;
    std::uint64_t index = 0;
    std::byte* base = nullptr;  // where the header goes
  };
  // Reserves a slot for `payload_size` bytes (sleeping while the ring is full, until
  // `deadline`). Same errors as publish().
  [[nodiscard]] Slot reserve(std::uint32_t subgroup, std::size_t payload_size,
                             Clock::time_point deadline);
  // Publishes a reserved slot with `header` and `payload_size` bytes of payload.
  void commit(const Slot& slot, const SampleHeader& header, std::size_t payload_size);
  // Publishes a reserved slot as an empty message that readers skip (a returned loan).
  void abandon(const Slot& slot);

  void subscribe(std::uint64_t topic, TopicSink* sink);
  void unsubscribe(std::uint64_t topic, TopicSink* sink);
  // Builtin messages (discovery, liveliness), in delivery order. Set before start().
  void set_builtin_handler(BuiltinHandler handler);
  // A member suspected by the transport or by missing heartbeats (predicate thread).
  void set_suspicion_handler(SuspicionHandler handler);

  [[nodiscard]] Dispatcher& dispatcher() noexcept { return dispatcher_; }
  // True on the predicate thread (in a delivery, discovery or suspicion upcall).
  [[nodiscard]] bool on_predicate_thread() const noexcept;
  [[nodiscard]] DomainStats stats() const;

  // Stops the predicate thread (no more deliveries, discovery or suspicion callbacks),
  // then the listener thread (after the jobs already queued). Idempotent; the owner calls
  // it before it goes, so no callback reaches a half-destroyed owner.
  void stop();

 private:
  void on_deliver(std::uint32_t subgroup, std::span<const smc::Message> batch);

  config::DomainConfig config_;
  group::GroupDescription group_;
  std::unique_ptr<transport::Transport> transport_;
  std::unique_ptr<sst::Sst> sst_;
  std::unique_ptr<sst::Predicates> predicates_;
  std::unique_ptr<smc::Smc> smc_;
  std::unique_ptr<sst::PredicateLoop> loop_;
  Dispatcher dispatcher_;

  mutable std::mutex sinks_mu_;
  std::unordered_map<std::uint64_t, std::vector<TopicSink*>> sinks_;
  std::vector<TopicSink*> touched_;  // predicate thread: sinks that got samples this batch
  BuiltinHandler builtin_;
  SuspicionHandler on_suspicion_;

  std::atomic<std::uint64_t> published_{0};
  std::atomic<std::uint64_t> delivered_{0};
  std::atomic<std::uint64_t> malformed_{0};
  mutable std::mutex error_mu_;
  std::string last_malformed_;
};

}  // namespace spindle::dcps
