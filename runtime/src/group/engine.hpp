// spindle::group::Engine: this process's membership in its domain's group (DESIGN §1, §7)
// — the view engine. From one View it builds the view's SST, predicates, SMC and
// predicate loop (a ViewState), connects them over the transport, runs the loop on the
// Runtime's protocol thread, and at the next view tears them down and builds the next
// (install()). DCPS sees only this narrow interface:
//
//   publish   reserve(channel, size) / commit / abandon: a message into the subgroup that
//             carries a channel (a topic's ordered or unordered stream) in this view
//   upcalls   Client::on_deliver (message batches, in delivery order) on the protocol
//             thread; on_member_lost and on_view while a view is installed, between the
//             last delivery of the old view and the first of the new; on_halt; on_rejoin
//             (control thread) when a halted member got back in (rejoin_with)
//
// Failures and leaves (membership.hpp): a suspicion or a leaving member starts the view
// change protocol in the SST; once it decided, the next view — this one minus the removed
// members — is installed on the runtime's control thread: this node's messages past the
// ragged edge are sent again, first thing, in the new view.
//
// Which subgroup a channel travels in is the engine's business (layout.hpp): no DCPS file
// names a subgroup. The client tells what it needs (layout_demand(): who writes and who
// reads each topic, and the generation of its endpoint table); when that changes
// (demand_changed()), the engine asks for a view change that removes nobody (a relayout,
// batched over kLayoutBatch) if the view's layout or generation is not the demand's. Every view
// change lays the next view out from the demand as it stands after the ragged edge, identical at
// every survivor. A write on a channel this view has no subgroup for waits for the next view when
// the layout the demand calls for makes this node a sender of it, and otherwise goes nowhere
// (nobody reads it).
//
// View changes and loans. install() wedges the current view first: new reservations wait
// (writers already sleeping in a full ring are woken) and resume in the next view with what
// is left of their deadline. A Loan holds its ViewState, so a slot loaned before a view
// change stays valid memory; committing it after the change re-publishes its bytes in the
// current view (one copy), so no loan dangles and none is lost.
//
// Threading: built, install()ed and destroyed on a control thread (the participant's, or a
// test's). reserve/commit/abandon/in_flight/max_message from any application thread,
// concurrently (the SMC's lock-free path; a view change waits for reservations in progress
// to finish). Client upcalls on the protocol thread. status() from any thread. Lock order:
// joins_mu_, then view_mu_ (a leaf); counts_mu_ is a leaf of its own.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <spindle/transport/transport.hpp>

#include "group/beacon.hpp"
#include "group/join.hpp"
#include "group/layout.hpp"
#include "group/membership.hpp"
#include "group/message.hpp"
#include "group/packed.hpp"
#include "group/runtime.hpp"
#include "group/view.hpp"

namespace spindle {
struct DomainStatus;
}  // namespace spindle
namespace spindle::smc {
struct Reservation;
}  // namespace spindle::smc

namespace spindle::group {

struct ViewState;

// The DCPS side of the engine (protocol thread).
class EngineClient {
 public:
  virtual ~EngineClient() = default;
  // Messages that became deliverable, in delivery order (one subgroup, one step).
  virtual void on_deliver(std::span<const Message> batch) = 0;
  // A member is suspected (`left`: it disconnected cleanly, its participant closed).
  virtual void on_member_lost(NodeId node, bool left, const std::string& why) = 0;
  // A view was installed (after the first one, which the constructor builds).
  virtual void on_view(const View& view) = 0;
  // A sender of `subgroup` needs slots whose messages this member still holds in place
  // (Message::pins): let go of the holds not lent to the application, keeping copies.
  // Protocol thread, outside on_deliver.
  virtual void unpin(std::uint32_t subgroup) { (void)subgroup; }
  // This member stopped: it lost contact with half or more of its view (majority rule) and
  // will deliver nothing more; `why` says so for the user.
  virtual void on_halt(const std::string& why) = 0;
  // This member, halted, got back into its domain (Engine::rejoin_with): `view` is built and
  // connected, its protocol thread not started yet; `state` is the state transfer (empty
  // when it founded the domain anew). Control thread.
  virtual void on_rejoin(const View& view, std::span<const std::byte> state) {
    (void)view;
    (void)state;
  }
  // This member missed messages of these topics in the view that is ending: it was left
  // behind in their subgroups for a lag (smc.hpp) and a sender rewrote slots before it took
  // them. Control thread, at the view boundary: after the last delivery of that view, before
  // state_for_joiner() and on_view().
  virtual void on_gaps(std::span<const std::uint64_t> topics) { (void)topics; }
  // What a participant joining in the next view receives besides the view (the state
  // transfer): called on the control thread of the leader, at the view boundary. `subject`:
  // in a secured domain, the joiner's certificate subject (what it may read of the retained
  // history depends on it: docs/security.md); empty otherwise.
  [[nodiscard]] virtual std::vector<std::byte> state_for_joiner(std::string_view subject) {
    (void)subject;
    return {};
  }
  // Every channel's writers and readers as this member knows them (layout.hpp), from the
  // records delivered so far: called on the control thread, at a view boundary (after the
  // ragged edge) and after demand_changed().
  [[nodiscard]] virtual Demand layout_demand() { return {}; }
  // The channel one of this member's own messages travels on (control thread, at a view
  // boundary: where to send it again); nullopt when it cannot tell.
  [[nodiscard]] virtual std::optional<Channel> channel_of(std::span<const std::byte> message) {
    (void)message;
    return std::nullopt;
  }

