// spindle-gateway --config gateway.yaml [--stats SECONDS]
//
// Joins the two domains the file names and passes the listed topics between them until
// SIGINT or SIGTERM (docs/interop.md). Prints "spindle-gateway <id>: ready (N routes)" on
// standard output once every topic is open, the counters of each route when it stops (and
// every SECONDS with --stats). Exit status: 0 after a signal, 2 for a configuration it cannot
// use (the message names file:line and key), 1 when a domain cannot be joined.
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <thread>

#include "gateway.hpp"

namespace {

volatile std::sig_atomic_t g_stop = 0;

void on_signal(int) {
  g_stop = 1;
}

int usage(const char* what) {
  if (what != nullptr) std::fprintf(stderr, "spindle-gateway: %s\n", what);
  std::fprintf(stderr,
               "usage: spindle-gateway --config gateway.yaml [--stats SECONDS]\n"
               "  Passes the topics of gateway.yaml between a Spindle domain and an RTPS\n"
               "  domain (docs/interop.md).\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string config_path;
  double stats_every = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      usage(nullptr);
      return 0;
    }
    if ((a == "--config" || a == "--stats") && i + 1 >= argc)
      return usage((a + " needs a value").c_str());
    if (a == "--config") {
      config_path = argv[++i];
    } else if (a == "--stats") {
      char* end = nullptr;
      stats_every = std::strtod(argv[++i], &end);
      if (end == argv[i] || *end != '\0' || !(stats_every > 0))
        return usage("--stats needs a period in seconds (> 0)");
    } else {
      return usage(("unknown argument '" + a + "'").c_str());
    }
  }
  if (config_path.empty()) return usage("--config is required");

  std::unique_ptr<spindle::gateway::Gateway> gw;
  try {
    gw = std::make_unique<spindle::gateway::Gateway>(spindle::gateway::load_config(config_path));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "spindle-gateway: %s\n", e.what());
    return 2;
  }
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  try {
    gw->open();
    gw->start();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "spindle-gateway: %s\n", e.what());
    return 1;
  }
  for (const auto& t : gw->config().filtered_out)
    std::fprintf(stderr, "spindle-gateway: topic %s left out by allow/deny\n", t.c_str());
  std::printf("spindle-gateway %s: ready (%zu topics)\n", gw->id().c_str(),
              gw->config().topics.size());
  std::fflush(stdout);
  auto next = std::chrono::steady_clock::now();
  while (g_stop == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (stats_every > 0 && std::chrono::steady_clock::now() >= next) {
      next += std::chrono::milliseconds(static_cast<int64_t>(stats_every * 1000));
      std::fputs(gw->stats().c_str(), stdout);
      std::fflush(stdout);
    }
  }
  gw->stop();
  std::fputs(gw->stats().c_str(), stdout);
  std::fflush(stdout);
  gw.reset();
  return 0;
}
