// spindle status [--domain ID] [--interval S] [--once] [--wait S] [--http HOST:PORT]
//
// The running domain as one of its members sees it (<spindle/domain_status.hpp>): the view
// (epoch, members, leader), the subgroups that carry each topic, each topic's rate, and how far
// each member's delivery is behind the stream of each subgroup. The command joins the domain
// and reads every topic it finds BEST_EFFORT (a listener: it holds nobody back), so that it
// is a member of every topic's subgroup and its engine delivers, and counts, each stream; a
// rate is the difference of two snapshots of those counts over the interval between them.
// It redraws every --interval seconds until Ctrl-C; --once waits for the topics' subgroups
// (up to --wait seconds), measures one interval and prints once. --http also serves the page
// of status_page.hpp at "/" and the same snapshot as JSON at "/status.json"
// (docs/tools.md, "spindle status", has the schema).
//
// Threading: the main thread joins, follows the topics and renders; the HTTP server's thread
// (http.hpp) only copies the latest JSON document, under Latest's mutex.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <spindle/domain_status.hpp>

#include "command.hpp"
#include "http.hpp"
#include "status_page.hpp"

namespace spindle_cli {
namespace {

using spindle::types::Json;
using Clock = std::chrono::steady_clock;

struct StatusOptions {
  std::int32_t domain = -1;
  double interval = 1;
  bool once = false;
  double wait = 5;
  std::string http;
};

// Reads every topic of the domain whose type discovery carries, BEST_EFFORT KEEP_LAST 1 and
// decoding keys only: the samples are not needed, only that this member's engine delivers
// (and counts) the topic's stream.
class Follower {
 public:
  explicit Follower(dds::domain::DomainParticipant& dp) : dp_(dp), subscriber_(dp) {}

  // Reads the topics of `status` not read yet. Each new reader returns once the view that
  // matches it is installed (docs/dcps.md, "Matching at creation").
  void follow(const spindle::DomainStatus& status) {
    for (const auto& t : status.topics) {
      if (t.name.empty() || readers_.contains(t.name) || unreadable_.contains(t.name)) continue;
      try {
        const auto* type = spindle::types::discovered_type(dp_, t.name, library_);
        if (type == nullptr) continue;  // no type information yet: again next time
        auto topic = spindle::types::create_topic(dp_, t.name, *type, dp_.default_topic_qos(),
                                                  spindle::types::Decoding::key_only);
        dds::sub::qos::DataReaderQos q = topic.qos();
        q << dds::core::policy::Reliability::BestEffort()
          << dds::core::policy::History::KeepLast(1);
        readers_.emplace(
            t.name, dds::sub::DataReader<spindle::types::DynamicSample>(subscriber_, topic, q));
      } catch (const std::exception& e) {
        unreadable_[t.name] = e.what();
      }
    }
  }

  // Lets the readers' caches go.
  void drain() {
    for (auto& [name, reader] : readers_)
      (void)reader.take();
  }

  [[nodiscard]] bool reads(const std::string& topic) const { return readers_.contains(topic); }
  [[nodiscard]] const std::map<std::string, std::string>& unreadable() const noexcept {
    return unreadable_;
  }