 protected:
  EngineClient() = default;
  EngineClient(const EngineClient&) = default;
  EngineClient& operator=(const EngineClient&) = default;
};

// A slot reserved for one message, written in place, then commit()ted or abandon()ed.
// A loan on a channel nobody reads in its view (no subgroup) has no slot: its bytes go to
// `scratch`, and its commit publishes them only if a subgroup exists by then. A loan larger
// than a slot (`large`) is RDMC buffer space (or `scratch`, in a subgroup of this member
// alone), and `slot` holds the descriptor that keeps the message's place in the order.
struct Loan {
  Channel channel;
  std::byte* data = nullptr;  // `capacity` writable bytes, 64-byte aligned, in the slot itself
  std::size_t capacity = 0;
  std::uint32_t subgroup = 0;
  std::uint64_t index = 0;
  std::shared_ptr<ViewState> view;  // the view it was reserved in: keeps the slot alive
  std::shared_ptr<void> scratch;    // owns `data` where there is no slot
  bool large = false;
  std::byte* slot = nullptr;  // large: the descriptor's slot
  std::uint32_t slot_capacity = 0;
  // A record of a packed slot (group/packed.hpp; Bus::append): `data` is the record's message,
  // `record` bytes into the slot; `appended` when the slot was committed before.
  bool packed = false;
  bool appended = false;
  std::uint32_t record = 0;
  [[nodiscard]] bool valid() const noexcept { return data != nullptr; }
};

// How a halted member gets back into its domain (docs/membership.md, "Rejoining"): the
// join port of create_participant, the simulator's join hub. One attempt at a time, on the
// engine's control thread, never blocking for long.
struct Rejoined {
  View view;                       // the welcome's view, or a first view of this member alone
  std::vector<std::byte> state;    // the state transfer; empty when founding
  std::unique_ptr<JoinPort> port;  // founding: the domain's join port, bound
};
class Rejoiner {
 public:
  virtual ~Rejoiner() = default;
  // One attempt: the view to install, or nullopt for "not now" (asked again later).
  [[nodiscard]] virtual std::optional<Rejoined> attempt() = 0;
  // An answer is on its way (the request went out, and attempt() does not wait for it): look
  // again at once rather than after kRejoinRetry — a welcome must be taken up quickly, or
  // the domain removes the joiner that does not connect.
  [[nodiscard]] virtual bool answer_due() const { return false; }

