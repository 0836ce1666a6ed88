// spindle::client::ClientBus: an external client's way into its domain (docs/membership.md,
// "External clients"). The process is no member: it holds one TCP connection to a member
// that relays for it (client/relay.hpp), and its dcps::Participant runs on this Bus as a
// member's runs on the view engine:
//   - in: the relay hands on what it delivers of the builtin subgroup and of the topics the
//     client reads or retains, in its own delivery order (so an atomic topic's total order
//     holds), its views and its suspicions; a reader thread here makes those the upcalls
//     (it is this participant's protocol thread);
//   - out: a message goes to the relay, which publishes it; the client's guids name its own
//     node id, which the domain takes from that relay (client_attached, dcps::Router).
// The client takes part in no view: its crash or pause changes none and holds nobody. The
// relay bounds what it queues for a client that does not read; past that it drops topic
// messages (the client's readers count them in SAMPLE_LOST), never builtin ones. When its
// relay goes, the client halts as a member that lost its majority does (writes fail, readers
// lose their writers) and connects to a relay of its list again (the same or another),
// every 200 ms until it is welcomed: then it rejoins as a halted member does (on_rejoin:
// the new relay's view and state; its endpoints announced again, the same guids).
//
// Threading: the reader thread makes the upcalls; reserve/commit/want from any thread (one
// send lock); the rest as group::Bus says.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "client/relay_wire.hpp"
#include "group/engine.hpp"
#include "group/thread_runtime.hpp"

namespace spindle::client {

struct ClientSettings {
  std::uint32_t domain_id = 0;
  transport::NodeId node = 0;  // the client's node id (its guids'); unique in the domain
  std::vector<transport::NodeAddress> relays;  // tried in order
  // More relays found as it connects (the join ports of the leaders multicast discovery
  // hears), tried before `relays` at every connect and reconnect; unset: none.
  std::function<std::vector<transport::NodeAddress>()> discover;
  std::vector<transport::AgreedSetting> must_agree;
  std::chrono::milliseconds connect_timeout{5000};
};

// The client's threads and clocks: real time, the listener and control executors, and the
// reader thread as its protocol thread.
class ClientRuntime final : public group::Runtime {
 public:
  ClientRuntime() = default;
  ~ClientRuntime() override;
  ClientRuntime(const ClientRuntime&) = delete;
  ClientRuntime& operator=(const ClientRuntime&) = delete;

  [[nodiscard]] group::TimePoint now() const noexcept override;
  [[nodiscard]] std::int64_t wall_ns() const noexcept override;
  [[nodiscard]] group::Executor& executor() noexcept override { return executor_; }
  [[nodiscard]] group::Executor& control() noexcept override { return control_; }
  void start(sst::PredicateLoop& loop) override;
  void stop() override;
  [[nodiscard]] bool on_protocol_thread() const noexcept override;
  bool wait_until(group::TimePoint deadline, const std::function<bool()>& done) override;
  [[nodiscard]] bool simulated() const noexcept override { return false; }
  [[nodiscard]] group::ProcessState process_state(const group::Member&) override {
    return group::ProcessState::unknown;
  }
  void watch(std::span<const group::Member>) override {}
  // The reader thread calls this first.
  void set_protocol_thread(std::thread::id id) noexcept { protocol_.store(id); }
  void stop_executors();

 private:
  group::ThreadExecutor executor_;
  group::ThreadExecutor control_;
  std::atomic<std::thread::id> protocol_{};
};

class ClientBus final : public group::Bus {
 public:
  // Connects to the first relay of `s.relays` that welcomes it, trying those that do not
  // answer yet again until the connect timeout. Throws dds::core::Error naming every relay tried
  // and why it failed (refused: its words).
  [[nodiscard]] static std::unique_ptr<ClientBus> connect(const ClientSettings& s);
  ~ClientBus() override;
  ClientBus(const ClientBus&) = delete;
  ClientBus& operator=(const ClientBus&) = delete;

  // The state transfer of the welcome: the participant applies it as a joiner does.
  [[nodiscard]] const std::vector<std::byte>& joined_state() const noexcept { return state_; }
  [[nodiscard]] std::string relay_address() const;  // "node N at host:port"