 private:
  dds::domain::DomainParticipant& dp_;
  dds::sub::Subscriber subscriber_;
  spindle::types::TypeLibrary library_;
  std::map<std::string, dds::sub::DataReader<spindle::types::DynamicSample>> readers_;
  std::map<std::string, std::string> unreadable_;  // topic -> why it cannot be read
};

// Two snapshots and what lies between them.
struct Report {
  spindle::DomainStatus now;
  std::optional<spindle::DomainStatus> before;
  double interval = 1;
};

// Per second between the snapshots; nullopt without an earlier one or for a topic not read.
std::optional<double> rate(const Report& r, const spindle::TopicStatus& t,
                           std::uint64_t spindle::TopicStatus::*count) {
  if (!r.before) return std::nullopt;
  const auto seconds = std::chrono::duration<double>(r.now.taken - r.before->taken).count();
  if (seconds <= 0) return std::nullopt;
  for (const auto& b : r.before->topics)
    if (b.id == t.id) return static_cast<double>(t.*count - b.*count) / seconds;
  return static_cast<double>(t.*count) / seconds;
}

const char* role(const spindle::SubgroupMemberStatus& m) {
  if (m.sender) return "sender";
  if (m.listener) return "listener";
  return "reader";
}

std::string hex(std::uint64_t v) {
  std::ostringstream out;
  out << std::hex << std::setw(16) << std::setfill('0') << v;
  return out.str();
}

std::string ids(const std::vector<std::uint32_t>& v) {
  std::string out;
  for (const auto id : v)
    out += (out.empty() ? "" : " ") + std::to_string(id);
  return out.empty() ? "-" : out;
}

std::vector<std::uint32_t> listeners(const spindle::SubgroupStatus& sg) {
  std::vector<std::uint32_t> out;
  for (const auto& m : sg.members)
    if (m.listener) out.push_back(m.node);
  return out;
}

std::vector<std::uint32_t> subgroups_of(const spindle::DomainStatus& s, std::uint64_t topic) {
  std::vector<std::uint32_t> out;
  for (const auto& sg : s.subgroups)
    if (sg.topic_id == topic && sg.index != 0) out.push_back(sg.index);
  return out;
}

template <class T>
Json or_null(const std::optional<T>& v) {
  return v ? Json(*v) : Json(nullptr);
}

// The /status.json document (docs/tools.md has its schema).
Json to_json(const Report& r, const Follower& follower) {
  const auto& s = r.now;
  Json j;
  j["domain"] = s.domain_id;
  j["self"] = s.self;
  j["transport"] = s.transport;
  j["interval"] = r.interval;
  j["view"] = {{"epoch", s.epoch},
               {"identity", hex(s.identity)},
               {"leader", s.leader},
               {"halted", s.halted.empty() ? Json(nullptr) : Json(s.halted)}};
  j["members"] = Json::array();
  for (const auto& m : s.members)
    j["members"].push_back({{"node", m.node},
                            {"host", m.host},
                            {"port", m.port},
                            {"pid", m.pid},
                            {"leader", m.leader},
                            {"self", m.self},
                            {"joining", m.joining},
                            {"suspected", m.suspected}});
  j["subgroups"] = Json::array();
  j["readers"] = Json::array();
  for (const auto& sg : s.subgroups) {
    Json members = Json::array();
    for (const auto& m : sg.members)
      members.push_back(m.node);
    j["subgroups"].push_back({{"index", sg.index},
                              {"name", sg.name},
                              {"topic", sg.index == 0 ? Json(nullptr) : Json(sg.topic)},
                              {"ordering", sg.atomic ? "atomic" : "unordered"},
                              {"window", sg.window},
                              {"max_payload", sg.max_payload},
                              {"members", members},
                              {"senders", sg.senders},
                              {"listeners", listeners(sg)},
                              {"sent", sg.self_member ? Json(sg.sent) : Json(nullptr)}});
    for (const auto& m : sg.members)
      j["readers"].push_back({{"subgroup", sg.index},
                              {"name", sg.name},
                              {"topic", sg.index == 0 ? Json(nullptr) : Json(sg.topic)},
                              {"node", m.node},
                              {"role", role(m)},
                              {"received", or_null(m.received)},
                              {"delivered", or_null(m.delivered)},
                              {"lag", or_null(m.lag)},
                              {"left_behind", m.left_behind}});
  }
  j["topics"] = Json::array();
  for (const auto& t : s.topics) {
    const bool read = follower.reads(t.name);
    const auto why = follower.unreadable().find(t.name);
    j["topics"].push_back(
        {{"name", t.name},
         {"type", t.type_name},
         {"id", hex(t.id)},
         {"read", read},
         {"unreadable", why == follower.unreadable().end() ? Json(nullptr) : Json(why->second)},
         {"samples", t.delivered},
         {"bytes", t.delivered_bytes},
         {"samples_per_s",
          read ? or_null(rate(r, t, &spindle::TopicStatus::delivered)) : Json(nullptr)},
         {"bytes_per_s",
          read ? or_null(rate(r, t, &spindle::TopicStatus::delivered_bytes)) : Json(nullptr)},
         {"subgroups", subgroups_of(s, t.id)}});
  }
  return j;
}

// Left-aligned columns, two spaces apart, under a heading.
void table(std::ostream& out, const std::string& heading,
           const std::vector<std::vector<std::string>>& rows) {
  out << heading << "\n";
  print_table(out, rows, "  ");
}

std::string fixed(std::optional<double> v, int digits = 1) {
  if (!v) return "-";
  std::ostringstream out;
  out << std::fixed << std::setprecision(digits) << *v;
  return out.str();
}

std::string bytes_per_s(std::optional<double> v) {
  if (!v) return "-";
  const char* units[] = {"B/s", "kB/s", "MB/s", "GB/s"};
  std::size_t u = 0;
  double x = *v;
  for (; x >= 1000 && u + 1 < std::size(units); ++u)
    x /= 1000;
  return fixed(x) + " " + units[u];
}

std::string text(const Report& r, const Follower& follower) {
  const auto& s = r.now;
  std::ostringstream out;
  out << "domain " << s.domain_id << ": view " << s.epoch << " (identity " << hex(s.identity)
      << "), " << s.members.size() << " members, leader node " << s.leader << "; seen by node "
      << s.self << " over " << s.transport << "; rates over the last " << r.interval << " s\n";
  if (!s.halted.empty()) out << "halted: " << s.halted << "\n";
  std::vector<std::vector<std::string>> rows{{"node", "host", "port", "pid", ""}};
  for (const auto& m : s.members) {
    std::string notes;
    for (const auto& [on, what] : {std::pair{m.leader, "leader"},
                                   {m.self, "this status"},
                                   {m.joining, "joining"},
                                   {m.suspected, "suspected"}})
      if (on) notes += (notes.empty() ? "" : ", ") + std::string(what);
    rows.push_back({std::to_string(m.node), m.host, std::to_string(m.port),
                    m.pid == 0 ? "-" : std::to_string(m.pid), notes});
  }
  table(out, "members", rows);
  rows = {{"topic", "type", "samples/s", "bytes/s", "samples", "subgroups"}};
  for (const auto& t : s.topics) {
    const bool read = follower.reads(t.name);
    const auto sgs = subgroups_of(s, t.id);
    rows.push_back({t.name.empty() ? hex(t.id) : t.name, t.type_name.empty() ? "-" : t.type_name,
                    read ? fixed(rate(r, t, &spindle::TopicStatus::delivered)) : "-",
                    read ? bytes_per_s(rate(r, t, &spindle::TopicStatus::delivered_bytes)) : "-",
                    std::to_string(t.delivered), ids(sgs)});
  }
  table(out, "topics", rows);
  for (const auto& [topic, why] : follower.unreadable())
    out << "  (" << topic << " is not read: " << why << ")\n";
  rows = {{"#", "name", "ordering", "members", "senders", "listeners"}};
  std::vector<std::vector<std::string>> lags{{"subgroup", "node", "role", "delivered", "lag"}};
  for (const auto& sg : s.subgroups) {
    std::vector<std::uint32_t> members;
    for (const auto& m : sg.members) {
      members.push_back(m.node);
      lags.push_back({sg.name, std::to_string(m.node),
                      std::string(role(m)) + (m.left_behind ? " (left behind)" : ""),
                      m.delivered ? std::to_string(*m.delivered) : "-",
                      m.lag ? std::to_string(*m.lag) : "-"});
    }
    rows.push_back({std::to_string(sg.index), sg.name, sg.atomic ? "atomic" : "unordered",
                    ids(members), ids(sg.senders), ids(listeners(sg))});
  }
  table(out, "subgroups", rows);
  table(out,
        "reader lag (behind the subgroup's stream: atomic in sequence numbers, unordered in "
        "messages)",
        lags);
  return out.str();
}

// The latest JSON document, for the HTTP server's thread.
class Latest {
 public:
  void set(std::string json) {
    auto doc = std::make_shared<const std::string>(std::move(json));
    std::lock_guard lock(mu_);
    json_ = std::move(doc);
  }
  [[nodiscard]] std::shared_ptr<const std::string> get() const {
    std::lock_guard lock(mu_);
    return json_;
  }

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const std::string> json_;
};

int status(const StatusOptions& o) {
  const sigset_t stop = block_stop_signals();
  dds::domain::DomainParticipant participant = join(o.domain);
  Follower follower(participant);

  Latest latest;
  std::unique_ptr<HttpServer> server;
  if (!o.http.empty()) {
    server = std::make_unique<HttpServer>(
        o.http, [&latest](const std::string& path) -> std::optional<HttpResponse> {
          if (path == "/" || path == "/index.html")
            return HttpResponse{200, "text/html; charset=utf-8", std::string(kStatusPage)};
          if (path == "/status.json") {
            const auto doc = latest.get();
            return HttpResponse{200, "application/json", doc ? *doc + "\n" : std::string("{}\n")};
          }
          return std::nullopt;
        });
    std::cerr << "spindle status: serving http://" << server->address() << "/" << std::endl;
  }

  // The topics the domain has now, and their subgroups with this member in them: discovery's
  // records come with the join, type information with the first Topic records.
  const auto settle = Clock::now() + std::chrono::duration<double>(o.wait);
  for (;;) {
    const auto s = spindle::domain_status(participant);
    follower.follow(s);
    const bool typed = std::ranges::all_of(s.topics, [&](const spindle::TopicStatus& t) {
      return t.name.empty() || follower.reads(t.name) || follower.unreadable().contains(t.name);
    });
    if (typed || Clock::now() >= settle) break;
    if (stopped_within(stop, 0.05)) return 0;
  }

  const bool redraw = !o.once && isatty(STDOUT_FILENO) != 0;
  Report report;
  report.interval = o.interval;
  report.now = spindle::domain_status(participant);
  for (;;) {
    if (stopped_within(stop, o.interval)) return 0;
    follower.drain();
    report.before = std::move(report.now);
    report.now = spindle::domain_status(participant);
    latest.set(to_json(report, follower).dump(-1, ' ', false, Json::error_handler_t::replace));
    const std::string shown = text(report, follower);
    if (redraw) std::cout << "\x1b[H\x1b[2J";
    std::cout << shown << (redraw ? "" : "\n") << std::flush;
    if (o.once) return 0;
    follower.follow(report.now);  // topics that came since
  }
}

}  // namespace

void add_status(CLI::App& app, Action& action) {
  auto o = std::make_shared<StatusOptions>();
  auto* cmd = app.add_subcommand(
      "status",
      "Show the running domain: its view, members and leader, the subgroups, each topic's rate "
      "and each member's lag, refreshed every interval (docs/tools.md)");
  add_domain_option(cmd, o->domain);
  cmd->add_option("--interval", o->interval, "Seconds between refreshes (default 1)")
      ->check(CLI::Range(0.1, 3600.0));
  auto* once =
      cmd->add_flag("--once", o->once, "Measure one interval, print one snapshot and exit");
  cmd->add_option("--wait", o->wait,
                  "Seconds to wait at the start for the topics' types and subgroups (default 5)")
      ->check(CLI::Range(0.0, 3600.0));
  cmd->add_option("--http", o->http,
                  "Also serve a page at http://HOST:PORT/ and the snapshot at /status.json "
                  "(PORT 0: any free port, said on stderr)")
      ->excludes(once);
  cmd->callback([&action, o] { action = [o] { return status(*o); }; });
}

}  // namespace spindle_cli
