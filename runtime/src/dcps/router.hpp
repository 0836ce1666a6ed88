// spindle::dcps::Router: the DCPS end of the view engine (group/engine.hpp). Out, it turns
// a sample into a message — the SampleHeader (wire.hpp) and the payload, written in place
// in a slot of the channel the writer uses. In, it parses every delivered message once and
// routes it by topic id to the local readers of that topic (TopicSink) or, for topic 0, to
// the participant's builtin handler (discovery, liveliness, goodbyes); it also passes the
// engine's member and view events on to the participant.
//
// Threading: publish/reserve/commit/abandon from any application thread (the engine's
// lock-free path). subscribe()/unsubscribe() from any thread; sinks and the handlers are
// called on the protocol thread with sinks_mu_ held (lock order: sinks_mu_ before anything a
// sink locks; nothing calls back into the Router with a sink lock held). Listeners never
// run here: they go to the engine's executor.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "dcps/wire.hpp"
#include "group/engine.hpp"

namespace spindle::dcps {

using transport::NodeId;

// A local reader of one topic (protocol thread).
class TopicSink {
 public:
  virtual ~TopicSink() = default;
  virtual void on_sample(const ParsedSample& sample, NodeId sender) = 0;
  // After the last sample of one delivery batch: apply what was collected.
  virtual void on_batch_end() = 0;
  // What of its topic it takes: a client's relay hands on only this node's own writers'
  // messages of a topic whose every sink takes only those (group::Want::own).
  [[nodiscard]] virtual group::Want wants() const { return group::Want::all; }
  // Let go of the messages it holds in place (group::Pins) that the application has not
  // taken, keeping copies (group::EngineClient::unpin). Protocol thread, sinks_mu_ held.
  virtual void unpin() {}

 protected:
  TopicSink() = default;
  TopicSink(const TopicSink&) = default;
  TopicSink& operator=(const TopicSink&) = default;
};

// A topic's store (dcps/retained.hpp): it sees each delivered message of its topic before the
// topic's readers, and ends each delivery batch before they see any of it (a durable log is
// synced there). A message it could not keep as its level promises (its log failed) goes to
// no reader: store() or end_batch() says false.
class TopicStore {
 public:
  virtual ~TopicStore() = default;
  [[nodiscard]] virtual bool store(const ParsedSample& sample) = 0;
  [[nodiscard]] virtual bool end_batch() = 0;

 protected:
  TopicStore() = default;
  TopicStore(const TopicStore&) = default;
  TopicStore& operator=(const TopicStore&) = default;
};

// What a member that relays for external clients (client/relay.hpp) sees of the stream:
// every delivery batch, view, suspicion and halt, in the order the participant sees them.
// Called with the Router's tap lock held, so that Router::at_cut() falls between two of them.
class DeliveryTap {
 public:
  virtual ~DeliveryTap() = default;
  virtual void on_batch(std::span<const group::Message> batch) = 0;
  virtual void on_view(const group::View& view) = 0;
  virtual void on_member_lost(NodeId node, bool left, const std::string& why) = 0;
  virtual void on_halt(const std::string& why) = 0;

 protected:
  DeliveryTap() = default;
  DeliveryTap(const DeliveryTap&) = default;
  DeliveryTap& operator=(const DeliveryTap&) = default;
};

struct RouterStats {
  std::uint64_t delivered = 0;  // messages delivered here (all topics, builtin included)
  std::uint64_t malformed = 0;  // messages that failed parse(); dropped
  std::string last_malformed;   // why the last one failed, and who sent it
};

// A slot loaned for one sample: the payload is written in place, after the header.
struct Slot {
  group::Loan loan;
  std::byte* payload = nullptr;  // `capacity` bytes
  std::size_t capacity = 0;
};

class Router final : public group::EngineClient {
 public:
  using Clock = std::chrono::steady_clock;
  using BuiltinHandler = std::function<void(const ParsedSample&, NodeId sender)>;
  // `left`: the member disconnected cleanly (its participant closed) rather than failed.
  using SuspicionHandler = std::function<void(NodeId node, bool left, const std::string& why)>;

  explicit Router(group::Bus& bus) : bus_(&bus) {}

  // The largest payload (after the header) one slot on `channel` takes; larger samples go by
  // RDMC, up to max_sample().
  [[nodiscard]] std::uint32_t max_payload(group::Channel channel) const;
  [[nodiscard]] std::uint64_t max_sample() const;
  // The largest payload this node may send on `channel` in the installed view, slot or RDMC
  // space (group::Bus::sendable); nullopt where not known here.
  [[nodiscard]] std::optional<std::uint64_t> sendable(group::Channel channel) const;
  // A writer of this node asked for room for payloads of `payload_size` bytes on `channel`
  // (group::Bus::expect_room).
  void expect_room(group::Channel channel, std::uint64_t payload_size);

