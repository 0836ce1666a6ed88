// spindle ls [--qos] [--json] [--wait SECONDS] [--domain ID]
// spindle ps [--json] [--wait SECONDS] [--domain ID]
// spindle why TOPIC [--json] [--wait SECONDS] [--domain ID]
//
// What a running domain holds, as discovery tells a participant that joins it
// (<spindle/inspect.hpp>): the command joins, waits `--wait` seconds (default 1) for the
// members' announcements, prints, and leaves.
//
// ls: each topic with its type, writers, readers, partitions and consistency; with --qos, each
// writer's and reader's whole QoS (the keys of qos-profiles/schema.md). ps: each participant
// with its node id, role (member, client; a member with no Topic and no endpoint is a
// witness), host, pid and process, and its endpoint counts; the command's own participant is
// marked. why: for every writer and reader of the topic, whether they match, and each rule
// (type, partition, each requested/offered policy, data representation, consistency) with
// what the writer offers and the reader requests.
//
// --json prints one JSON document instead (docs/tools.md gives its fields). Exit status 0;
// for why, 3 when no writer and no reader of the topic is known.
#include <algorithm>
#include <cstdint>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <spindle/inspect.hpp>
#include <spindle/types/dynamic_data.hpp>

#include "command.hpp"

namespace spindle_cli {
namespace {

namespace in = spindle::inspect;
using spindle::types::Json;

struct DomainOptions {
  std::string topic;
  bool qos = false;
  bool json = false;
  double wait = 1;
  std::int32_t domain = -1;
};

// The domain as a participant that joined and waited `wait` seconds sees it (null: stopped).
std::unique_ptr<in::Snapshot> look(const DomainOptions& o) {
  const sigset_t stop = block_stop_signals();
  dds::domain::DomainParticipant participant = join(o.domain);
  if (o.wait > 0 && stopped_within(stop, o.wait)) return nullptr;
  return std::make_unique<in::Snapshot>(in::snapshot(participant));
}

std::string handle_text(std::uint64_t handle) {
  std::ostringstream s;
  s << "0x" << std::hex << handle;
  return s.str();
}

std::string value_of(const in::Fields& fields, std::string_view key) {
  for (const auto& [k, v] : fields)
    if (k == key) return v;
  return {};
}

Json fields_json(const in::Fields& fields) {
  Json out = Json::object();
  for (const auto& [k, v] : fields)
    out[k] = v;
  return out;
}

std::string join_set(const std::set<std::string>& items) {
  std::string out;
  for (const auto& i : items)
    out += (out.empty() ? "" : ",") + i;
  return out.empty() ? "-" : out;
}

// The partition names a list of them means ("" when empty: the default partition).
std::set<std::string> partitions(const dds::core::StringSeq& names) {
  if (names.empty()) return {"\"\""};
  std::set<std::string> out;
  for (const auto& n : names)
    out.insert("\"" + n + "\"");
  return out;
}

struct TopicView {
  std::set<std::string> types;
  std::vector<const in::Writer*> writers;
  std::vector<const in::Reader*> readers;
  std::set<std::string> partitions;
  std::set<std::string> consistency;  // the writers' levels
};

std::map<std::string, TopicView> by_topic(const in::Snapshot& d) {
  std::map<std::string, TopicView> topics;
  for (const auto& t : d.topics)
    topics[t.name].types.insert(t.type_name);
  for (const auto& w : d.writers) {
    auto& t = topics[w.topic_name];
    t.types.insert(w.type_name);
    t.writers.push_back(&w);
    const auto p = partitions(w.publisher_qos.policy<dds::core::policy::Partition>().name());
    t.partitions.insert(p.begin(), p.end());
    t.consistency.insert(value_of(in::fields(w.qos), "consistency.kind"));
  }
  for (const auto& r : d.readers) {
    auto& t = topics[r.topic_name];
    t.types.insert(r.type_name);
    t.readers.push_back(&r);
    const auto p = partitions(r.subscriber_qos.policy<dds::core::policy::Partition>().name());
    t.partitions.insert(p.begin(), p.end());
  }
  return topics;
}

int ls(const DomainOptions& o) {
  const auto d = look(o);
  if (!d) return 0;
  const auto topics = by_topic(*d);
  if (o.json) {
    Json out;
    out["domain"] = d->domain_id;
    out["topics"] = Json::array();
    for (const auto& [name, t] : topics) {
      Json j;
      j["name"] = name;
      j["types"] = t.types;
      j["partitions"] = t.partitions;
      j["consistency"] = t.consistency;
      j["writers"] = Json::array();
      j["readers"] = Json::array();
      for (const auto* w : t.writers) {
        Json e{{"handle", handle_text(w->handle)}, {"node", w->node_id}, {"type", w->type_name}};
        if (o.qos) e["qos"] = fields_json(in::fields(w->qos));
        if (o.qos) e["publisher_qos"] = fields_json(in::fields(w->publisher_qos));
        j["writers"].push_back(std::move(e));
      }
      for (const auto* r : t.readers) {
        Json e{{"handle", handle_text(r->handle)}, {"node", r->node_id}, {"type", r->type_name}};
        if (o.qos) e["qos"] = fields_json(in::fields(r->qos));
        if (o.qos) e["subscriber_qos"] = fields_json(in::fields(r->subscriber_qos));
        j["readers"].push_back(std::move(e));
      }
      out["topics"].push_back(std::move(j));
    }
    std::cout << out.dump(2) << std::endl;
    return 0;
  }
  if (topics.empty()) {
    std::cout << "no topics in domain " << d->domain_id << std::endl;
    return 0;
  }
  std::vector<std::vector<std::string>> rows{
      {"TOPIC", "TYPE", "WRITERS", "READERS", "PARTITIONS", "CONSISTENCY"}};
  for (const auto& [name, t] : topics)
    rows.push_back({name, join_set(t.types), std::to_string(t.writers.size()),
                    std::to_string(t.readers.size()), join_set(t.partitions),
                    join_set(t.consistency)});
  print_table(std::cout, rows);
  if (!o.qos) return 0;
  const auto print_qos = [](const in::Fields& a, const in::Fields& b) {
    for (const auto* f : {&a, &b})
      for (const auto& [k, v] : *f)
        std::cout << "    " << k << ": " << v << '\n';
  };
  for (const auto& [name, t] : topics) {
    for (const auto* w : t.writers) {
      std::cout << "\n"
                << name << ": writer " << handle_text(w->handle) << " (node " << w->node_id
                << ")\n";
      print_qos(in::fields(w->qos), in::fields(w->publisher_qos));
    }
    for (const auto* r : t.readers) {
      std::cout << "\n"
                << name << ": reader " << handle_text(r->handle) << " (node " << r->node_id
                << ")\n";
      print_qos(in::fields(r->qos), in::fields(r->subscriber_qos));
    }
  }
  std::cout << std::flush;
  return 0;
}

// "member", "client", or "witness" (a member with no Topic and no endpoint).
std::string role_of(const in::Participant& p, const in::Snapshot& d) {
  if (p.role == in::Role::client) return "client";
  const auto mine = [&](const auto& list) {
    return std::any_of(list.begin(), list.end(),
                       [&](const auto& e) { return e.node_id == p.node_id; });
  };
  if (!p.local && !mine(d.topics) && !mine(d.writers) && !mine(d.readers)) return "witness";
  return "member";
}

int ps(const DomainOptions& o) {
  const auto d = look(o);
  if (!d) return 0;
  const auto count = [](const auto& list, std::uint32_t node) {
    return static_cast<std::size_t>(
        std::count_if(list.begin(), list.end(), [&](const auto& e) { return e.node_id == node; }));
  };
  if (o.json) {
    Json out;
    out["domain"] = d->domain_id;
    out["participants"] = Json::array();
    for (const auto& p : d->participants)
      out["participants"].push_back(Json{{"node", p.node_id},
                                         {"handle", handle_text(p.handle)},
                                         {"role", role_of(p, *d)},
                                         {"host", p.host},
                                         {"pid", p.pid},
                                         {"process", p.process},
                                         {"this_command", p.local},
                                         {"topics", count(d->topics, p.node_id)},
                                         {"writers", count(d->writers, p.node_id)},
                                         {"readers", count(d->readers, p.node_id)}});
    std::cout << out.dump(2) << std::endl;
    return 0;
  }
  std::vector<std::vector<std::string>> rows{
      {"NODE", "ROLE", "HOST", "PID", "PROCESS", "TOPICS", "WRITERS", "READERS"}};
  for (const auto& p : d->participants)
    rows.push_back({std::to_string(p.node_id), role_of(p, *d), p.host.empty() ? "?" : p.host,
                    p.pid == 0 ? "?" : std::to_string(p.pid),
                    (p.process.empty() ? "?" : p.process) + (p.local ? " (this command)" : ""),
                    std::to_string(count(d->topics, p.node_id)),
                    std::to_string(count(d->writers, p.node_id)),
                    std::to_string(count(d->readers, p.node_id))});
  print_table(std::cout, rows);
  std::cout << std::flush;
  return 0;
}

// "node 3 (pid 1234 shapes)" for an endpoint of `node`.
std::string owner(const in::Snapshot& d, std::uint32_t node) {
  std::string s = "node " + std::to_string(node);
  for (const auto& p : d.participants)
    if (p.node_id == node && p.pid != 0)
      s += " (" + p.process + ", pid " + std::to_string(p.pid) + " on " + p.host + ")";
  return s;
}

int why(const DomainOptions& o) {
  const auto d = look(o);
  if (!d) return 0;
  std::vector<const in::Writer*> writers;
  std::vector<const in::Reader*> readers;
  for (const auto& w : d->writers)
    if (w.topic_name == o.topic) writers.push_back(&w);
  for (const auto& r : d->readers)
    if (r.topic_name == o.topic) readers.push_back(&r);
  if (writers.empty() && readers.empty()) {
    std::cerr << "spindle why: no writer and no reader of '" << o.topic << "' in domain "
              << d->domain_id << std::endl;
    return 3;
  }
  Json out;
  out["topic"] = o.topic;
  out["writers"] = writers.size();
  out["readers"] = readers.size();
  out["pairs"] = Json::array();
  if (!o.json) {
    std::cout << o.topic << ": " << writers.size() << " writer(s), " << readers.size()
              << " reader(s)\n";
    if (writers.empty()) std::cout << "no writer: the readers have nothing to match\n";
    if (readers.empty()) std::cout << "no reader: the writers have nothing to match\n";
  }
  for (const auto* w : writers)
    for (const auto* r : readers) {
      const auto e = in::explain(*w, *r);
      if (o.json) {
        Json pair{{"writer", handle_text(w->handle)},
                  {"writer_node", w->node_id},
                  {"reader", handle_text(r->handle)},
                  {"reader_node", r->node_id},
                  {"matched", e.matched},
                  {"checks", Json::array()}};
        for (const auto& c : e.checks)
          pair["checks"].push_back(Json{
              {"rule", c.rule}, {"offered", c.offered}, {"requested", c.requested}, {"ok", c.ok}});
        out["pairs"].push_back(std::move(pair));
        continue;
      }
      std::cout << "\nwriter " << handle_text(w->handle) << " of " << owner(*d, w->node_id)
                << "\nreader " << handle_text(r->handle) << " of " << owner(*d, r->node_id) << "\n"
                << (e.matched ? "MATCH" : "NO MATCH") << '\n';
      std::vector<std::vector<std::string>> rows{{"", "RULE", "WRITER OFFERS", "READER REQUESTS"}};
      for (const auto& c : e.checks)
        rows.push_back({c.ok ? "  ok" : "  MISMATCH", c.rule, c.offered, c.requested});
      print_table(std::cout, rows);
    }
  if (o.json) std::cout << out.dump(2) << std::endl;
  std::cout << std::flush;
  return 0;
}

std::shared_ptr<DomainOptions> common_options(CLI::App* cmd) {
  auto o = std::make_shared<DomainOptions>();
  cmd->add_flag("--json", o->json, "One JSON document instead of a table (docs/tools.md)");
  cmd->add_option("--wait", o->wait,
                  "Seconds to wait for the members' announcements after joining (default 1)")
      ->check(CLI::Range(0.0, 3600.0));
  add_domain_option(cmd, o->domain);
  return o;
}

}  // namespace

void add_ls(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand(
      "ls", "List the topics of the domain: types, writers, readers, partitions, consistency");
  auto o = common_options(cmd);
  cmd->add_flag("--qos", o->qos, "Also each writer's and reader's QoS");
  cmd->callback([&action, o] { action = [o] { return ls(*o); }; });
}

void add_ps(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand(
      "ps", "List the participants of the domain: node id, role, host, pid and process");
  auto o = common_options(cmd);
  cmd->callback([&action, o] { action = [o] { return ps(*o); }; });
}

void add_why(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand(
      "why",
      "Say why the writers and readers of a topic match or not: type, partitions, each QoS "
      "policy offered against requested, data representation, consistency");
  auto o = common_options(cmd);
  cmd->add_option("topic", o->topic, "The topic's name")->required();
  cmd->callback([&action, o] { action = [o] { return why(*o); }; });
}

}  // namespace spindle_cli