 protected:
  Rejoiner() = default;
  Rejoiner(const Rejoiner&) = default;
  Rejoiner& operator=(const Rejoiner&) = default;
};

// How often a halted member asks to come back, and looks for an answer on its way.
inline constexpr std::chrono::milliseconds kRejoinRetry{200};
inline constexpr std::chrono::microseconds kRejoinPoll{50};
// How often a secured member reads its revocation list again (watch_revocations()).
inline constexpr std::chrono::milliseconds kRevocationPoll{500};

struct EngineStats {
  std::uint64_t published = 0;    // messages this node committed
  std::uint64_t republished = 0;  // loans committed after a view change, copied forward
  std::uint64_t views = 1;        // views installed, the first included
  std::uint64_t resent = 0;       // own messages sent again after a view change
  std::uint64_t unread = 0;       // messages committed on a channel nobody read (dropped)
  std::uint64_t relayouts = 0;    // view changes this member asked for to lay subgroups out
  std::uint64_t large_sent = 0;   // messages larger than a slot this node committed
  std::uint64_t rejoins = 0;      // times this member halted and got back into its domain
  std::uint64_t pushed = 0;       // messages the writer's own thread sent (nobody stepped)
  std::uint64_t packed = 0;       // messages that joined a slot committed before (group/packed.hpp)
  // Write batches this member's SSTs handed its transport (one per peer and flush: over tcp
  // one send of frames; heartbeats apart): a round trip's pushes, counted.
  std::uint64_t batches = 0;
};

// What this node's engine delivered and sent of one topic (topic 0: the builtin stream), over
// every view: the per-topic counts of status(). Counted once per delivery upcall and once per
// commit, relaxed; never reset.
struct TopicCounts {
  std::atomic<std::uint64_t> delivered{0};
  std::atomic<std::uint64_t> delivered_bytes{0};
  std::atomic<std::uint64_t> sent{0};
  std::atomic<std::uint64_t> sent_bytes{0};
};

// The slot flag of a message larger than its slot: the slot holds a LargeDescriptor, the
// bytes travel by RDMC (smc::Smc::commit's flags).
inline constexpr std::uint32_t kLargeMessage = 2;
// The slot flag of a message a view change sent again: in an unordered subgroup a member may
// have taken it in the view before (smc::Smc::resend), so a reader drops it when it took its
// writer's number already.
inline constexpr std::uint32_t kResent = 4;

// How long the engine gathers endpoint changes before it asks for a relayout.
inline constexpr std::chrono::milliseconds kLayoutBatch{5};

// What the DCPS layer (dcps::Participant, dcps::Router, the entities) uses of the group
// beneath it. A member's is the view engine (Engine, below); an external client's is its link
// to a member that relays for it (client/client_bus.hpp): that member hands on its deliveries,
// views and suspicions, and publishes the client's messages as its own (docs/membership.md,
// "External clients"). The calls mean what Engine's say.
class Bus {
 public:
  using Clock = std::chrono::steady_clock;
  virtual ~Bus() = default;
  virtual void start(EngineClient& client) = 0;
  virtual void stop() = 0;
  virtual void leave() = 0;
  virtual void closing() = 0;
  virtual void demand_changed() = 0;
  // A secured domain's permissions document changed at every member at one point of the
  // order (docs/security.md, "Changing the permissions"): layouts from now on grant by
  // `permissions`, and joiners must hold it. A client has none to change.
  virtual void set_permissions(std::shared_ptr<const security::Permissions> permissions) {
    (void)permissions;
  }
  virtual void hold_sends(Channel channel) = 0;
  virtual void release_sends(Channel channel) = 0;
  virtual void shutdown() = 0;
  [[nodiscard]] virtual std::string halted() const = 0;
  [[nodiscard]] virtual NodeId node() const noexcept = 0;
  [[nodiscard]] virtual View view() const = 0;
  [[nodiscard]] virtual Runtime& runtime() noexcept = 0;
  [[nodiscard]] virtual std::string_view transport_kind() const noexcept = 0;
  virtual bool drive(TimePoint deadline, core::FunctionRef<bool()> done) = 0;
  [[nodiscard]] virtual std::uint32_t max_message(Channel channel) const = 0;
  [[nodiscard]] virtual std::uint64_t max_large_message() const = 0;
  // The largest message this node may send on `channel` in the installed view: its
  // subgroup's slot, or its RDMC space where larger (which grows for an unbounded type,
  // ChannelDemand::room). nullopt where that is not known here (no subgroup in which this
  // node sends, or a client, whose relay sends).
  [[nodiscard]] virtual std::optional<std::uint64_t> sendable(Channel channel) const {
    (void)channel;
    return std::nullopt;
  }
  // A writer of this node asked for room for messages of `bytes` on `channel` (its record
  // says so, ChannelDemand::room): until a view gives it, reserve() of such a message waits
  // for the next view rather than refuse it.
  virtual void expect_room(Channel channel, std::uint64_t bytes) {
    (void)channel;
    (void)bytes;
  }
  [[nodiscard]] virtual std::uint64_t in_flight(Channel channel) const = 0;
  // Local delivery before write() returns (docs/dcps.md, "Your own samples"): where only
  // this process holds places in `channel`'s order (every member of its subgroup is this
  // node or another participant of this process), a mark of what this node sent so far
  // (local_sent_mark, right after commit()), and whether every member that holds the ring
  // delivered everything up to it (delivered_locally). Elsewhere, and on a client, there is
  // no mark.
  struct SentMark {
    std::uint64_t epoch = 0;
    std::uint64_t count = 0;
  };
  [[nodiscard]] virtual std::optional<SentMark> local_sent_mark(Channel channel) const {
    (void)channel;
    return std::nullopt;
  }
  [[nodiscard]] virtual bool delivered_locally(Channel channel, SentMark mark) const {
    (void)channel;
    (void)mark;
    return true;
  }
  [[nodiscard]] virtual Loan reserve(Channel channel, std::size_t size,
                                     Clock::time_point deadline) = 0;
  virtual void commit(Loan& loan, std::size_t size, Clock::time_point deadline) = 0;
  // reserve() for a message that is committed as soon as it is written (never a loan held for
  // a while): a member adds it to the slot it committed last while that has not gone out
  // (several small messages per slot, group/packed.hpp), and frames it in a slot of its own
  // otherwise. commit() it at once: its slot waits for it.
  [[nodiscard]] virtual Loan append(Channel channel, std::size_t size, Clock::time_point deadline) {
    return reserve(channel, size, deadline);
  }
  // What of `topic` this node's readers and stores take (dcps::Router tells each change,
  // protocol or application thread). A member receives what its subgroups deliver and
  // ignores this; a client asks its relay for these topics only.
  virtual void want(std::uint64_t topic, Want want) {
    (void)topic;
    (void)want;
  }
  // A client's: a member relays its messages (relay(), which may change when it fails over to
  // another), and it keeps no logs.
  [[nodiscard]] virtual bool relayed() const noexcept { return false; }
  // Whether this node gets back into its domain by itself after it halted (a member with a
  // rejoiner, a client that connects to a relay again): what it announces while halted is
  // announced with everything else once it is back.
  [[nodiscard]] virtual bool rejoins() const noexcept { return false; }
  [[nodiscard]] virtual NodeId relay() const noexcept { return 0; }
  // What this node sees of its domain now (<spindle/domain_status.hpp>): the view, and where
  // it can tell, the SST counters of its subgroups and its per-topic counts; topic names and
  // the domain id are the caller's to add. Any thread; it never waits on the protocol thread.
  // This default: the view alone.
  virtual void status(spindle::DomainStatus& out) const;
  [[nodiscard]] Executor& executor() noexcept { return runtime().executor(); }
  [[nodiscard]] bool on_protocol_thread() noexcept { return runtime().on_protocol_thread(); }