  // Publishes one message of `payload_size` bytes: reserves a slot (sleeping while the
  // ring is full, until `deadline`), lets `fill` write the payload into the slot itself, and
  // commits it with `header`. Throws dds::core::TimeoutError when the ring (or RDMC's buffer
  // space) stayed full, dds::core::PreconditionNotMetError when the payload exceeds
  // max_sample(). If `fill`
  // throws, the slot is committed as an empty message that readers skip, and the
  // exception propagates.
  void publish(group::Channel channel, const SampleHeader& header, std::size_t payload_size,
               const std::function<void(std::span<std::byte>)>& fill, Clock::time_point deadline);
  // A slot for a loaned sample (DataWriter::loan_sample). Same errors as publish().
  // `at_once`: the caller commits it right after filling it (publish() does), so it may
  // share the slot of the message before it (group::Bus::append).
  [[nodiscard]] Slot reserve(group::Channel channel, std::size_t payload_size,
                             Clock::time_point deadline, bool at_once = false);
  // Publishes a reserved slot with `header` and `payload_size` bytes of payload.
  void commit(Slot& slot, const SampleHeader& header, std::size_t payload_size,
              Clock::time_point deadline);
  // Publishes a reserved slot as an empty message that readers skip (a returned loan).
  void abandon(Slot& slot, Clock::time_point deadline);

  // Runs `f` while no delivery is in progress (between two delivery batches): a GROUP
  // subscriber's begin/end_access, so that a batch reaches all of its readers or none
  // before the access opens (any application thread; `f` may call into sinks).
  template <class F>
  void between_deliveries(F&& f) {
    std::lock_guard lock(sinks_mu_);
    f();
  }
  void subscribe(std::uint64_t topic, TopicSink* sink);
  void unsubscribe(std::uint64_t topic, TopicSink* sink);
  // A topic's store (dcps/retained.hpp), fed every message of the topic from now on, before
  // its readers; the Router keeps it alive. Callable from the builtin handler too (a lock of
  // its own).
  void retain(std::uint64_t topic, std::shared_ptr<TopicStore> store);
  // Builtin messages (discovery, liveliness), in delivery order. Set before the engine starts.
  void set_builtin_handler(BuiltinHandler handler);
  void set_suspicion_handler(SuspicionHandler handler);
  // This member halted (majority rule): `why` is the message for the user.
  void set_halt_handler(std::function<void(const std::string& why)> handler);
  // This member got back into its domain after halting (group::Engine::rejoin_with): the
  // view and the state transfer, before its protocol thread starts (control thread).
  void set_rejoin_handler(
      std::function<void(const group::View&, std::span<const std::byte>)> handler);
  [[nodiscard]] RouterStats stats() const;
  // The relay's view of the stream (nullptr: none). Set before clients connect.
  void set_tap(DeliveryTap* tap);
  // Runs f(view) between two of the tap's calls: `view` is the last one the participant
  // took. A client's welcome (its view and state transfer) is cut here, so that the first
  // delivery it is handed is the first after that state.
  template <class F>
  void at_cut(F&& f) {
    std::lock_guard lock(tap_mu_);
    if (!cut_view_) cut_view_ = bus_->view();
    f(*cut_view_);
  }
  // The view this member's deliveries begin in, before the engine starts (later views come
  // by on_view and on_rejoin): what ParsedSample::epoch says.
  void first_view(std::uint64_t epoch) noexcept { epoch_.store(epoch, std::memory_order_relaxed); }
  // Whether a store keeps `topic` here (a retained topic: dcps/retained.hpp).
  [[nodiscard]] bool retains(std::uint64_t topic) const;

  // A refresh (docs/storage.md, "Refresh"): while this member waits for a retained topic's
  // history as it stood at the last view boundary, every message of that topic (a coherent set
  // that holds one included) is held back, in order, and goes to the store and the readers
  // once the history is in (release()). hold_back() is called at a view boundary (the
  // participant's view hook): what it held in the view that ended is delivered first.
  void hold_back(std::vector<std::uint64_t> topics);
  // The history of `topic` is in: what was held back of it goes on after the current
  // delivery batch (the builtin handler, protocol thread).
  void release(std::uint64_t topic);
  // Messages of the topics this member missed while it was left behind (EngineClient::on_gaps),
  // at the view boundary. Set before the engine starts.
  void set_gap_handler(std::function<void(std::span<const std::uint64_t>)> handler);

  // External clients (docs/membership.md): which member relays for which client node. A
  // message whose writer guid names a client's node is taken from that client's relay only.
  // The map follows the builtin subgroup's client_attached/client_detached messages (and a
  // relay's removal), so it agrees at every member at each point of that order; a joiner
  // and a client get it with the state transfer (attach()). Any thread.
  void attach(NodeId client, NodeId relay);
  // The member that sends `guid`'s messages: its node's relay for a client, else its node.
  [[nodiscard]] NodeId node_of(std::uint64_t guid) const;
  [[nodiscard]] std::vector<std::pair<NodeId, NodeId>> relayed() const;  // (client, relay)