  // group::Bus
  void start(group::EngineClient& client) override;
  void stop() override;
  void leave() override;
  void closing() override { closing_.store(true); }
  void demand_changed() override {}
  void hold_sends(group::Channel) override {}
  void release_sends(group::Channel) override {}
  void shutdown() override;
  [[nodiscard]] std::string halted() const override;
  [[nodiscard]] transport::NodeId node() const noexcept override { return node_; }
  [[nodiscard]] group::View view() const override;
  [[nodiscard]] group::Runtime& runtime() noexcept override { return runtime_; }
  [[nodiscard]] std::string_view transport_kind() const noexcept override { return "client"; }
  bool drive(group::TimePoint, core::FunctionRef<bool()>) override { return false; }
  [[nodiscard]] std::uint32_t max_message(group::Channel channel) const override;
  [[nodiscard]] std::uint64_t max_large_message() const override { return max_large_.load(); }
  [[nodiscard]] std::uint64_t in_flight(group::Channel channel) const override;
  [[nodiscard]] group::Loan reserve(group::Channel channel, std::size_t size,
                                    Clock::time_point deadline) override;
  void commit(group::Loan& loan, std::size_t size, Clock::time_point deadline) override;
  void want(std::uint64_t topic, group::Want want) override;
  [[nodiscard]] bool relayed() const noexcept override { return true; }
  [[nodiscard]] bool rejoins() const noexcept override { return true; }
  [[nodiscard]] transport::NodeId relay() const noexcept override { return relay_.load(); }

 private:
  // A relay that welcomed this client: the connection (blocking) and what the welcome said.
  struct Link {
    int fd = -1;
    transport::NodeAddress address;
    Welcome welcome;
    group::View view;
  };
  ClientBus(ClientSettings s, Link link);
  // Until a relay welcomes it again (the reader thread, after its relay went): true once
  // it did, false once stopping.
  bool reconnect();
  // One attempt at one relay; nullopt with `why` when it failed (`final`: it answered, so
  // trying again would not help).
  [[nodiscard]] static std::optional<Link> try_relay(const ClientSettings& s,
                                                     const transport::NodeAddress& a,
                                                     Clock::time_point deadline, std::string& why,
                                                     bool& final);
  void read_loop();
  // One frame from the relay made an upcall; false (and `error`) when it was bad.
  bool dispatch(FrameType t, std::span<const std::byte> body, std::vector<group::Message>& batch,
                std::string& error);
  void halt(const std::string& why);
  // The address it is connected to, or connects to next (`address_`, `fd_` under send_mu_).
  [[nodiscard]] transport::NodeAddress address() const;
  // Sends `frame` then `tail` whole, once the socket takes bytes before `deadline`
  // (dds::core::TimeoutError if it did not; a frame once begun is finished).
  void send(std::span<const std::byte> frame, std::span<const std::byte> tail,
            Clock::time_point deadline);
  // The same on `fd` (send_mu_ held, or a connection nobody else uses yet); `relay` names it
  // in errors.
  static void send_on(int fd, std::span<const std::byte> frame, std::span<const std::byte> tail,
                      Clock::time_point deadline, const std::string& relay);

  ClientSettings settings_;
  int fd_;
  transport::NodeAddress address_;
  transport::NodeId node_;
  std::atomic<transport::NodeId> relay_;
  std::atomic<std::uint64_t> max_large_;
  std::vector<std::byte> state_;
  ClientRuntime runtime_;
  group::EngineClient* client_ = nullptr;
  std::thread reader_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> closing_{false};
  std::mutex send_mu_;
  mutable std::mutex mu_;  // a leaf: what follows
  group::View view_;
  std::string halted_;
  struct Sent {
    group::Channel channel;
    std::uint64_t sent = 0;
    std::uint64_t acked = 0;
  };
  std::map<std::uint64_t, Sent> writers_;  // by writer guid
  // What of each topic it asked for (want()), asked again after a failover.
  std::map<std::uint64_t, group::Want> wants_;
};

}  // namespace spindle::client