 protected:
  Bus() = default;
  Bus(const Bus&) = default;
  Bus& operator=(const Bus&) = default;
};

class Engine final : public Bus {
 public:
  using Clock = std::chrono::steady_clock;

  // Builds the first view and connects to its members (blocking up to `connect_timeout`).
  // Throws dds::core::Error naming the members it could not reach. The engine owns or
  // borrows the transport (the simulator's network owns its nodes' transports).
  // `layout` sizes the per-topic subgroups of later views (the domain's engine settings).
  Engine(View first, std::unique_ptr<transport::Transport> transport,
         std::unique_ptr<Runtime> runtime, std::chrono::milliseconds connect_timeout,
         std::uint32_t domain_id, LayoutSettings layout = {});
  Engine(View first, transport::Transport& transport, std::unique_ptr<Runtime> runtime,
         std::chrono::milliseconds connect_timeout, std::uint32_t domain_id,
         LayoutSettings layout = {});
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Starts the protocol thread with `client` receiving the upcalls. Call it once the client
  // is ready: peers may have sent already, and a message delivered before would be lost.
  void start(EngineClient& client) override;
  // Stops the protocol thread (no more upcalls), then the executor (after the jobs already
  // queued). Idempotent; the owner calls it before it goes.
  void stop() override;

  // Installs `next` (control thread; not from an upcall): wedges the current view, stops
  // its loop, disconnects, builds and connects the next, starts its loop and tells the
  // client. Members of `next` it cannot reach are suspected in it (a view change follows).
  void install(View next, std::chrono::milliseconds connect_timeout);

  // This member leaves on purpose: the others remove it without counting it as a failure
  // (blocks until its leaving flag went out, at most a short while). Then destroy it.
  void leave() override;
  // This member is closing and will leave(): losing the others meanwhile is no failure.
  void closing() override;
  // The client's demand changed (an endpoint record was applied): lay out again if the
  // view's subgroups no longer fit it (any thread; batched).
  void demand_changed() override;
  // A writer whose every message must reach a subgroup (it retains history: its channel has
  // a subgroup once its record is known, readers or not) holds its channel from creation:
  // writes on it wait for the view that makes this node a sender, rather than go nowhere
  // before its record is applied. Each hold is released once (any thread).
  void hold_sends(Channel channel) override;
  void release_sends(Channel channel) override;

