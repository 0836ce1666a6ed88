// spindle-gateway: two domains (a Spindle domain and an RTPS domain through Cyclone DDS, or
// two of one kind) joined topic by topic for types loaded from IDL at run time
// (docs/interop.md).
//
// Lifecycle: construct (reads the config and the IDL, refuses what it cannot use with
// file:line and key; joins nothing), open() (joins both domains, creates every topic, writer
// and reader), start() (samples flow), stop(). A failure to join throws std::runtime_error.
//
// Redundancy: where two gateways pass the same topic from the same domain into the same
// domain, the one with the lower id does and the other stands by (reads, passes nothing on)
// until the first one's writer leaves that domain; each change is printed on stdout
// ("... Square spindle->rtps: standby (...)" / "...: active").
//
// Threading: samples flow on the ends' threads, the election runs on a thread of its own;
// stats() may be called from any thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <spindle/types/dynamic_type.hpp>

#include "config.hpp"
#include "ends.hpp"

namespace spindle::gateway {

struct Route {
  const TopicConfig* topic = nullptr;
  const types::Type* type = nullptr;
  End* from = nullptr;
  End* to = nullptr;
  std::unique_ptr<Outlet> outlet;
  std::unique_ptr<RouteStats> stats = std::make_unique<RouteStats>();
  // False while another gateway between the same two domains passes this route on.
  std::shared_ptr<std::atomic<bool>> active = std::make_shared<std::atomic<bool>>(true);
  std::string marker;  // USER_DATA of this route's writer
};

class Gateway {
 public:
  explicit Gateway(Config config);
  ~Gateway();
  Gateway(const Gateway&) = delete;
  Gateway& operator=(const Gateway&) = delete;

  void open();
  void start();
  void stop();

  // One line per route: "Square spindle->rtps data 50 disposed 1 ...", plus refused bytes.
  [[nodiscard]] std::string stats() const;
  [[nodiscard]] const std::string& id() const { return id_; }
  [[nodiscard]] const Config& config() const { return config_; }

 private:
  Config config_;
  types::TypeLibrary library_;
  std::string id_;
  void elect();
  void discover();
  void open_routes(const TopicConfig& t, const types::Type* type);

  std::vector<std::unique_ptr<End>> ends_;
  std::vector<Route> routes_;  // grows on the elector thread (discover) under routes_mu_
  mutable std::mutex routes_mu_;
  std::deque<TopicConfig> discovered_;  // topics that matched a pattern entry
  std::set<std::string> bridged_;       // names of the topics with routes
  std::set<std::string> mismatched_;    // "topic/type" found with another type, said once
  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread elector_;
};

}  // namespace spindle::gateway
