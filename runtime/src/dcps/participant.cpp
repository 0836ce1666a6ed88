// DomainParticipant and Topic: entity registry, discovery records in and out, matching
// (see entities.hpp).
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <fstream>
#include <iostream>
#include <thread>

#include <dds/domain/DomainParticipantListener.hpp>
#include <dds/pub/AnyDataWriter.hpp>
#include <dds/sub/AnyDataReader.hpp>
#include <dds/topic/Topic.hpp>

#include "core/yaml_reader.hpp"
#include "dcps/entities.hpp"
#include "dcps/le.hpp"
#include "qos/checks.hpp"

namespace spindle::dcps {

namespace {

// Where this participant runs, for its record (`spindle ps`): names cut to the record's limit.
discovery::ProcessInfo this_process(bool client) {
  discovery::ProcessInfo p;
  std::array<char, 256> host{};
  if (gethostname(host.data(), host.size() - 1) == 0) p.host = host.data();
  p.pid = static_cast<std::uint32_t>(getpid());
  // The executable's name, whole (comm is cut to 15 characters).
  std::array<char, 4096> exe{};
  if (const auto n = readlink("/proc/self/exe", exe.data(), exe.size() - 1); n > 0) {
    const std::string_view path(exe.data(), static_cast<std::size_t>(n));
    p.name = path.substr(path.rfind('/') + 1);
  } else {
    std::ifstream comm("/proc/self/comm");
    std::getline(comm, p.name);
  }
  p.host.resize(std::min(p.host.size(), discovery::kMaxNameBytes));
  p.name.resize(std::min(p.name.size(), discovery::kMaxNameBytes));
  p.role = client ? discovery::ParticipantRole::client : discovery::ParticipantRole::member;
  return p;
}

// Discovery records that fail to decode are reported here: they come from another
// process, so they are logged with the sender, never trusted, never fatal.
void report_bad_record(NodeId sender, SampleKind kind, const std::string& error) {
  std::cerr << "spindle: dropped a " << to_string(kind) << " record from node " << sender << ": "
            << error << '\n';
}

}  // namespace

Participant::Participant(std::uint32_t domain_id, const dds::domain::qos::DomainParticipantQos& qos,
                         std::unique_ptr<group::Bus> bus, std::span<const std::byte> joined_state,
                         storage::LogSettings log_settings)
    // The participant's own handle is its serial 1 (see next_handle()).
    : ParticipantCore(InstanceHandle(make_guid(bus->node(), 1)), true),
      domain_id_(domain_id),
      bus_(std::move(bus)),
      router_(*bus_),
      log_settings_(std::move(log_settings)),
      log_home_(storage::LogHome::claim(log_settings_, domain_id_, bus_->node(),
                                        log_settings_.adopt_orphans)),
      qos_(qos) {
  serial_.store(1);
  // A client's own messages come back from its relay: they are its relay's to send.
  if (bus_->relayed()) router_.attach(bus_->node(), bus_->relay());
  router_.set_builtin_handler(
      [this](const ParsedSample& s, NodeId sender) { on_builtin(s, sender); });
  router_.set_suspicion_handler(
      [this](NodeId node, bool left, const std::string& why) { on_suspicion(node, left, why); });
  router_.set_halt_handler([this](const std::string& why) {
    // Writes now fail with this message too (Engine::reserve); say it once where an
    // operator looks.
    std::cerr << "spindle: " << why << '\n';
    bus_->runtime().control().post([this] { on_halted(); });
  });
  router_.set_rejoin_handler([this](const group::View& view, std::span<const std::byte> state) {
    if (bus_->relayed()) router_.attach(bus_->node(), bus_->relay());  // a client's new relay
    on_rejoined(view, state);
  });
  router_.set_state_provider([this](std::string_view subject) { return endpoint_state(subject); });
  router_.set_gap_handler([this](std::span<const std::uint64_t> topics) { on_gaps(topics); });
  router_.set_layout_hooks([this] { return layout_demand(); },
                           [this](const group::View& v) { on_view(v); },
                           [this](std::uint64_t writer) -> std::optional<group::Channel> {
                             std::lock_guard lock(mu_);
                             if (const auto* w = endpoints_.writer(writer))
                               return writer_channel(*w);
                             // Retired from the table already (it closed): the writer itself still
                             // knows.
                             if (const auto w = local_writer(writer)) return w->channel();
                             return std::nullopt;
                           });
  view_ = bus_->view();
  router_.first_view(view_.epoch);
  // What this node (or the home's last owner) logged before; a client keeps no logs.
  if (!bus_->relayed()) recover_logs();
  apply_state(joined_state);  // a joiner: the endpoints of the domain as the view began
  // This participant's record must fit a slot (its UserData is the application's): refused
  // here, before the engine starts calling the handlers above.
  process_ = this_process(bus_->relayed());
  const auto self =
      discovery::encode(discovery::ParticipantRecord{instance_handle().value(), qos, process_});
  check_record_fits(self.size(), "DomainParticipant");
  bus_->start(router_);  // only now: nothing delivered may miss the handlers above
  // Announced from the executor, so that creating a participant never waits for a slot (in
  // the simulator, members are made one after another).
  executor().post([this] {
    if (is_closed()) return;
    try {
      announce_self();
    } catch (const dds::core::Exception& e) {
      // The ring stayed full for seconds: the domain is not delivering. The participant
      // works; DCPSParticipant elsewhere lacks it until its QoS is set again.
      std::cerr << "spindle: domain " << domain_id_
                << ": this participant was not announced: " << e.what() << '\n';
    }
  });
}

void Participant::serve_clients(client::RelaySettings s) {
  std::lock_guard lock(relay_mu_);
  relay_ = std::make_unique<client::Relay>(*bus_, router_, std::move(s));
}

void Participant::serve_join_port_clients(client::RelaySettings s) {
  {
    std::lock_guard lock(relay_mu_);
    relay_settings_ = std::move(s);
    relay_settings_.listen = false;
  }
  engine().route_clients(
      [this](int fd, std::string already) { adopt_client(fd, std::move(already)); });
}

// The join port's thread: a relay made on first need (most domains have no client).
void Participant::adopt_client(int fd, std::string already) {
  std::lock_guard lock(relay_mu_);
  if (relays_closed_) {
    ::close(fd);  // closing: no relay serves it now
    return;
  }
  if (!relay_) relay_ = std::make_unique<client::Relay>(*bus_, router_, relay_settings_);
  relay_->adopt(fd, std::move(already));
}

client::RelayStats Participant::relay_stats() const {
  std::lock_guard lock(relay_mu_);
  return relay_ ? relay_->stats() : client::RelayStats{};
}

std::uint16_t Participant::client_port() const {
  std::lock_guard lock(relay_mu_);
  return relay_ ? relay_->port() : 0;
}

Participant::~Participant() {
  close();
  // Threads first, while `bus_` still points at the engine their callbacks reach us
  // through (reset() clears the pointer before the engine's destructor runs).
  bus_->stop();
  bus_.reset();
}

dds::core::Time Participant::wall_now() const {
  const std::int64_t ns = bus_->runtime().wall_ns();
  return dds::core::Time(static_cast<std::int64_t>(ns / 1'000'000'000),
                         static_cast<std::uint32_t>(ns % 1'000'000'000));
}

// After close() returns no listener of this participant or its entities runs again: the
// entities are closed (and drop their listeners), and the callbacks already queued run
// first — so an application may destroy its listener objects next. (The participant
// itself may outlive its last reference for a moment, when an upcall held that: see
// make_entity().) From a listener, close() cannot wait for the queue it runs in.
void Participant::close() {
  if (is_closed()) return;
  bus_->closing();
  // Its clients go first: their endpoints are retired while this member still delivers.
  {
    std::lock_guard lock(relay_mu_);
    relays_closed_ = true;
    if (relay_) relay_->stop();
  }
  close_contained_entities();
  std::shared_ptr<Subscriber> builtin_sub;
  {
    std::lock_guard lock(mu_);
    builtin_sub = builtin_.subscriber.lock();
    builtin_.active = false;
    for (auto& p : builtin_.pending)
      p.clear();
  }
  if (builtin_sub) builtin_sub->close();  // the built-in readers, which nothing else closes
  // Goodbye, in the builtin subgroup: members that see it expect this node's connections to
  // go. Give it a moment to be delivered everywhere. (A client's relay stays: its endpoints
  // were retired above, and leave() says goodbye to the relay alone.)
  const group::Channel builtin{0, group::Ordering::atomic};
  if (!bus_->relayed()) {
    SampleHeader h;
    h.kind = SampleKind::participant_left;
    h.writer = make_guid(bus_->node(), 0);
    h.source_time_ns = wall_now().to_nanosecs();
    try {
      router_.publish(
          builtin, h, 0, [](std::span<std::byte>) {}, clock_now() + std::chrono::seconds(1));
    } catch (const dds::core::Exception&) {
      // The ring stayed full (a member stopped delivering): leave without the goodbye.
    }
  }
  (void)bus_->runtime().wait_until(clock_now() + std::chrono::milliseconds(200),
                                   [&] { return bus_->in_flight(builtin) == 0; });
  // Then leave the group on purpose (the others remove this member without counting a
  // failure), and go: a closed participant is no member of its domain any more.
  bus_->leave();
  listener(nullptr, StatusMask::none());
  bus_->executor().drain();
  bus_->shutdown();
  ParticipantCore::close();
}

std::pair<std::size_t, std::size_t> Participant::endpoints_of(const Topic& t) const {
  std::pair<std::size_t, std::size_t> n{0, 0};
  std::lock_guard lock(mu_);
  for (const auto& [g, w] : local_writers_)
    if (auto e = w.lock(); e && !e->is_closed() && e->topic().get() == &t) ++n.first;
  for (const auto& [g, r] : local_readers_)
    if (auto e = r.lock(); e && !e->is_closed() && e->topic().get() == &t) ++n.second;
  return n;
}

void Participant::close_contained_entities() {
  std::vector<std::shared_ptr<EntityDelegate>> children;
  {
    std::lock_guard lock(mu_);
    for (auto& [g, w] : local_writers_)
      if (auto e = w.lock()) children.push_back(e);
    for (auto& [g, r] : local_readers_)
      if (auto e = r.lock()) children.push_back(e);
    for (auto& p : publishers_)
      if (auto e = p.lock()) children.push_back(e);
    for (auto& s : subscribers_)
      if (auto e = s.lock()) children.push_back(e);
    for (auto& [n, t] : topics_)
      if (auto e = t.lock()) children.push_back(e);
  }
  for (auto& c : children)
    c->close();
}

dds::domain::qos::DomainParticipantQos Participant::qos() const {
  return qos_.get();
}
void Participant::qos(const dds::domain::qos::DomainParticipantQos& q) {
  check_open();
  const auto old = qos_.get();
  qos_.set_own(q);
  if (q == old) return;
  // The domain sees the new UserData (DCPSParticipant); a record that cannot go keeps the
  // old QoS.
  try {
    announce_self();
  } catch (...) {
    qos_.set_own(old);
    throw;
  }
}
dds::topic::qos::TopicQos Participant::default_topic_qos() const {
  return default_topic_qos_.get();
}
void Participant::default_topic_qos(const dds::topic::qos::TopicQos& q) {
  default_topic_qos_.set_default(q);
}
dds::pub::qos::PublisherQos Participant::default_publisher_qos() const {
  return default_publisher_qos_.get();
}
void Participant::default_publisher_qos(const dds::pub::qos::PublisherQos& q) {
  default_publisher_qos_.set_default(q);
}
dds::sub::qos::SubscriberQos Participant::default_subscriber_qos() const {
  return default_subscriber_qos_.get();
}
void Participant::default_subscriber_qos(const dds::sub::qos::SubscriberQos& q) {
  default_subscriber_qos_.set_default(q);
}

std::uint64_t Participant::next_guid() {
  const auto serial = serial_.fetch_add(1) + 1;
  if (serial == 0) {  // wrapped: serial 0 names the node itself
    throw dds::core::OutOfResourcesError("this participant has used all " +
                                         std::to_string(std::uint64_t{UINT32_MAX}) +
                                         " entity ids of its node");
  }
  return make_guid(bus_->node(), serial);
}

// Entity handles come from the guid serials: a writer's or reader's handle is its guid —
// the handle peers see in matched_subscriptions(), matched_publications(), the matched
// statuses and SampleInfo::publication_handle() — so every entity of this participant
// must draw from the same serials to keep handles unique (across the domain too: the
// node id is in the top bits).
InstanceHandle Participant::next_handle() {
  return InstanceHandle(next_guid());
}

InstanceHandle Participant::next_instance_handle() {
  return InstanceHandle(handles_.fetch_add(1) + 1);
}

std::shared_ptr<detail::TopicCore> Participant::create_topic(const std::string& name,
                                                             const detail::TypeSupport& type,
                                                             const dds::topic::qos::TopicQos& q) {
  check_open();
  if (name.empty() || name.size() > 256) {
    throw dds::core::InvalidArgumentError("Topic: a name of 1 to 256 characters is required, got " +
                                          std::to_string(name.size()));
  }
  qos::check_consistent(q);
  auto self = std::static_pointer_cast<Participant>(shared_from_this());
  std::shared_ptr<Topic> t;
  std::size_t clashes = 0;
  {
    std::lock_guard lock(mu_);
    if (auto it = topics_.find(name); it != topics_.end()) {
      if (auto existing = it->second.lock(); existing && !existing->is_closed()) {
        if (existing->type().type_name != type.type_name) {
          throw dds::core::PreconditionNotMetError(
              "Topic '" + name + "' already exists in this participant with type '" +
              std::string(existing->type().type_name) + "', not '" + std::string(type.type_name) +
              "'");
        }
        if (&existing->type() != &type) {
          // One name, one type, but two ways to hold its samples (generated code and a
          // type known at run time): readers and writers of either would misread the other's.
          throw dds::core::PreconditionNotMetError(
              "Topic '" + name + "' already exists in this participant with type '" +
              std::string(type.type_name) +
              "' held another way (generated code and a dynamic type, or two dynamic types of "
              "one name); use another participant for the other");
        }
        return existing;
      }
    }
    t = make_entity<Topic>(*bus_, self, name, type, q, next_handle());
    if (!autoenables()) t->start_disabled();
    topics_[name] = t;
    // Another member's topic or endpoint of this name may have been announced before this
    // topic existed: it is as inconsistent as one announced after.
    clashes = known_inconsistencies(name);
  }
  for (std::size_t i = 0; i < clashes; ++i)
    t->raise_inconsistent();
  if (t->is_enabled()) announce(*t);  // else by enable()
  return t;
}

std::vector<std::shared_ptr<detail::TopicCore>> Participant::topics() const {
  std::vector<std::shared_ptr<detail::TopicCore>> out;
  std::lock_guard lock(mu_);
  for (const auto& [name, weak] : topics_)
    if (auto t = weak.lock(); t && !t->is_closed()) out.push_back(std::move(t));
  return out;
}

std::vector<detail::ParticipantCore::DiscoveredTopic> Participant::discovered_topics() const {
  std::map<std::string, DiscoveredTopic> found;  // by name: the first seen
  std::lock_guard lock(mu_);
  for (const auto& [g, t] : topic_records_) {
    auto [it, fresh] = found.try_emplace(t.topic_name, DiscoveredTopic{t.topic_name, t.type_name});
    // The type information of the first topic of that type that announced it.
    const auto type = type_records_.find(g);
    if (it->second.type_information.empty() && type != type_records_.end() &&
        it->second.type_name == t.type_name) {
      it->second.type_information = type->second.type_information;
      it->second.type_mapping = type->second.type_mapping;
    }
  }
  for (const auto& [g, w] : endpoints_.writer_records())
    found.try_emplace(w.topic_name, DiscoveredTopic{w.topic_name, w.type_name});
  for (const auto& [g, r] : endpoints_.reader_records())
    found.try_emplace(r.topic_name, DiscoveredTopic{r.topic_name, r.type_name});
  std::vector<DiscoveredTopic> out;
  out.reserve(found.size());
  for (auto& [name, topic] : found)
    out.push_back(std::move(topic));
  return out;
}

spindle::inspect::Snapshot Participant::inspect() const {
  namespace in = spindle::inspect;
  in::Snapshot out;
  out.domain_id = domain_id_;
  const auto participant = [&](NodeId node, const discovery::ParticipantRecord& rec) {
    in::Participant p;
    p.handle = rec.guid;
    p.node_id = node;
    p.host = rec.process.host;
    p.pid = rec.process.pid;
    p.process = rec.process.name;
    p.role = rec.process.role == discovery::ParticipantRole::client ? in::Role::client
                                                                    : in::Role::member;
    p.local = node == bus_->node();
    p.qos = rec.qos;
    return p;
  };
  std::lock_guard lock(mu_);
  // This participant's own, whether or not its announcement came back yet.
  std::map<NodeId, in::Participant> participants;
  participants.emplace(
      bus_->node(),
      participant(bus_->node(),
                  discovery::ParticipantRecord{instance_handle().value(), qos_.get(), process_}));
  for (const auto& [node, rec] : participant_records_)
    participants.try_emplace(node, participant(node, rec));
  for (auto& [node, p] : participants)
    out.participants.push_back(std::move(p));
  for (const auto& [g, t] : topic_records_)
    out.topics.push_back(
        in::Topic{g, guid_node(g), t.topic_name, t.type_name, type_records_.contains(g), t.qos});
  for (const auto& [g, w] : endpoints_.writer_records())
    out.writers.push_back(
        in::Writer{g, guid_node(g), w.topic_name, w.type_name, w.qos, w.publisher_qos});
  for (const auto& [g, r] : endpoints_.reader_records())
    out.readers.push_back(
        in::Reader{g, guid_node(g), r.topic_name, r.type_name, r.qos, r.subscriber_qos});
  return out;
}

std::shared_ptr<detail::TopicCore> Participant::find_topic(const std::string& name) const {
  std::lock_guard lock(mu_);
  auto it = topics_.find(name);
  if (it == topics_.end()) return nullptr;
  auto t = it->second.lock();
  return t && !t->is_closed() ? t : nullptr;
}

void Participant::forget(const Topic* t) {
  std::lock_guard lock(mu_);
  auto it = topics_.find(t->name());
  if (it != topics_.end() && (it->second.expired() || it->second.lock().get() == t)) {
    topics_.erase(it);
  }
}

bool Participant::autoenables() const {
  return qos().policy<dds::core::policy::EntityFactory>().autoenable_created_entities();
}

std::shared_ptr<detail::PublisherCore> Participant::create_publisher(
    const dds::pub::qos::PublisherQos& q) {
  check_open();
  qos::check_consistent(q);
  auto p = make_entity<Publisher>(*bus_, std::static_pointer_cast<Participant>(shared_from_this()),
                                  q, next_handle());
  if (!autoenables()) p->start_disabled();
  std::lock_guard lock(mu_);
  std::erase_if(publishers_, [](const auto& w) { return w.expired(); });
  publishers_.push_back(p);
  return p;
}

std::shared_ptr<detail::SubscriberCore> Participant::create_subscriber(
    const dds::sub::qos::SubscriberQos& q) {
  check_open();
  qos::check_consistent(q);
  auto s = make_entity<Subscriber>(*bus_, std::static_pointer_cast<Participant>(shared_from_this()),
                                   q, next_handle());
  if (!autoenables()) s->start_disabled();
  std::lock_guard lock(mu_);
  std::erase_if(subscribers_, [](const auto& w) { return w.expired(); });
  subscribers_.push_back(s);
  return s;
}

void Participant::assert_liveliness() {
  check_open();
  std::vector<std::shared_ptr<Writer>> writers;
  {
    std::lock_guard lock(mu_);
    for (auto& [g, w] : local_writers_)
      if (auto sw = w.lock()) writers.push_back(sw);
  }
  for (auto& w : writers) {
    if (w->manual_by_participant()) w->assert_liveliness();
  }
}

bool Participant::contains_entity(InstanceHandle h) const {
  std::lock_guard lock(mu_);
  auto is = [&](const auto& weak) {
    auto e = weak.lock();
    return e && e->instance_handle() == h;
  };
  for (auto& [n, t] : topics_)
    if (is(t)) return true;
  for (auto& p : publishers_)
    if (is(p)) return true;
  for (auto& s : subscribers_)
    if (is(s)) return true;
  for (auto& [g, w] : local_writers_)
    if (is(w)) return true;
  for (auto& [g, r] : local_readers_)
    if (is(r)) return true;
  return false;
}

void Participant::listener(dds::domain::DomainParticipantListener* l, const StatusMask& mask) {
  listener_.set(l, mask);
  fence_listeners();
}

void Participant::post_listener(group::Executor::Job job) {
  executor().post([this, job = std::move(job)] {
    std::lock_guard lock(listener_calls_);
    job();
  });
}

void Participant::fence_listeners() {
  std::lock_guard lock(listener_calls_);
}

dds::domain::DomainParticipantListener* Participant::listener() const {
  return listener_.get();
}

dds::domain::DomainParticipantListener* Participant::listener_for(const StatusMask& status) const {
  return listener_.for_status(status);
}

// ------------------------------------------------------------------------- discovery out

void Participant::announce(const std::shared_ptr<Writer>& w) {
  const auto rec = w->record();
  {
    std::lock_guard lock(mu_);
    local_writers_[w->guid()] = w;
    // What a retaining writer writes before its record is applied waits for its subgroup.
    if (retention_terms(rec.qos)) {
      const auto channel = writer_channel(rec);
      bus_->hold_sends(channel);
      held_writers_.emplace(rec.guid, channel);
    }
  }
  keep_for_repair(w);
  publish_record(SampleKind::announce_writer, rec.guid, discovery::encode(rec),
                 "DataWriter of topic '" + rec.topic_name + "'");
  await_match(rec.guid, true);
}

void Participant::announce_again(const Writer& w) {
  const auto rec = w.record();
  publish_record(SampleKind::announce_writer, rec.guid, discovery::encode(rec),
                 "DataWriter of topic '" + rec.topic_name + "'");
}

void Participant::announce(const std::shared_ptr<Reader>& r) {
  {
    std::lock_guard lock(mu_);
    local_readers_[r->guid()] = r;
    if (wants_history(r->qos())) {
      r->expect_history();
      history_wanted_.insert(r->guid());
    }
  }
  const auto rec = r->record();
  publish_record(SampleKind::announce_reader, rec.guid, discovery::encode(rec),
                 "DataReader of topic '" + rec.topic_name + "'");
  await_match(rec.guid, false);
}

// Matching takes a view change (docs/membership.md, "Matching at the boundary"): the record
// travels in the builtin subgroup, every member applies it, the next view lays the topic's
// subgroup out, and its on_view() settles the pending matches. Until then a sample the
// application writes reaches none of the endpoints it expects, which is what ported programs
// do right after creating theirs — so creation waits for it, about one view change.
void Participant::await_match(std::uint64_t guid, bool writer) {
  auto& rt = bus_->runtime();
  if (bus_->on_protocol_thread() || rt.executor().on_executor_thread() ||
      rt.control().on_executor_thread() || !bus_->halted().empty())
    return;
  (void)rt.wait_until(clock_now() + kMatchWait,
                      [&] { return matched_in_view(guid, writer) || !bus_->halted().empty(); });
}

bool Participant::matched_in_view(std::uint64_t guid, bool writer) const {
  std::lock_guard lock(mu_);
  if ((writer ? endpoints_.writer(guid) == nullptr : endpoints_.reader(guid) == nullptr))
    return false;                   // its record is not applied yet
  if (settling_ > 0) return false;  // matches settled, their endpoints not told yet
  for (const auto& [pair, match] : pending_)
    if (match && (writer ? pair.first : pair.second) == guid) return false;
  return true;
}

// This participant halted: until it rejoins, the other members' endpoints are gone for it —
// its readers lose their writers (liveliness, NOT_ALIVE_NO_WRITERS), its writers their
// readers — as a partition has it. Its readers keep each writer's last message number, so
// that once it is back they count what went by meanwhile as lost (SAMPLE_LOST).
void Participant::on_halted() {
  std::vector<NodeId> others;
  {
    std::lock_guard lock(mu_);
    for (const auto& [guid, weak] : local_readers_)
      if (const auto r = weak.lock()) r->stash_positions();
    for (const auto& m : view_.members)
      if (m.id != bus_->node()) others.push_back(m.id);
  }
  for (const auto node : others)
    on_suspicion(node, false, "this participant stopped; it rejoins once it can");
}

// Back in the domain as a new member (group::Engine::rejoin_with), before the protocol
// thread starts: the view and the domain's endpoints as it began, as for a joiner; then its
// own participant, topics and endpoints are announced again (the others removed them with
// it), and they match anew one view change later.
void Participant::on_rejoined(const group::View& view, std::span<const std::byte> state) {
  std::cerr << "spindle: domain " << domain_id_ << ": node " << bus_->node()
            << " rejoined the domain in view " << view.epoch << " (" << view.members.size()
            << " members)\n";
  {
    // Who waits for which history comes with the state (refresh.cpp), as for a joiner.
    std::lock_guard lock(mu_);
    refreshing_.clear();
    damaged_.clear();
    asked_.clear();
  }
  on_view(view);
  // The others removed this member's endpoints with it: so does its own table, or a view
  // change before the announcements below are delivered would be laid out differently
  // here (the endpoints come back with them, as everyone else learns them).
  on_suspicion(bus_->node(), true, "");
  apply_state(state);
  executor().post([this] {
    if (is_closed()) return;
    try {
      reannounce();
    } catch (const dds::core::Exception& e) {
      std::cerr << "spindle: domain " << domain_id_
                << ": after rejoining, not every entity could be announced again: " << e.what()
                << '\n';
    }
  });
}

void Participant::reannounce() {
  announce_self();
  std::vector<std::shared_ptr<Topic>> topics;
  std::vector<std::shared_ptr<Writer>> writers;
  std::vector<std::shared_ptr<Reader>> readers;
  {
    std::lock_guard lock(mu_);
    for (const auto& [name, weak] : topics_)
      if (auto t = weak.lock()) topics.push_back(std::move(t));
    for (const auto& [guid, weak] : local_writers_)
      if (auto w = weak.lock()) writers.push_back(std::move(w));
    for (const auto& [guid, weak] : local_readers_)
      if (auto r = weak.lock()) readers.push_back(std::move(r));
  }
  for (const auto& t : topics)
    if (t->is_enabled() && !t->is_closed()) announce(*t);
  for (const auto& w : writers) {
    if (w->is_closed()) continue;
    const auto rec = w->record();
    publish_record(SampleKind::announce_writer, rec.guid, discovery::encode(rec),
                   "DataWriter of topic '" + rec.topic_name + "'");
  }
  for (const auto& r : readers) {
    if (r->is_closed()) continue;
    {
      // Created while the last view went, and its history never came: its record applied
      // again brings the history of the domain it rejoined.
      std::lock_guard lock(mu_);
      if (r->awaits_history()) history_wanted_.insert(r->guid());
    }
    const auto rec = r->record();
    publish_record(SampleKind::announce_reader, rec.guid, discovery::encode(rec),
                   "DataReader of topic '" + rec.topic_name + "'");
  }
}

void Participant::check_record_fits(std::size_t size, const std::string& who) const {
  const group::Channel channel{0, group::Ordering::atomic};
  // A discovery record travels in one slot, like a sample. It carries the entity's QoS,
  // names and partitions, so a very small engine.slot_size cannot hold it: say so here,
  // rather than let publish() report a "sample" the application never wrote.
  if (size > router_.max_payload(channel)) {
    std::string msg = who;
    msg += ": its discovery record (";
    msg += std::to_string(size);
    msg += " bytes: QoS with its user, group and topic data, names, partitions) does not fit a ";
    msg += "slot of ";
    msg += std::to_string(router_.max_payload(channel));
    msg += " bytes; raise engine.slot_size in the domain file to at least ";
    msg += std::to_string(size);
    throw dds::core::PreconditionNotMetError(msg);
  }
}

void Participant::publish_record(SampleKind kind, std::uint64_t guid,
                                 const std::vector<std::byte>& bytes, const std::string& who) {
  const group::Channel channel{0, group::Ordering::atomic};
  check_record_fits(bytes.size(), who);
  SampleHeader h;
  h.kind = kind;
  h.writer = guid;
  h.source_time_ns = wall_now().to_nanosecs();
  // Halted on its way back into the domain (a merge, a partition that heals): the entity is
  // in this participant's tables already, and reannounce() sends its record with the others
  // once it is back, so creating it succeeds as it would a moment earlier or later.
  const auto rejoining = [&] { return bus_->rejoins() && !bus_->halted().empty(); };
  if (rejoining()) return;
  try {
    router_.publish(
        channel, h, bytes.size(),
        [&](std::span<std::byte> out) { std::copy(bytes.begin(), bytes.end(), out.begin()); },
        clock_now() + std::chrono::seconds(10));
  } catch (const dds::core::Exception&) {
    if (rejoining()) return;  // it halted meanwhile
    throw;
  }
}

void Participant::publish_retirement(SampleKind kind, std::uint64_t guid) {
  const group::Channel channel{0, group::Ordering::atomic};
  SampleHeader h;
  h.kind = kind;
  h.writer = guid;
  h.source_time_ns = wall_now().to_nanosecs();
  // A client whose relay is gone: the relay retired its endpoints as it let go of it.
  if (bus_->relayed() && !bus_->halted().empty()) return;
  try {
    router_.publish(
        channel, h, 0, [](std::span<std::byte>) {}, clock_now() + std::chrono::seconds(1));
  } catch (const dds::core::Exception& e) {
    // The ring stayed full: peers will unmatch the endpoint when this node leaves.
    std::cerr << "spindle: could not announce the end of endpoint " << guid << ": " << e.what()
              << '\n';
  }
}

void Participant::announce_self() {
  std::lock_guard lock(announce_mu_);
  publish_record(SampleKind::announce_participant, instance_handle().value(),
                 discovery::encode(
                     discovery::ParticipantRecord{instance_handle().value(), qos_.get(), process_}),
                 "DomainParticipant");
}

void Participant::announce(Topic& t) {
  std::uint64_t guid = 0;
  std::string who;
  {
    std::lock_guard lock(announce_mu_);
    const auto rec = t.record();
    guid = rec.guid;
    who = "Topic '" + rec.topic_name + "'";
    publish_record(SampleKind::announce_topic, rec.guid, discovery::encode(rec), who);
    t.announced();
  }
  // Then its type, for peers that do not know it (docs/types.md), in slot-sized pieces. Not
  // under announce_mu_: a piece may wait for room in the ring, and what runs meanwhile (a
  // simulator runs jobs on the waiting thread) may announce too. Pieces of one topic that
  // interleave with its next announcement start afresh at that one's first piece.
  const auto& type = t.type();
  if (type.type_information.empty()) return;
  const discovery::TypeRecord trec{guid,
                                   {type.type_information.begin(), type.type_information.end()},
                                   {type.type_mapping.begin(), type.type_mapping.end()}};
  const group::Channel channel{0, group::Ordering::atomic};
  for (const auto& piece :
       discovery::split_pieces(discovery::encode(trec), router_.max_payload(channel)))
    publish_record(SampleKind::announce_type, guid, piece, who + " (its type)");
}

void Participant::retire_topic(std::uint64_t guid) {
  publish_retirement(SampleKind::retire_topic, guid);
}

void Participant::retire_writer(std::uint64_t guid) {
  {
    std::lock_guard lock(mu_);
    local_writers_.erase(guid);
    if (const auto it = held_writers_.find(guid); it != held_writers_.end()) {
      bus_->release_sends(it->second);
      held_writers_.erase(it);
    }
  }
  forget_for_repair(guid);
  publish_retirement(SampleKind::retire_writer, guid);
}

void Participant::retire_reader(std::uint64_t guid) {
  {
    std::lock_guard lock(mu_);
    local_readers_.erase(guid);
    history_wanted_.erase(guid);
    history_due_.erase(guid);
  }
  publish_retirement(SampleKind::retire_reader, guid);
}

// ------------------------------------------------------------------------ state transfer
//
// The endpoint table at a view boundary, for a participant joining in the next view, and the
// retained topics: a sequence of [u8 kind | u32 length, little-endian | record bytes], kind
// 7 an external client and its relay (u32 client, u32 relay: docs/membership.md), 1 a writer,
// 2 a reader, 3 a gone writer whose retained entries are kept (its writer record), 4 a
// retained entry (dcps/retained.hpp), 5 a participant record, 6 a topic record, 10 a topic's
// type record (whole, not in pieces), 8 a member
// waiting for a retained topic's history (u64 topic, u32 node: refresh.cpp), 9 a retained
// topic whose history misses messages at the sender (u64 topic: the joiner asks for it again),
// in this order.

namespace {
// How often a secured participant reads its permissions document again (watch_permissions).
constexpr std::chrono::milliseconds kPermissionsPoll{500};
}  // namespace

void Participant::secure(std::string subject,
                         std::shared_ptr<const security::Permissions> permissions) {
  {
    std::lock_guard lock(mu_);
    subject_ = std::move(subject);
    permissions_ = std::move(permissions);
    if (!permissions_) return;
    documents_.emplace(permissions_->digest(), permissions_);
  }
  poll_permissions();
}

void Participant::poll_permissions() {
  // On the executor: an announcement waits for its slot as any record does, which the
  // control thread (a view change's) must never.
  (void)bus_->runtime().control().schedule(bus_->runtime().now() + kPermissionsPoll, [this] {
    bus_->executor().post([this] { watch_permissions(); });
  });
}

void Participant::watch_permissions() {
  if (is_closed()) return;
  std::string path;
  {
    std::lock_guard lock(mu_);
    path = permissions_->source();
  }
  std::string text;
  try {
    text = core::read_text_file(path, "permissions file");
  } catch (const std::exception&) {
    text.clear();  // unreadable for a moment (being replaced): the next poll looks again
  }
  const std::string digest = security::sha256_hex(text);
  bool known = false;
  {
    std::lock_guard lock(mu_);
    known = documents_.contains(digest);
  }
  if (!known && !text.empty()) {
    try {
      auto doc =
          std::make_shared<const security::Permissions>(security::Permissions::parse(text, path));
      {
        std::lock_guard lock(mu_);
        documents_.emplace(digest, doc);
      }
      permissions_error_.clear();
      std::cerr << "spindle: domain " << domain_id_ << ": " << path << " changed (sha256 " << digest
                << "); it comes in force once every member holds it\n";
      const auto bytes = std::as_bytes(std::span(digest.data(), digest.size()));
      publish_record(SampleKind::permissions, make_guid(bus_->node(), 0),
                     std::vector<std::byte>(bytes.begin(), bytes.end()),
                     "the permissions document's digest");
    } catch (const std::exception& e) {
      if (permissions_error_ != e.what()) {
        permissions_error_ = e.what();
        std::cerr << "spindle: domain " << domain_id_ << ": " << e.what()
                  << " (the permissions in force stay)\n";
      }
    }
  }
  if (is_closed()) return;
  poll_permissions();
}

std::shared_ptr<const security::Permissions> Participant::switch_permissions() {
  if (!permissions_ || announced_permissions_.empty() || view_.members.empty()) return nullptr;
  const auto first = announced_permissions_.find(view_.members.front().id);
  if (first == announced_permissions_.end() || first->second == permissions_->digest())
    return nullptr;
  const std::string& digest = first->second;
  for (const auto& m : view_.members) {
    const auto a = announced_permissions_.find(m.id);
    if (a == announced_permissions_.end() || a->second != digest) return nullptr;
  }
  const auto doc = documents_.find(digest);
  if (doc == documents_.end()) return nullptr;  // announced by all, so held by all: not here
  permissions_ = doc->second;
  regrant_after_ = view_.epoch;
  return permissions_;
}

void Participant::check_grant(security::Action action, const std::string& topic,
                              const std::vector<std::string>& partitions) const {
  std::lock_guard lock(mu_);
  if (!permissions_) return;
  const auto d = permissions_->decide(subject_, action, topic, partitions);
  if (d.allowed) return;
  throw dds::core::NotAllowedBySecurityError(
      std::string(action == security::Action::publish ? "DataWriter" : "DataReader") + ": topic '" +
      topic + "': " + subject_ + " may not " + std::string(security::to_string(action)) +
      " it: " + d.rule);
}

std::optional<std::string> Participant::topic_name_locked(std::uint64_t id) const {
  for (const auto& [g, w] : endpoints_.writer_records())
    if (topic_id(w.topic_name) == id) return w.topic_name;
  for (const auto& [g, r] : endpoints_.reader_records())
    if (topic_id(r.topic_name) == id) return r.topic_name;
  if (const auto t = retained_.find(id); t != retained_.end())
    for (const auto& w : t->second->gone_writers())
      if (topic_id(w.topic_name) == id) return w.topic_name;
  for (const auto& [g, t] : topic_records_)
    if (topic_id(t.topic_name) == id) return t.topic_name;
  return std::nullopt;
}

std::vector<std::byte> Participant::endpoint_state(std::string_view subject) const {
  std::vector<std::byte> out;
  auto put = [&](std::uint8_t kind, const std::vector<std::byte>& rec) {
    out.push_back(std::byte{kind});
    put_le(out, rec.size(), 4);
    out.insert(out.end(), rec.begin(), rec.end());
  };
  std::vector<std::byte> pair;
  for (const auto& [client, relay] : router_.relayed()) {
    pair.clear();
    put_le(pair, client, 4);
    put_le(pair, relay, 4);
    put(7, pair);
  }
  std::lock_guard lock(mu_);
  for (const auto& [g, w] : endpoints_.writer_records())
    put(1, discovery::encode(w));
  for (const auto& [g, r] : endpoints_.reader_records())
    put(2, discovery::encode(r));
  for (const auto& [topic, t] : retained_)
    for (const auto& w : t->gone_writers())
      put(3, discovery::encode(w));
  std::vector<std::byte> entry;
  for (const auto& [topic, t] : retained_) {
    // A secured domain: a joiner gets only the histories its subject may read
    // (docs/security.md); a topic whose name is not known here is left out.
    if (permissions_ && !subject.empty()) {
      const auto name = topic_name_locked(topic);
      if (!name || !permissions_->allows(subject, security::Action::subscribe, *name,
                                         std::vector<std::string>{}))
        continue;
    }
    for (const auto& e : t->history().snapshot()) {
      entry.clear();
      encode_entry(topic, e, entry);
      put(4, entry);
    }
  }
  for (const auto& [node, p] : participant_records_)
    put(5, discovery::encode(p));
  for (const auto& [g, t] : topic_records_)
    put(6, discovery::encode(t));
  for (const auto& [g, t] : type_records_)
    put(10, discovery::encode(t));
  // Refresh (refresh.cpp): who waits for a retained history, and the histories above that
  // miss messages here (the joiner asks for them again).
  std::vector<std::byte> rec;
  for (const auto& [topic, waiting] : refreshing_) {
    for (const auto node : waiting) {
      rec.clear();
      put_le(rec, topic, 8);
      put_le(rec, node, 4);
      put(8, rec);
    }
  }
  for (const auto topic : damaged_) {
    rec.clear();
    put_le(rec, topic, 8);
    put(9, rec);
  }
  return out;
}

void Participant::apply_state(std::span<const std::byte> state) {
  std::set<std::uint64_t> restored;    // retained topics whose history came in the state
  std::vector<std::uint64_t> damaged;  // ... that miss messages at the member that sent it
  if (!state.empty()) {
    // A member that rejoins takes the domain's histories and waits anew.
    std::lock_guard lock(mu_);
    damaged_.clear();
    asked_.clear();
    refreshing_.clear();
    incoming_.clear();
  }
  std::size_t at = 0;
  while (at + 5 <= state.size()) {
    const auto kind = static_cast<std::uint8_t>(state[at]);
    const auto n = get_le(state, at + 1, 4);
    at += 5;
    if (n > state.size() - at) break;
    const auto bytes = state.subspan(at, n);
    at += n;
    std::string error;
    if (kind == 1) {
      if (auto w = discovery::decode_writer(bytes, error)) {
        on_writer_record(std::move(*w));
        continue;
      }
    } else if (kind == 2) {
      if (auto r = discovery::decode_reader(bytes, error)) {
        on_reader_record(std::move(*r));
        continue;
      }
    } else if (kind == 3) {
      if (auto w = discovery::decode_writer(bytes, error)) {
        if (const auto terms = retention_terms(w->qos)) {
          std::lock_guard lock(mu_);
          keep(*w, *terms).retire(w->guid);
          continue;
        }
        error = "writer " + std::to_string(w->guid) + " retains nothing";
      }
    } else if (kind == 4) {
      std::uint64_t topic = 0;
      if (auto e = decode_entry(bytes, topic, error)) {
        std::lock_guard lock(mu_);
        const auto t = retained_.find(topic);
        if (t != retained_.end() && t->second->history().knows(e->writer)) {
          // The domain's history replaces what this node recovered from its own log.
          if (restored.insert(topic).second) t->second->begin_restore();
          t->second->restore(std::move(*e));
          continue;
        }
        error = "a retained entry of writer " + std::to_string(e->writer) +
                " names a topic or writer the state did not announce";
      }
    } else if (kind == 5) {
      if (auto p = discovery::decode_participant(bytes, error)) {
        // Only the members of the view we join (one that left at this boundary is gone).
        if (view_.rank_of(router_.node_of(p->guid))) on_participant_record(std::move(*p));
        continue;
      }
    } else if (kind == 6) {
      if (auto t = discovery::decode_topic(bytes, error)) {
        if (view_.rank_of(router_.node_of(t->guid))) on_topic_record(std::move(*t));
        continue;
      }
    } else if (kind == 10) {
      if (auto t = discovery::decode_type(bytes, error)) {
        if (view_.rank_of(router_.node_of(t->guid))) {
          std::lock_guard lock(mu_);
          type_records_[t->guid] = std::move(*t);
        }
        continue;
      }
    } else if (kind == 7) {
      if (bytes.size() == 8) {
        router_.attach(static_cast<NodeId>(get_le(bytes, 0, 4)),
                       static_cast<NodeId>(get_le(bytes, 4, 4)));
        continue;
      }
      error = "a client's relay in " + std::to_string(bytes.size()) + " bytes, not 8";
    } else if (kind == 8 || kind == 9) {
      if (bytes.size() == (kind == 8 ? 12u : 8u)) {
        const auto topic = get_le(bytes, 0, 8);
        const auto node = kind == 8 ? static_cast<NodeId>(get_le(bytes, 8, 4)) : NodeId{0};
        std::lock_guard lock(mu_);
        if (kind == 8) {
          refreshing_[topic].insert(node);
        } else if (retained_.contains(topic)) {
          damaged_.insert(topic);
          asked_.insert(topic);
          damaged.push_back(topic);
        }
        continue;
      }
      error = "a refresh record of " + std::to_string(bytes.size()) + " bytes";
    } else {
      error = "unknown record kind " + std::to_string(kind);
    }
    std::cerr << "spindle: domain " << domain_id_ << ": a record of the joining state was "
              << "dropped: " << error << '\n';
  }
  for (const auto topic : restored) {
    std::lock_guard lock(mu_);
    if (const auto t = retained_.find(topic); t != retained_.end()) t->second->end_restore();
  }
  if (at != state.size()) {
    std::cerr << "spindle: domain " << domain_id_ << ": the joining state ends in a cut record ("
              << state.size() - at << " bytes left)\n";
  }
  if (!state.empty()) router_.hold_back({});
  if (!damaged.empty()) {
    executor().post([this, damaged] {
      if (!is_closed()) request_refresh(damaged);
    });
  }
  // The welcome view was laid out from this very table: its matches hold from the start.
  Actions actions;
  {
    std::lock_guard lock(mu_);
    settle(actions);
  }
  run_settled(actions);
}

// -------------------------------------------------------------------------- discovery in

void Participant::on_builtin(const ParsedSample& s, NodeId sender) {
  std::string error;
  switch (s.header.kind) {
    case SampleKind::announce_writer: {
      auto rec = discovery::decode_writer(s.payload, error);
      if (!rec) return report_bad_record(sender, s.header.kind, error);
      if (rec->guid != s.header.writer) {
        return report_bad_record(sender, s.header.kind, "guid differs from the sample header's");
      }
      on_writer_record(std::move(*rec));
      return;
    }
    case SampleKind::announce_reader: {
      auto rec = discovery::decode_reader(s.payload, error);
      if (!rec) return report_bad_record(sender, s.header.kind, error);
      if (rec->guid != s.header.writer) {
        return report_bad_record(sender, s.header.kind, "guid differs from the sample header's");
      }
      on_reader_record(std::move(*rec));
      return;
    }
    case SampleKind::retire_writer:
    case SampleKind::retire_reader:
      // Only the endpoint's member (a client's: its relay) retires it.
      if (router_.node_of(s.header.writer) == sender)
        on_retired(s.header.writer, s.header.kind == SampleKind::retire_writer);
      return;
    case SampleKind::client_detached: {
      // Its relay let it go (the Router passes only a detach that is current): whatever of it
      // the relay did not retire goes with it.
      NodeId client = 0;
      for (std::size_t i = 0; i < 4 && i < s.payload.size(); ++i)
        client |= static_cast<NodeId>(s.payload[i]) << (8 * i);
      on_suspicion(client, true, "");
      return;
    }
    case SampleKind::participant_left: {
      std::lock_guard lock(mu_);
      left_.insert(sender);
      return;
    }
    case SampleKind::permissions: {
      if (s.payload.size() != 64)
        return report_bad_record(sender, s.header.kind, "a digest is 64 hex characters");
      std::shared_ptr<const security::Permissions> now;
      {
        std::lock_guard lock(mu_);
        announced_permissions_[sender] =
            std::string(reinterpret_cast<const char*>(s.payload.data()), s.payload.size());
        now = switch_permissions();
      }
      if (now) {
        std::cerr << "spindle: domain " << domain_id_ << ": " << now->source() << " (sha256 "
                  << now->digest() << ") is in force at every member\n";
        bus_->set_permissions(now);
      }
      return;
    }
    case SampleKind::announce_participant: {
      auto rec = discovery::decode_participant(s.payload, error);
      if (!rec) return report_bad_record(sender, s.header.kind, error);
      if (rec->guid != s.header.writer || rec->guid != make_guid(guid_node(rec->guid), 1) ||
          router_.node_of(rec->guid) != sender) {
        return report_bad_record(
            sender, s.header.kind,
            "guid is not the sending member's participant's (or its client's)");
      }
      on_participant_record(std::move(*rec));
      return;
    }
    case SampleKind::announce_topic: {
      auto rec = discovery::decode_topic(s.payload, error);
      if (!rec) return report_bad_record(sender, s.header.kind, error);
      if (rec->guid != s.header.writer || router_.node_of(rec->guid) != sender) {
        return report_bad_record(sender, s.header.kind, "guid is not one of the sending member's");
      }
      on_topic_record(std::move(*rec));
      return;
    }
    case SampleKind::announce_type: {
      if (router_.node_of(s.header.writer) != sender) {
        return report_bad_record(sender, s.header.kind, "guid is not one of the sending member's");
      }
      std::optional<std::vector<std::byte>> whole;
      {
        std::lock_guard lock(mu_);
        whole = type_pieces_[s.header.writer].add(s.payload, discovery::kMaxTypeRecordBytes, error);
        if (whole || !error.empty()) type_pieces_.erase(s.header.writer);
      }
      if (!error.empty()) return report_bad_record(sender, s.header.kind, error);
      if (!whole) return;
      auto rec = discovery::decode_type(*whole, error);
      if (!rec) return report_bad_record(sender, s.header.kind, error);
      if (rec->guid != s.header.writer) {
        return report_bad_record(sender, s.header.kind, "guid is not the pieces' topic's");
      }
      std::lock_guard lock(mu_);
      type_records_[rec->guid] = std::move(*rec);
      return;
    }
    case SampleKind::retire_topic:
      if (router_.node_of(s.header.writer) == sender) on_topic_retired(s.header.writer);
      return;
    case SampleKind::refresh_request:
      return on_refresh_request(s, sender);
    case SampleKind::refresh_state:
      return on_refresh_state(s, sender);
    case SampleKind::repair_request:
      return on_repair_request(s, sender);
    case SampleKind::repair:
      return on_repair(s, sender);
    case SampleKind::liveliness: {
      std::vector<std::shared_ptr<Reader>> readers;
      {
        std::lock_guard lock(mu_);
        for (auto rg : endpoints_.readers_of(s.header.writer))
          if (auto r = local_reader(rg); r && !ignores(s.header.writer, rg))
            readers.push_back(std::move(r));
      }
      for (auto& r : readers)
        r->writer_asserted(s.header.writer);
      return;
    }
    default:
      return;
  }
}

void Participant::run(Actions& actions) {
  // The references the actions hold may be the last ones; make_entity()'s deleter moves
  // such a destruction off this (the predicate) thread.
  for (auto& a : actions)
    a();
}

// Another member uses a topic name we have with another type: INCONSISTENT_TOPIC, once per
// (topic, type). Called with mu_ held; the caller raises the status after releasing it.
std::shared_ptr<Topic> Participant::inconsistent_topic(const std::string& topic,
                                                       const std::string& type) {
  auto t = topics_.find(topic);
  if (t == topics_.end()) return nullptr;
  auto local = t->second.lock();
  if (!local || local->type().type_name == type) return nullptr;
  return inconsistent_seen_.emplace(topic, type).second ? local : nullptr;
}

// The types other than the local topic's that known records give `topic`, each counted once
// per (topic, type) as inconsistent_topic() does. Called with mu_ held.
std::size_t Participant::known_inconsistencies(const std::string& topic) {
  std::size_t n = 0;
  const auto see = [&](const std::string& name, const std::string& type) {
    if (name == topic && inconsistent_topic(name, type)) ++n;
  };
  for (const auto& [g, r] : topic_records_)
    see(r.topic_name, r.type_name);
  for (const auto& [g, r] : endpoints_.writer_records())
    see(r.topic_name, r.type_name);
  for (const auto& [g, r] : endpoints_.reader_records())
    see(r.topic_name, r.type_name);
  return n;
}

std::shared_ptr<Writer> Participant::local_writer(std::uint64_t guid) const {
  auto it = local_writers_.find(guid);
  return it == local_writers_.end() ? nullptr : it->second.lock();
}

std::shared_ptr<Reader> Participant::local_reader(std::uint64_t guid) const {
  auto it = local_readers_.find(guid);
  return it == local_readers_.end() ? nullptr : it->second.lock();
}

// What the endpoint table's changes mean for our entities (mu_ held): the events are
// collected into `out` and run after the lock is released (they take other locks).
void Participant::collect(const std::vector<discovery::Change>& changes, Actions& out) {
  using Kind = discovery::Change::Kind;
  for (const auto& c : changes) {
    auto lw = c.local_writer ? local_writer(c.writer) : nullptr;
    auto lr = c.local_reader ? local_reader(c.reader) : nullptr;
    switch (c.kind) {
      case Kind::matched:
        if ((lw || lr) && !ignores(c.writer, c.reader))
          pending_[{c.writer, c.reader}] = true;  // at the next view boundary
        break;
      case Kind::unmatched: {
        if (ignores(c.writer, c.reader)) break;  // never matched, or ignore() unmatched it
        const auto it = pending_.find({c.writer, c.reader});
        if (it != pending_.end() && it->second) {
          pending_.erase(it);  // never reported matched
        } else if (lw || lr) {
          pending_[{c.writer, c.reader}] = false;
        }
        break;
      }
      case Kind::incompatible:
        if (ignores(c.writer, c.reader)) break;
        if (lw) out.emplace_back([lw, ids = c.policies] { lw->incompatible(ids); });
        if (lr) out.emplace_back([lr, ids = c.policies] { lr->incompatible(ids); });
        break;
    }
  }
}

void Participant::matched_actions(std::uint64_t writer, std::uint64_t reader, Actions& out) {
  if (auto lw = local_writer(writer)) {
    // A reader of this process: the writer's write() waits for it where nobody else holds a
    // place in the topic's order (docs/dcps.md, "Your own samples").
    const bool local = view_.same_process(bus_->node(), guid_node(reader));
    out.emplace_back([lw, reader, local] { lw->matched(reader, +1, local); });
  }
  const auto* w = endpoints_.writer(writer);
  if (auto lr = local_reader(reader); lr && w != nullptr)
    out.emplace_back([lr, rec = *w] { lr->matched(rec); });
}

bool Participant::covered(std::uint64_t writer, std::uint64_t reader) const {
  const auto* w = endpoints_.writer(writer);
  if (w == nullptr) return false;
  const auto channel = writer_channel(*w);
  return group::sends(view_, channel, router_.node_of(writer)) &&
         group::receives(view_, channel, router_.node_of(reader));
}

group::Demand Participant::layout_demand() const {
  group::Demand demand;
  auto& out = demand.channels;
  std::lock_guard lock(mu_);
  demand.generation = generation_;
  for (const auto& [g, w] : endpoints_.writer_records()) {
    group::ChannelDemand d;
    d.channel = writer_channel(w);
    d.name = d.channel.topic == topic_id(w.topic_name)
                 ? w.topic_name
                 : "group-" + std::to_string(guid_node(g));  // a GROUP-scope publisher's
    d.writers.push_back(router_.node_of(g));                 // a client's: its relay's
    d.topic_name = w.topic_name;
    d.partition_names = w.publisher_qos.policy<dds::core::policy::Partition>().name();
    d.retained = retention_terms(w.qos).has_value();
    d.max_sample = w.max_sample;
    d.room = w.room;
    // A RELIABLE KEEP_ALL writer may wait for its KEEP_ALL readers (max_blocking_time); a
    // KEEP_LAST or BEST_EFFORT one waits for no reader past the lag bound.
    d.keeps_all = w.qos.policy<dds::core::policy::Reliability>().kind() ==
                      dds::core::policy::ReliabilityKind::RELIABLE &&
                  w.qos.policy<dds::core::policy::History>().kind() ==
                      dds::core::policy::HistoryKind::KEEP_ALL;
    // An Engine policy left at its defaults takes the domain file's engine settings.
    if (const auto& e = w.qos.policy<spindle::policy::Engine>(); e != spindle::policy::Engine()) {
      d.window_size = e.window_size();
      d.max_payload = e.max_payload();
      const auto& bound = e.lag_bound();
      d.lag_bound = bound == dds::core::Duration::infinite()
                        ? std::chrono::milliseconds(0)
                        : std::chrono::duration_cast<std::chrono::milliseconds>(bound.to_chrono());
    }
    out.push_back(std::move(d));
  }
  for (const auto& [g, r] : endpoints_.reader_records()) {
    group::ChannelDemand d;
    d.channel = group::Channel{topic_id(r.topic_name), group::Ordering::atomic};
    d.name = r.topic_name;
    d.topic_name = r.topic_name;
    d.readers.push_back(router_.node_of(g));
    // A best-effort reader holds no one (its process listens: docs/dev/smc.md "Listeners").
    d.passive = r.qos.policy<dds::core::policy::Reliability>().kind() ==
                dds::core::policy::ReliabilityKind::BEST_EFFORT;
    // A RELIABLE KEEP_ALL reader may hold its writers (max_blocking_time): never left behind.
    d.keeps_all = !d.passive && r.qos.policy<dds::core::policy::History>().kind() ==
                                    dds::core::policy::HistoryKind::KEEP_ALL;
    // The writers' partition sets it matches: only those subgroups need it.
    const auto& mine = r.subscriber_qos.policy<dds::core::policy::Partition>();
    for (const auto& [wg, w] : endpoints_.writer_records()) {
      if (w.topic_name != r.topic_name) continue;
      const auto& theirs = w.publisher_qos.policy<dds::core::policy::Partition>();
      if (!qos::partitions_match(theirs, mine)) continue;
      const auto channel = writer_channel(w);
      if (channel.topic == d.channel.topic) {
        d.partitions.push_back(channel.partition);
        continue;
      }
      // A GROUP-scope publisher's writer: the reader needs that publisher's group channel,
      // which carries this topic among others.
      group::ChannelDemand via;
      via.channel = group::Channel{channel.topic, group::Ordering::atomic};
      via.name = "group-" + std::to_string(guid_node(wg));
      via.topic_name = r.topic_name;
      via.readers.push_back(router_.node_of(g));
      via.partitions.push_back(channel.partition);
      via.passive = d.passive;
      via.keeps_all = d.keeps_all;
      out.push_back(std::move(via));
    }
    out.push_back(std::move(d));
  }
  return demand;
}

void Participant::on_view(const group::View& view) {
  // What was held back for a refresh in the view that ended goes on first (refresh.cpp).
  router_.hold_back({});
  std::lock_guard order(ignore_mu_);  // see ignore()
  Actions actions;
  std::shared_ptr<const security::Permissions> switched;
  std::vector<std::uint64_t> hold;
  {
    std::lock_guard lock(mu_);
    // DCPSParticipant: members that left (a joiner appears with its record).
    for (const auto& m : view_.members) {
      if (view.rank_of(m.id)) continue;
      if (participant_records_.erase(m.id) > 0) builtin_participant(m.id, false);
    }
    hold = refresh_at_boundary(view);
    view_ = view;
    switched = switch_permissions();  // the member that had not announced may have gone
    for (auto& [topic, t] : retained_) {
      t->set_view(view.epoch);
      t->apply_retention();
    }
    settle(actions);
  }
  router_.hold_back(std::move(hold));
  flush_builtin();
  run_settled(actions);
  if (switched) bus_->set_permissions(switched);
}

void Participant::run_settled(Actions& actions) {
  struct Done {
    Participant& p;
    ~Done() {
      std::lock_guard lock(p.mu_);
      --p.settling_;
    }
  } done{*this};
  run(actions);
  actions.clear();  // the references they hold go before await_match() returns
}

void Participant::settle(Actions& out) {
  ++settling_;
  // Readers whose record was applied get the retained history first: everything delivered
  // up to this boundary, before the live samples of the matches settled below.
  for (const auto guid : history_due_) {
    const auto lr = local_reader(guid);
    if (!lr) continue;
    const auto rec = lr->record();
    const auto t = retained_.find(topic_id(rec.topic_name));
    auto history = t == retained_.end() ? std::vector<Historical>{} : t->second->history_for(rec);
    // Samples of that history a damaged log lost: the reader would have received them.
    const std::uint64_t lost = t == retained_.end() ? 0 : t->second->lost_samples_for(rec);
    out.emplace_back([lr, h = std::move(history), lost] { lr->receive_history(h, lost); });
  }
  history_due_.clear();
  // The first view laid out by a permissions document that came in force: matches it no
  // longer covers (a grant removed) are unmatched, and match again if a later layout covers
  // them.
  if (regrant_after_ && view_.epoch > *regrant_after_) {
    regrant_after_.reset();
    for (const auto& [writer, w] : endpoints_.writer_records()) {
      for (const auto reader : endpoints_.readers_of(writer)) {
        auto lw = local_writer(writer);
        auto lr = local_reader(reader);
        if ((!lw && !lr) || pending_.contains({writer, reader}) || ignores(writer, reader) ||
            covered(writer, reader))
          continue;
        if (lw) out.emplace_back([lw, reader] { lw->matched(reader, -1); });
        if (lr) out.emplace_back([lr, writer = writer] { lr->unmatched(writer); });
        pending_[{writer, reader}] = true;
      }
    }
  }
  for (auto it = pending_.begin(); it != pending_.end();) {
    // Named copies: lambdas capture these (clang before 16 cannot capture a binding).
    const std::uint64_t writer = it->first.first;
    const std::uint64_t reader = it->first.second;
    if (!it->second) {
      if (auto lw = local_writer(writer))
        out.emplace_back([lw, reader] { lw->matched(reader, -1); });
      if (auto lr = local_reader(reader)) out.emplace_back([lr, writer] { lr->unmatched(writer); });
    } else if (covered(writer, reader)) {
      matched_actions(writer, reader, out);
    } else {
      ++it;  // a later view lays it out
      continue;
    }
    it = pending_.erase(it);
  }
}

void Participant::on_writer_record(WriterRecord rec) {
  Actions actions;
  std::shared_ptr<Topic> inconsistent;
  {
    std::lock_guard lock(mu_);
    inconsistent = inconsistent_topic(rec.topic_name, rec.type_name);
    if (const auto terms = retention_terms(rec.qos)) keep(rec, *terms);
    builtin_endpoint(rec, true);
    const auto topic = rec.topic_name;
    collect(endpoints_.add(std::move(rec)), actions);
    builtin_topic_check(topic);
    ++generation_;
  }
  flush_builtin();
  if (inconsistent) inconsistent->raise_inconsistent();
  run(actions);
  bus_->demand_changed();
}

std::shared_ptr<RetainedTopic> Participant::find_retained(std::uint64_t topic) const {
  std::lock_guard lock(mu_);
  const auto it = retained_.find(topic);
  return it == retained_.end() ? nullptr : it->second;
}

std::vector<storage::Entry> Participant::retained(const std::string& topic_name) const {
  const auto t = find_retained(topic_id(topic_name));
  return t ? t->history().snapshot() : std::vector<storage::Entry>{};
}

void Participant::retire_retained(const WriterRecord& w) {
  if (const auto it = retained_.find(topic_id(w.topic_name)); it != retained_.end())
    it->second->retire(w.guid);
}

RetainedTopic& Participant::keep(const WriterRecord& w, const storage::WriterTerms& terms) {
  auto& t = retained_topic(topic_id(w.topic_name));
  // A client keeps a logged topic's history in memory: the members log it.
  if (logs(w.qos) && !bus_->relayed() && !t.logging() && t.log_failure().empty())
    open_log(t, w.topic_name);
  t.add_writer(w, terms);
  return t;
}

void Participant::open_log(RetainedTopic& t, const std::string& topic_name) {
  std::string error;
  if (!log_home_.hold(error)) {
    // Another process with this node id lives: the log's own lock decides below.
    std::cerr << "spindle: domain " << domain_id_ << ": " << error << '\n';
  }
  // Whose log it is: this domain, and the home (adopted or its own) it lives in.
  std::optional<storage::LogIdentity> identity;
  if (const auto home = log_home_.id(error)) {
    identity = storage::LogIdentity{domain_id_, *home};
  } else {
    std::cerr << "spindle: domain " << domain_id_ << ": " << error
              << "; the logs' identity is not checked\n";
  }
  const auto dir = log_home_.topic_dir(topic_name);
  const auto report = t.open_log(dir, log_settings_, view_.epoch, identity);
  if (report.damaged() || !report.identity_note.empty() || !t.log_failure().empty()) {
    std::cerr << "spindle: domain " << domain_id_ << ": the log of topic '" << topic_name << "'"
              << (t.log_failure().empty() ? " was recovered: " + report.to_string()
                                          : " cannot be used: " + t.log_failure())
              << '\n';
  }
  if (const auto lost = t.lost_samples(); lost > 0)
    std::cerr << "spindle: domain " << domain_id_ << ": the log of topic '" << topic_name
              << "' lost " << lost << (lost == 1 ? " sample" : " samples")
              << " in damaged stretches (listed above); where this node replays the log to its "
                 "readers they count them as SAMPLE_LOST (a node that joins a running domain "
                 "takes the history from the others instead)\n";
}

void Participant::recover_logs() {
  const auto& node_dir = log_home_.path();
  std::error_code ec;
  if (!std::filesystem::is_directory(node_dir, ec)) return;
  std::vector<std::filesystem::path> dirs;
  try {
    dirs = storage::find_logs(node_dir);
  } catch (const std::exception& e) {
    std::cerr << "spindle: domain " << domain_id_ << ": the logs under " << node_dir.string()
              << " cannot be listed: " << e.what() << '\n';
    return;
  }
  for (const auto& dir : dirs) {
    // The topic is named by the first writer record the log holds.
    std::optional<WriterRecord> writer;
    std::string error;
    try {
      auto cursor = storage::read_log(dir, {}, true);  // past damage, as the replay goes
      while (auto r = cursor.next()) {
        if (r->kind != 2) continue;
        writer = discovery::decode_writer(r->payload, error);
        break;
      }
    } catch (const std::exception& e) {
      error = e.what();
    }
    if (!writer) {
      std::cerr << "spindle: domain " << domain_id_ << ": the log in " << dir.string()
                << " is skipped: it names no writer" << (error.empty() ? "" : ": " + error) << '\n';
      continue;
    }
    std::lock_guard lock(mu_);
    open_log(retained_topic(topic_id(writer->topic_name)), writer->topic_name);
  }
}

std::string Participant::log_failure(std::uint64_t topic) const {
  const auto t = find_retained(topic);
  return t ? t->log_failure() : std::string{};
}

RetainedTopic& Participant::retained_topic(std::uint64_t topic) {
  auto& t = retained_[topic];
  if (!t) {
    t = std::make_shared<RetainedTopic>(topic);
    router_.retain(topic, t);
  }
  return *t;
}

void Participant::on_reader_record(ReaderRecord rec) {
  Actions actions;
  std::shared_ptr<Topic> inconsistent;
  {
    std::lock_guard lock(mu_);
    inconsistent = inconsistent_topic(rec.topic_name, rec.type_name);
    // A local reader's own record: its history goes to it at the next view boundary.
    if (history_wanted_.erase(rec.guid) > 0) history_due_.insert(rec.guid);
    builtin_endpoint(rec, true);
    const auto topic = rec.topic_name;
    collect(endpoints_.add(std::move(rec)), actions);
    builtin_topic_check(topic);
    ++generation_;
  }
  flush_builtin();
  if (inconsistent) inconsistent->raise_inconsistent();
  run(actions);
  bus_->demand_changed();
}

void Participant::on_participant_record(discovery::ParticipantRecord rec) {
  {
    std::lock_guard lock(mu_);
    const auto node = guid_node(rec.guid);
    participant_records_[node] = std::move(rec);
    builtin_participant(node, true);
  }
  flush_builtin();
}

void Participant::on_topic_record(discovery::TopicRecord rec) {
  std::shared_ptr<Topic> inconsistent;
  {
    std::lock_guard lock(mu_);
    inconsistent = inconsistent_topic(rec.topic_name, rec.type_name);
    const auto name = rec.topic_name;
    const auto guid = rec.guid;
    topic_records_[guid] = std::move(rec);
    builtin_topic_check(name, guid);
  }
  flush_builtin();
  if (inconsistent) inconsistent->raise_inconsistent();
}

void Participant::on_topic_retired(std::uint64_t guid) {
  {
    std::lock_guard lock(mu_);
    type_records_.erase(guid);
    type_pieces_.erase(guid);
    const auto it = topic_records_.find(guid);
    if (it == topic_records_.end()) return;
    const auto name = it->second.topic_name;
    topic_records_.erase(it);
    builtin_topic_check(name);
  }
  flush_builtin();
}

void Participant::on_retired(std::uint64_t guid, bool writer) {
  Actions actions;
  {
    std::lock_guard lock(mu_);
    if (const auto* w = writer ? endpoints_.writer(guid) : nullptr) retire_retained(*w);
    std::string topic;
    if (const auto* w = writer ? endpoints_.writer(guid) : nullptr) {
      builtin_endpoint(*w, false);
      topic = w->topic_name;
    }
    if (const auto* r = writer ? nullptr : endpoints_.reader(guid)) {
      builtin_endpoint(*r, false);
      topic = r->topic_name;
    }
    collect(endpoints_.retire(guid, writer), actions);
    if (!topic.empty()) builtin_topic_check(topic);
    ++generation_;
  }
  flush_builtin();
  run(actions);
  bus_->demand_changed();
}

void Participant::on_suspicion(NodeId node, bool left, const std::string& why) {
  // A member removed from the group (failed, or left): its endpoints unmatch.
  Actions actions;
  std::size_t gone = 0;
  {
    std::lock_guard lock(mu_);
    left = left || left_.contains(node);
    std::set<std::string> topics;
    // The member's own, and its clients' (a relay that goes takes its clients with it).
    const auto ours = [&](std::uint64_t g) {
      return guid_node(g) == node || router_.node_of(g) == node;
    };
    // Participant records: a client's (members' go at the view change), and a relay's clients'.
    for (auto it = participant_records_.begin(); it != participant_records_.end();) {
      const bool client = it->first == node && !view_.rank_of(node).has_value();
      if (!client && (it->first == node || router_.node_of(make_guid(it->first, 0)) != node)) {
        ++it;
        continue;
      }
      builtin_participant(it->first, false);
      it = participant_records_.erase(it);
    }
    for (const auto& [g, w] : endpoints_.writer_records()) {
      if (!ours(g)) continue;
      retire_retained(w);
      builtin_endpoint(w, false);
      topics.insert(w.topic_name);
    }
    for (const auto& [g, r] : endpoints_.reader_records()) {
      if (!ours(g)) continue;
      builtin_endpoint(r, false);
      topics.insert(r.topic_name);
    }
    for (auto it = topic_records_.begin(); it != topic_records_.end();) {
      if (!ours(it->first)) {
        ++it;
        continue;
      }
      topics.insert(it->second.topic_name);
      it = topic_records_.erase(it);
    }
    std::erase_if(type_records_, [&](const auto& e) { return ours(e.first); });
    std::erase_if(type_pieces_, [&](const auto& e) { return ours(e.first); });
    const std::size_t before = endpoints_.writers() + endpoints_.readers();
    collect(endpoints_.retire_if(ours), actions);
    for (const auto& t : topics)
      builtin_topic_check(t);
    gone = before - (endpoints_.writers() + endpoints_.readers());
    if (gone > 0) ++generation_;
  }
  flush_builtin();
  if (gone > 0 && !left) {
    std::cerr << "spindle: domain " << domain_id_ << ": member " << node << " is gone (" << why
              << "); its " << gone << " endpoint(s) are unmatched\n";
  }
  run(actions);
  bus_->demand_changed();
}

// ------------------------------------------------------------------------------ Ignoring
//
// ignore_participant/_publication/_subscription are local: the endpoint table stays the
// domain's (every member's table must agree, it is the layout demand), and only this
// participant's matching skips pairs with an ignored side (collect()). The matches such a
// pair had end at once, not at a view boundary: nothing else in the domain changes, so no
// member needs to agree on the point, and a relayout asked by one member is not a view
// change. ignore_mu_ orders that unmatch with on_view(), where matches are reported: a match
// held for the next boundary is dropped, one reported is ended after it. A reader takes no
// sample of a writer it is not matched with (Reader::on_sample), so from the call on the
// ignored writer's samples are dropped.

bool Participant::ignores(std::uint64_t writer, std::uint64_t reader) const {
  return ignored_.writers.contains(writer) || ignored_.readers.contains(reader) ||
         ignored_.nodes.contains(guid_node(writer)) || ignored_.nodes.contains(guid_node(reader));
}

void Participant::ignore(Ignored kind, InstanceHandle h) {
  check_open();
  if (h.is_nil()) throw dds::core::InvalidArgumentError("ignore: the handle is nil");
  if (h == instance_handle()) {
    throw dds::core::PreconditionNotMetError("ignore: a participant cannot ignore itself");
  }
  const std::uint64_t guid = h.value();
  // A participant's handle is its member's guid of serial 1 (the constructor).
  const bool a_participant = guid == make_guid(guid_node(guid), 1);
  std::lock_guard order(ignore_mu_);
  Actions actions;
  {
    std::lock_guard lock(mu_);
    switch (kind) {
      case Ignored::topic:
        ignored_.topics.insert(guid);  // nothing matches on topics alone (see discovery.hpp)
        return;
      case Ignored::participant:
        if (!a_participant) {
          throw dds::core::InvalidArgumentError("ignore: " + std::to_string(guid) +
                                                " is not a participant's handle");
        }
        ignored_.nodes.insert(guid_node(guid));
        break;
      case Ignored::publication:
        if (a_participant || endpoints_.reader(guid) != nullptr || local_readers_.contains(guid)) {
          throw dds::core::InvalidArgumentError("ignore: " + std::to_string(guid) +
                                                " is not a publication's (a writer's) handle");
        }
        ignored_.writers.insert(guid);
        break;
      case Ignored::subscription:
        if (a_participant || endpoints_.writer(guid) != nullptr || local_writers_.contains(guid)) {
          throw dds::core::InvalidArgumentError("ignore: " + std::to_string(guid) +
                                                " is not a subscription's (a reader's) handle");
        }
        ignored_.readers.insert(guid);
        break;
    }
    // The matches of this participant's endpoints that now have an ignored side end.
    for (const auto& [writer, w] : endpoints_.writer_records()) {
      for (const auto reader : endpoints_.readers_of(writer)) {
        if (!ignores(writer, reader)) continue;
        if (!local_writers_.contains(writer) && !local_readers_.contains(reader)) continue;
        const auto it = pending_.find({writer, reader});
        if (it != pending_.end()) {
          pending_.erase(it);  // never reported matched
          continue;
        }
        if (auto lw = local_writer(writer))
          actions.emplace_back([lw, reader] { lw->matched(reader, -1); });
        if (auto lr = local_reader(reader))
          actions.emplace_back([lr, w = writer] { lr->unmatched(w); });
      }
    }
  }
  run(actions);
}

// --------------------------------------------------------------------------------- Topic

Topic::Topic(std::shared_ptr<Participant> p, std::string name, const detail::TypeSupport& type,
             const dds::topic::qos::TopicQos& q, InstanceHandle h)
    : TopicCore(h), participant_(std::move(p)), name_(std::move(name)), type_(&type), qos_(q) {}

Topic::~Topic() {
  // Without close() (its last reference went): the domain still learns that it is gone,
  // unless its participant is gone from the domain already.
  if (!is_closed() && announced_.load() && !participant_->is_closed())
    participant_->retire_topic(instance_handle().value());
  participant_->forget(this);
}

void Topic::enable() {
  if (is_enabled()) return;
  check_open();
  TopicCore::enable();
  participant_->announce(*this);
}

discovery::TopicRecord Topic::record() const {
  return {instance_handle().value(), name_, std::string(type_->type_name), qos_.get()};
}

void Topic::close() {
  if (is_closed()) return;
  const auto [writers, readers] = participant_->endpoints_of(*this);
  if (writers + readers > 0) {
    std::string what = "Topic::close: topic '";
    what += name_;
    what += "' is still used by ";
    what += std::to_string(writers);
    what += " writer(s) and ";
    what += std::to_string(readers);
    what += " reader(s) of its participant; close them first";
    throw dds::core::PreconditionNotMetError(what);
  }
  if (announced_.exchange(false)) participant_->retire_topic(instance_handle().value());
  listener(nullptr, StatusMask::none());  // a closed entity calls no listener
  TopicCore::close();
}

dds::topic::qos::TopicQos Topic::qos() const {
  return qos_.get();
}

void Topic::qos(const dds::topic::qos::TopicQos& q) {
  check_open();
  const auto old = qos_.get();
  qos_.set_own(q);
  if (q == old || !announced_.load()) return;
  // The domain sees the new QoS (DCPSTopic); a record that cannot go keeps the old one.
  try {
    participant_->announce(*this);
  } catch (...) {
    qos_.set_own(old);
    throw;
  }
}

void Topic::listener(std::shared_ptr<detail::TopicListenerHook> hook, const StatusMask& mask) {
  {
    std::lock_guard lock(mu_);
    hook_ = std::move(hook);
    mask_ = mask;
  }
  participant_->fence_listeners();
}

std::shared_ptr<detail::TopicListenerHook> Topic::listener() const {
  std::lock_guard lock(mu_);
  return hook_;
}

void Topic::raise_inconsistent() {
  const auto bit = StatusMask::inconsistent_topic();
  std::shared_ptr<detail::TopicListenerHook> hook;
  {
    std::lock_guard lock(mu_);
    if (hook_ && has(mask_, bit)) hook = hook_;
  }
  auto* dl = hook ? nullptr : participant_->listener_for(bit);
  const auto s = statuses().inconsistent_topic(hook != nullptr || dl != nullptr);
  if (!hook && dl == nullptr) return;
  // Called only if the same listener still hears the status when the job runs.
  participant_->post_listener([hook, dl, bit, s, weak = weak_from_this()] {
    const auto self = std::static_pointer_cast<Topic>(weak.lock());
    if (!self || self->is_closed()) return;
    std::shared_ptr<detail::TopicListenerHook> now;
    {
      std::lock_guard lock(self->mu_);
      if (self->hook_ && has(self->mask_, bit)) now = self->hook_;
    }
    if (now != hook || (!now && self->participant_->listener_for(bit) != dl)) return;
    if (hook) {
      hook->on_inconsistent_topic(s);
    } else {
      dds::topic::AnyTopic t(std::static_pointer_cast<TopicCore>(self));
      dl->on_inconsistent_topic(t, s);
    }
  });
}

}  // namespace spindle::dcps