  // Joining (join.hpp). While this member leads, it holds the domain's join port (`port`:
  // the TCP one, or the simulator's) and admits participants that agree on `settings`;
  // whoever leads next opens its own. A member that halts or stops lets go of it.
  void serve_joins(std::unique_ptr<JoinPort> port, std::vector<transport::AgreedSetting> settings);
  // External clients that come to the join port go to `handler` (JoinPort::set_client_handler)
  // while this member leads. Any thread; after serve_joins().
  void route_clients(JoinPort::ClientHandler handler);
  // A halted member asks `rejoiner` to get back into the domain, every kRejoinRetry until it
  // does (or closes): then it installs the view it got as a new member with the same node
  // id, and the client hears on_rejoin(). Without one, a halted member stays halted. Set it
  // before start() (or, in the simulator, from the thread that runs it).
  void rejoin_with(std::unique_ptr<Rejoiner> rejoiner);
  // Discovery across hosts (beacon.hpp): while this member leads and runs, `beacon`
  // announces the domain — its view's identity and size, and its join port at `join_ipv4`
  // (network byte order) — and it listens meanwhile whatever it is. A member that hears
  // another domain of its id and join port that wins over its own (wins_over) halts, saying
  // so: its rejoiner takes it into the larger one (merge by restart of the smaller side).
  // Any thread, before start(); the engine lets go of the beacon's listener when it stops.
  void announce_on(std::shared_ptr<Beacon> beacon, std::uint32_t join_ipv4);
  // Revocation at run time (docs/security.md, "Revocation"): every kRevocationPoll this
  // member reads security.crl again (Credentials::reload_crl); a member of the view whose
  // certificate serial the list now revokes is evicted (Membership::evict), so that the next
  // view goes on without it, and every view installed is looked at the same way. A list that
  // does not load is said once; the one in force stays. Any thread, before start().
  void watch_revocations(std::shared_ptr<const security::Credentials> credentials);
  void set_permissions(std::shared_ptr<const security::Permissions> permissions) override;
  // Evicts `node` for `why` (its certificate revoked: watch_revocations(), or a test's
  // fault): the next view goes on without it (Membership::evict), any view installed with it
  // still in evicts it again, and while this member leads, the join port refuses it, saying
  // why. Any thread.
  void evict(NodeId node, const std::string& why);
  // Stops (stop()) and closes this member's connections: it is no member of the group any
  // more. Idempotent; the destructor does it too.
  void shutdown() override;
  // Why this member halted, empty while it runs.
  [[nodiscard]] std::string halted() const override;
  [[nodiscard]] bool rejoins() const noexcept override { return rejoiner_ != nullptr; }
  // Fault injection for the simulator: this member stops taking part in view changes while
  // its heartbeat goes on (membership.hpp, "Progress"); the others must suspect it.
  void stall_view_changes();
  // Fault injection: this member stops receiving and delivering in the current view's
  // subgroups while its heartbeat goes on (smc.hpp); the others must suspect it.
  void stall_deliveries();
  // Fault injection: ends stall_deliveries() (a paused process that runs again).
  void resume_deliveries();
  // Fault injection: RDMC moves nothing here (no header taken, no block sent or landed
  // past the transport's own receives) until resume_transfers(): with stall_deliveries(),
  // a process stopped as a whole.
  void stall_transfers();
  void resume_transfers();
  // Fault injection: this member writes "`owner` suspects `victim`" into `owner`'s SST row at
  // every other member of the current view, 8 bytes through its transport like any write —
  // what a buggy or hostile member could try; the row check refuses it and suspects this
  // member (docs/membership.md, "Rows belong to their owners"). Returns the writes posted
  // (0 if either is not a member). Any thread.
  std::size_t forge_suspicion(NodeId owner, NodeId victim);