  // group::EngineClient (protocol thread).
  void on_deliver(std::span<const group::Message> batch) override;
  void on_member_lost(NodeId node, bool left, const std::string& why) override;
  void on_view(const group::View& view) override;
  // Every sink lets go of what it holds in place (any subgroup's: most hold nothing, and a
  // sender needs its slots rarely).
  void unpin(std::uint32_t subgroup) override;
  void on_halt(const std::string& why) override;
  void on_rejoin(const group::View& view, std::span<const std::byte> state) override;
  [[nodiscard]] std::vector<std::byte> state_for_joiner(std::string_view subject = {}) override;
  void on_gaps(std::span<const std::uint64_t> topics) override;
  // The participant's side of the state transfer (control thread of the leader).
  void set_state_provider(std::function<std::vector<std::byte>(std::string_view)> provider);
  [[nodiscard]] group::Demand layout_demand() override;
  [[nodiscard]] std::optional<group::Channel> channel_of(
      std::span<const std::byte> message) override;
  // The participant's side of the layout: its demand, the views installed, and the channel
  // of one of its writers (control thread). Set before the engine starts.
  void set_layout_hooks(std::function<group::Demand()> demand,
                        std::function<void(const group::View&)> view,
                        std::function<std::optional<group::Channel>(std::uint64_t)> writer_channel);

 private:
  // A handler, copied under the lock, to call outside it.
  template <class F>
  [[nodiscard]] F copy_of(const F& handler) const {
    std::lock_guard lock(sinks_mu_);
    return handler;
  }

  group::Bus* bus_;
  mutable std::mutex relays_mu_;               // a leaf
  std::unordered_map<NodeId, NodeId> relays_;  // client node -> the member relaying for it
  // Whether `writer` may come from `sender`: its own, or its client's.
  [[nodiscard]] bool sends_for(std::uint64_t writer, NodeId sender) const;
  // Held through each upcall (delivery, view, suspicion, halt) and by at_cut(); taken before
  // sinks_mu_.
  std::mutex tap_mu_;
  DeliveryTap* tap_ = nullptr;
  std::optional<group::View> cut_view_;  // the last view the participant took (tap_mu_)
  // Serializes subscribe/unsubscribe with the Bus::want() each implies; taken before
  // sinks_mu_.
  std::mutex want_mu_;
  mutable std::mutex sinks_mu_;
  std::unordered_map<std::uint64_t, std::vector<TopicSink*>> sinks_;
  std::vector<TopicSink*> touched_;  // protocol thread: sinks that got samples this batch
  mutable std::mutex stores_mu_;     // a leaf, taken inside sinks_mu_
  std::unordered_map<std::uint64_t, std::shared_ptr<TopicStore>> stores_;
  std::atomic<bool> any_store_{false};
  // The view whose messages are delivered now (ParsedSample::epoch); set at each boundary.
  std::atomic<std::uint64_t> epoch_{0};
  // Protocol thread: a batch's messages while stores take them first (on_deliver).
  struct Routed {
    ParsedSample sample;
    NodeId sender = 0;
    TopicStore* store = nullptr;
    bool pass = true;
  };
  std::vector<Routed> routed_;
  std::vector<ParsedSample> set_;  // protocol thread: the messages of a coherent set
  std::vector<TopicStore*> touched_stores_;
  // A delivered message to its readers or the builtin handler (sinks_mu_ held).
  void route(const ParsedSample& sample, NodeId sender);
  // A batch to the stores, readers and the builtin handler (sinks_mu_ held); `hold`: messages
  // of held-back topics wait (a batch as delivered), or go on (what was held).
  void deliver(std::span<const group::Message> batch, bool hold);
  // What was held back and may go on now (`all`: everything, at a view boundary).
  void deliver_held(bool all);
  // Held back (hold_back()): the topics, and their messages with their bytes, in delivery order.
  struct Held {
    group::Message message;
    std::vector<std::byte> bytes;
    std::vector<std::uint64_t> topics;
  };
  std::mutex held_mu_;  // a leaf
  std::vector<std::uint64_t> holding_;
  std::vector<Held> held_;
  std::atomic<bool> any_held_topic_{false};
  std::atomic<bool> release_due_{false};
  std::function<void(std::span<const std::uint64_t>)> on_gaps_;
  BuiltinHandler builtin_;
  SuspicionHandler on_suspicion_;
  std::function<void(const std::string&)> on_halt_;
  std::function<void(const group::View&, std::span<const std::byte>)> on_rejoin_;
  std::function<std::vector<std::byte>(std::string_view)> state_;
  std::function<group::Demand()> demand_;
  std::function<void(const group::View&)> on_view_;
  std::function<std::optional<group::Channel>(std::uint64_t)> writer_channel_;

  std::atomic<std::uint64_t> delivered_{0};
  std::atomic<std::uint64_t> malformed_{0};
  mutable std::mutex error_mu_;
  std::string last_malformed_;
};

}  // namespace spindle::dcps