  [[nodiscard]] NodeId node() const noexcept override { return transport_->self(); }
  [[nodiscard]] std::uint32_t domain_id() const noexcept { return domain_id_; }
  [[nodiscard]] View view() const override;
  [[nodiscard]] Runtime& runtime() noexcept override { return *runtime_; }
  [[nodiscard]] Executor& executor() noexcept { return runtime_->executor(); }
  [[nodiscard]] std::string_view transport_kind() const noexcept override {
    return transport_->kind();
  }
  [[nodiscard]] bool on_protocol_thread() const noexcept { return runtime_->on_protocol_thread(); }
  // An application thread waiting for done() runs the protocol's steps meanwhile, for at
  // most the idle spin without work (Runtime::drive): true once done() held; false when it
  // stopped driving for another reason (the caller then sleeps its own way). Never from
  // the protocol thread.
  bool drive(TimePoint deadline, core::FunctionRef<bool()> done) override {
    return runtime_->drive(deadline, idle_spin_, done);
  }

  // The largest message one slot of `channel`'s subgroup takes.
  [[nodiscard]] std::uint32_t max_message(Channel channel) const override;
  // The largest message at all: larger than a slot, it goes by RDMC (the view's knobs).
  [[nodiscard]] std::uint64_t max_large_message() const override;
  [[nodiscard]] std::optional<std::uint64_t> sendable(Channel channel) const override;
  void expect_room(Channel channel, std::uint64_t bytes) override;
  // Messages this node sent on `channel` that some member has not delivered yet.
  [[nodiscard]] std::uint64_t in_flight(Channel channel) const override;
  [[nodiscard]] std::optional<SentMark> local_sent_mark(Channel channel) const override;
  [[nodiscard]] bool delivered_locally(Channel channel, SentMark mark) const override;

  // A slot for a message of `size` bytes, sleeping while the ring is full until `deadline`
  // (then dds::core::TimeoutError). Larger than max_message(): RDMC buffer space and a
  // slot for its descriptor, sleeping while the space is taken (back-pressure);
  // dds::core::PreconditionNotMetError past its subgroup's RDMC space (max_large_message() at
  // most; none where its writers' samples all fit a slot) or in the builtin subgroup; but
  // where a writer of this node asked for that much room (expect_room), it waits for a view
  // that gives it until `deadline` (then TimeoutError).
  // Across a view change it waits for the next view. On a channel this view
  // has no subgroup for (nobody reads it) a loan of private memory (Loan::scratch), unless
  // the demand makes this node a sender: then it waits for the view that lays it out.
  [[nodiscard]] Loan reserve(Channel channel, std::size_t size,
                             Clock::time_point deadline) override;
  // Publishes the loan's first `size` bytes. A loan of an earlier view is copied into a slot
  // of the current one first (waiting until `deadline` for one, as reserve()).
  void commit(Loan& loan, std::size_t size, Clock::time_point deadline) override;
  [[nodiscard]] Loan append(Channel channel, std::size_t size, Clock::time_point deadline) override;

  [[nodiscard]] EngineStats stats() const;
  // The view, the counters of every subgroup this member belongs to, as its copy of the SST
  // holds them, and the per-topic counts.
  void status(spindle::DomainStatus& out) const override;

 private:
  Engine(View first, std::unique_ptr<transport::Transport> owned, transport::Transport* t,
         std::unique_ptr<Runtime> runtime, std::chrono::milliseconds connect_timeout,
         std::uint32_t domain_id, LayoutSettings layout);
  // Control thread: compares the layout the demand calls for with `vs`'s and asks for a
  // relayout where they differ.
  void check_layout(const std::shared_ptr<ViewState>& vs);
  // reserve(), or append() with `pack`.
  [[nodiscard]] Loan reserve(Channel channel, std::size_t size, Clock::time_point deadline,
                             bool pack);
  // A loan with private memory for a channel nobody reads in this view.
  [[nodiscard]] static Loan scratch_loan(Channel channel, std::size_t size);
  // Waits until a view after `vs` is installed (or this member halted), or, given a
  // channel, until this node no longer means to send on it (check_layout(): no relayout
  // will come for it); false at `deadline`.
  [[nodiscard]] bool wait_for_view_after(const std::shared_ptr<ViewState>& vs,
                                         Clock::time_point deadline,
                                         const Channel* unless_unwanted = nullptr);
  [[nodiscard]] std::shared_ptr<ViewState> current() const;
  std::shared_ptr<ViewState> build(const View& v, std::chrono::milliseconds connect_timeout,
                                   bool first);
  // The view's RDMC groups, built before it connects (build()).
  void build_large(ViewState& vs);
  // A loan for a message larger than a slot of subgroup `sg` (reserve()); nullopt when the
  // view ended meanwhile (reserve in the next one).
  [[nodiscard]] std::optional<Loan> reserve_large(const std::shared_ptr<ViewState>& vs,
                                                  std::uint32_t sg, Channel channel,
                                                  std::size_t size, Clock::time_point deadline);
  // A slot of `bytes` in subgroup `sg` of `vs`, sleeping (or, simulated, running the other
  // members) while the ring is full, until `deadline`.
  [[nodiscard]] smc::Reservation reserve_slot(ViewState& vs, std::uint32_t sg, std::uint32_t bytes,
                                              Clock::time_point deadline);
  // Commits a large loan of the current view (view_mu_ held).
  void commit_large(Loan& loan, std::size_t size);
  // Protocol thread: RDMC transfers on, and the descriptors of those complete everywhere.
  bool pump_large(ViewState& vs);
  void on_deliver(ViewState& vs, std::span<const Message> batch);
  // Counts `batch` (its topics' TopicCounts) and hands it to the client.
  void deliver_up(ViewState& vs, std::span<const Message> batch);
  // Counts one message of `size` bytes committed on `loan`'s subgroup.
  static void count_sent(const Loan& loan, std::size_t size) noexcept;
  // Recipients of copies of large messages (docs/dev/rdmc.md, "Copies"; protocol thread, or
  // control thread with it stopped). A copy taken for delivery: `keep` holds its bytes.
  struct CopyOf {
    std::shared_ptr<void> keep;
    std::span<const std::byte> bytes;
  };
  enum class CopyState { here, coming, none };
  CopyState copy_for(ViewState& vs, const Message& m, CopyOf& copy);
  void deliver_copies(ViewState& vs, std::span<const Message> batch);
  // Delivers what waited for copies that came since; `ending`: the view ends, and what
  // still waits goes without its large message (skipped, counted).
  void deliver_behind(ViewState& vs, bool ending);
  void suspect_descriptor(ViewState& vs, const Message& m, const std::string& what);
  // Protocol thread: the membership protocol decided; the install goes to control().
  void decided(const View& ending, const ViewDecision& d);
  // Control thread: installs the view after `ending`, with the ragged edge `d`.
  void change_view(std::shared_ptr<ViewState> ending, ViewDecision d);
  // start()'s work, on the control thread.
  void start_now(EngineClient& client);
  bool end_view(const std::shared_ptr<ViewState>& ending);
  void halt(const std::string& why);
  // Control thread: one rejoin attempt (rejoin_with), and the next one scheduled if it failed.
  void try_rejoin();
  void schedule_rejoin(std::chrono::nanoseconds after = kRejoinRetry);
  // Control thread: reads the revocation list again, evicts whom it revokes, comes back
  // after kRevocationPoll.
  void check_revocations();
  // layout_ as it stands (its permissions may change: set_permissions).
  [[nodiscard]] LayoutSettings layout_settings() const;
  // The members of `vs` whose certificates the list in force revokes join those evict()
  // named; every one of them in `vs` is evicted there (Membership::evict).
  void evict_revoked(ViewState& vs);
  // Why the revocation list in force revokes `m`'s certificate; empty where it does not.
  [[nodiscard]] std::string revocation_of(const Member& m) const;
  // What halted() says of a member that stopped because it `why`.
  [[nodiscard]] std::string stopped(const std::string& why) const;
  // Control thread, transport disconnected (replace()): releases the regions of earlier
  // views nothing holds any more (loans keep their view).
  void release_retired();
  // Control thread, connected to a later view: the memory of retired views nothing holds
  // any more goes now (Transport::retire_region), not at the next view change; while one is
  // still held (a loan, a thread that looked at it), it looks again shortly.
  void free_retired();
  void confirm_joiners(ViewState& vs);
  void retire(const std::shared_ptr<ViewState>& old);
  void on_join(PendingJoin join);
  // Holds the join port while this member leads and runs, lets go of it otherwise
  // (control thread or start).
  void update_join_port();
  // What the beacon announces: this view while this member leads and runs, else nothing.
  void update_announcement(const std::shared_ptr<ViewState>& vs, bool leads);
  // The beacon's thread: another domain of our id was heard (announce_on).
  void on_heard(const Announcement& theirs);
  // Turns away every joiner waiting for a view (with kLeaderLeaving: they ask again).
  void refuse_pending_joins();
  struct Resend {
    std::uint32_t subgroup;
    std::vector<std::byte> bytes;  // larger than the slot: by RDMC again
  };
  // `demand_generation`: the demand `next` was laid out from (none: installed from outside).
  void replace(std::shared_ptr<ViewState> old, const View& next, std::vector<Resend> resend,
               std::chrono::milliseconds connect_timeout,
               std::optional<std::uint64_t> demand_generation = std::nullopt);

  std::unique_ptr<transport::Transport> owned_transport_;
  // ~Engine: the owned transport, shared with the views something still holds.
  std::shared_ptr<transport::Transport> kept_transport_;
  transport::Transport* transport_;
  std::unique_ptr<Runtime> runtime_;
  const std::uint32_t domain_id_;
  LayoutSettings layout_;         // its permissions guarded by layout_mu_ (set_permissions)
  mutable std::mutex layout_mu_;  // a leaf; guards layout_.permissions and join_settings_
  EngineClient* client_ = nullptr;

  mutable std::mutex view_mu_;       // guards current_ and wedged_ (a leaf)
  std::condition_variable view_cv_;  // a view change ended
  std::shared_ptr<ViewState> current_;
  bool wedged_ = false;
  std::uint64_t views_ = 1;
  std::chrono::milliseconds connect_timeout_;
  std::string halted_;  // guarded by view_mu_
  // Channels the demand makes this node a sender of (guarded by view_mu_): while the view
  // has no subgroup for one, its writes wait for the next view instead of going nowhere.
  std::vector<Channel> wanted_sends_;
  // Channels whose writes wait for the view that makes this node a sender even before the
  // demand says so (hold_sends()): one entry per holder.
  std::vector<Channel> held_sends_;
  // The room this node's writers asked for, by channel (expect_room(); guarded by view_mu_):
  // a larger message waits for the view that gives it, at most this large.
  std::vector<std::pair<Channel, std::uint64_t>> expected_room_;
  std::atomic<bool> layout_check_due_{false};

  struct Retired {
    std::weak_ptr<ViewState> view;
    std::vector<transport::RegionId> regions;
    bool freed = false;  // free_retired() gave its memory back
  };
  std::vector<Retired> retired_;  // control thread: views replaced, region not released yet
  std::unique_ptr<JoinPort> join_port_;
  std::shared_ptr<Beacon> beacon_;  // set before start()
  std::uint32_t beacon_ipv4_ = 0;
  std::unique_ptr<Rejoiner> rejoiner_;  // set before start(); used on the control thread
  // watch_revocations(): set before start(); the last reload error said (control thread).
  std::shared_ptr<const security::Credentials> revocation_;
  std::string revocation_error_;
  std::atomic<bool> revoked_self_{false};  // our own certificate was revoked: no rejoin
  std::mutex evicted_mu_;                  // a leaf
  std::map<NodeId, std::string> evicted_;  // evict(): node -> why; guarded by evicted_mu_
  std::atomic<std::uint64_t> rejoins_{0};
  std::vector<transport::AgreedSetting> join_settings_;
  std::mutex joins_mu_;  // before view_mu_
  struct Joining {
    PendingJoin connection;
    sst::JoinEntry entry;
    sst::JoinIdentity identity{};  // secured domains: the certificate it proved
  };
  std::map<NodeId, Joining> pending_joins_;  // admitted, not yet welcomed
  bool admitting_ = false;                   // welcomed some, their view not installed yet
  // Every second while joiners wait: WAIT to each, their patience again (control thread).
  void keep_joiners_waiting();
  bool wait_ticking_ = false;  // a keep_joiners_waiting() is scheduled (under joins_mu_)
  bool free_ticking_ = false;  // a free_retired() is scheduled (control thread)
  std::atomic<bool> closing_{false};
  std::atomic<bool> stopping_{false};
  std::atomic<bool> disconnected_{false};
  std::chrono::nanoseconds idle_spin_{};  // the knob, as the first view has it
  std::atomic<std::uint64_t> published_{0};
  std::atomic<std::uint64_t> pushed_{0};
  std::atomic<std::uint64_t> packed_{0};
  std::atomic<std::uint64_t> batches_{0};  // EngineStats::batches (the views' SSTs count)
  std::atomic<std::uint64_t> resent_{0};
  std::atomic<std::uint64_t> republished_{0};
  std::atomic<std::uint64_t> unread_{0};
  std::atomic<std::uint64_t> relayouts_{0};
  std::atomic<std::uint64_t> large_sent_{0};
  // Per topic (status()): built into each ViewState's `counts` on the control thread; entries
  // are never erased, so a ViewState's pointers stay valid.
  mutable std::mutex counts_mu_;  // guards the map, not the counts (atomics); a leaf
  std::map<std::uint64_t, std::unique_ptr<TopicCounts>> topic_counts_;
};

}  // namespace spindle::group
