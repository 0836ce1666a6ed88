// `spindle status` against a live domain of three processes: a publisher whose rate grows every
// second, a RELIABLE reader (status_peer.cpp), and the command itself. --once names the
// members and the topic with a nonzero rate; --http serves /status.json, whose rate changes
// between two GETs, answers bad requests with an error status and goes on serving; the page,
// loaded in headless Chromium, draws and writes changing rates into its DOM (skipped where
// Chromium is not installed).
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <poll.h>

#include <catch2/catch.hpp>
#include <spindle/types/dynamic_data.hpp>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "process.hpp"

namespace tst = spindle::testing;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using Json = spindle::types::Json;

namespace {

// The publisher and the reader of "Square", each in a process of its own, and their node ids,
// once the reader took a sample.
struct Domain {
  std::unique_ptr<tst::Process> publisher;
  std::unique_ptr<tst::Process> reader;
  std::uint32_t publisher_node = 0;
  std::uint32_t reader_node = 0;

  Domain() {
    publisher =
        std::make_unique<tst::Process>(std::vector<std::string>{STATUS_PEER, "publish", "Square"});
    publisher_node = node_of(*publisher);
    reader =
        std::make_unique<tst::Process>(std::vector<std::string>{STATUS_PEER, "read", "Square"});
    reader_node = node_of(*reader);
    const auto line = reader->read_line(Clock::now() + 60s);
    REQUIRE(line == std::optional<std::string>("reading"));
  }

  static std::uint32_t node_of(tst::Process& p) {
    const auto line = p.read_line(Clock::now() + 60s);
    REQUIRE(line);
    REQUIRE(line->rfind("node ", 0) == 0);
    return static_cast<std::uint32_t>(std::stoul(line->substr(5)));
  }
};

// `spindle status --http 127.0.0.1:0` and the port it serves on (said on stderr).
struct Served {
  std::unique_ptr<tst::Process> cmd;
  int port = 0;

  Served() {
    cmd = std::make_unique<tst::Process>(std::vector<std::string>{
        "/bin/sh", "-c",
        std::string("exec ") + SPINDLE_COMMAND +
            " status --http 127.0.0.1:0 --interval 0.5 --domain 0 2>&1 >/dev/null"});
    const std::regex serving("serving http://127\\.0\\.0\\.1:([0-9]+)/");
    while (auto line = cmd->read_line(Clock::now() + 60s)) {
      std::smatch m;
      if (std::regex_search(*line, m, serving)) {
        port = std::stoi(m[1]);
        break;
      }
    }
    REQUIRE(port != 0);
  }
};

// Sends `request` as it is and returns everything the server answers before it closes.
std::string exchange(int port, const std::string& request) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in at{};
  at.sin_family = AF_INET;
  at.sin_port = htons(static_cast<std::uint16_t>(port));
  at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(connect(fd, reinterpret_cast<sockaddr*>(&at), sizeof at) == 0);
  REQUIRE(send(fd, request.data(), request.size(), MSG_NOSIGNAL) ==
          static_cast<ssize_t>(request.size()));
  std::string out;
  for (const auto deadline = Clock::now() + 10s; Clock::now() < deadline;) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    char buf[4096];
    const auto n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  close(fd);
  return out;
}

int status_code(const std::string& response) {
  if (response.rfind("HTTP/1.1 ", 0) != 0 || response.size() < 12) return -1;
  return std::stoi(response.substr(9, 3));
}

std::string body_of(const std::string& response) {
  const auto end = response.find("\r\n\r\n");
  return end == std::string::npos ? "" : response.substr(end + 4);
}

Json get_status(int port) {
  const auto r = exchange(port, "GET /status.json HTTP/1.1\r\nHost: localhost\r\n\r\n");
  INFO(r);
  REQUIRE(status_code(r) == 200);
  return Json::parse(body_of(r));
}

// The topic's entry in a /status.json document, or null (also before the command's first
// snapshot, when the document is {}).
Json topic_in(const Json& status, const std::string& name) {
  if (!status.contains("topics")) return nullptr;
  for (const auto& t : status["topics"])
    if (t["name"] == name) return t;
  return nullptr;
}

// The first GET whose rate of Square is above zero (the command measures from its second
// snapshot on).
Json status_with_rate(int port) {
  for (const auto deadline = Clock::now() + 30s; Clock::now() < deadline;) {
    auto s = get_status(port);
    const auto t = topic_in(s, "Square");
    if (!t.is_null() && t["samples_per_s"].is_number() && t["samples_per_s"].get<double>() > 0)
      return s;
    std::this_thread::sleep_for(200ms);
  }
  FAIL("/status.json never had a rate of Square above zero");
  return nullptr;
}

std::optional<std::string> find_chromium() {
  for (const char* name : {"chromium", "chromium-browser", "google-chrome"}) {
    const std::string dirs = std::getenv("PATH") != nullptr ? std::getenv("PATH") : "/usr/bin";
    std::size_t from = 0;
    while (from <= dirs.size()) {
      const auto to = std::min(dirs.find(':', from), dirs.size());
      const auto path = dirs.substr(from, to - from) + "/" + name;
      if (access(path.c_str(), X_OK) == 0) return path;
      from = to + 1;
    }
  }
  return std::nullopt;
}

// A folder that goes with this object.
struct Scratch {
  std::filesystem::path path;
  explicit Scratch(std::filesystem::path p) : path(std::move(p)) {
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~Scratch() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
};

// Runs headless Chromium on `url` with `args`, its profile in `scratch` and its temporary files
// in `tmp` (short: its singleton socket's path must fit a socket address); its stdout. Its
// stderr, mostly D-Bus complaints of a machine without a session bus, is shown when it fails.
std::string chromium(const std::string& binary, const std::filesystem::path& scratch,
                     const std::filesystem::path& tmp, const std::string& args,
                     const std::string& url) {
  const auto errors = scratch / "chromium-stderr.txt";
  const std::string cmd =
      "TMPDIR='" + tmp.string() + "' HOME='" + scratch.string() + "' exec '" + binary +
      "' --headless --no-sandbox --disable-gpu --disable-dev-shm-usage "
      "--no-first-run --disable-extensions --user-data-dir='" +
      (scratch / "profile").string() + "' " + args + " '" + url + "' 2>'" + errors.string() + "'";
  tst::Process p({"/bin/sh", "-c", cmd});
  std::string out;
  while (auto line = p.read_line(Clock::now() + 60s))
    out += *line + "\n";
  const int status = p.wait(Clock::now() + 30s);
  if (status != 0) {
    std::ifstream in(errors);
    std::ostringstream read;  // not istreambuf_iterators: GCC 12 -O3 -Wnull-dereference
    read << in.rdbuf();
    const std::string text = read.str();
    FAIL_CHECK("chromium " << args << " exited with " << status << ":\n" << text);
  }
  return out;
}

// The rate of `topic` the page's script wrote into its DOM, or nullopt.
std::optional<std::string> page_rate(const std::string& dom, const std::string& topic) {
  const std::regex cell("<td class=\"num rate\" data-topic=\"" + topic + "\">([^<]*)</td>");
  std::smatch m;
  if (!std::regex_search(dom, m, cell)) return std::nullopt;
  return m[1].str();
}

}  // namespace

TEST_CASE("spindle status --once names the members and a topic with its rate", "[once]") {
  Domain domain;
  tst::Process cmd(
      {"/bin/sh", "-c",
       std::string("exec ") + SPINDLE_COMMAND + " status --once --interval 1 --domain 0 2>&1"});
  std::string out;
  while (auto line = cmd.read_line(Clock::now() + 60s))
    out += *line + "\n";
  INFO(out);
  REQUIRE(cmd.wait(Clock::now() + 30s) == 0);
  CHECK(std::regex_search(out, std::regex("domain 0: view [0-9]+ .*3 members, leader node")));
  for (const auto node : {domain.publisher_node, domain.reader_node}) {
    CHECK(std::regex_search(out, std::regex("\n  " + std::to_string(node) + " +127\\.0\\.0\\.1")));
    // Each member of Square's subgroup, with how far behind it is.
    CHECK(std::regex_search(out, std::regex("\n  Square/atomic +" + std::to_string(node) +
                                            " +(sender|reader) +[0-9]+ +[0-9]+")));
  }
  std::smatch m;
  REQUIRE(
      std::regex_search(out, m, std::regex("\n  Square +ShapeType +([0-9.]+) +[0-9.]+ [kMG]?B/s")));
  CHECK(std::stod(m[1]) > 0);
}

TEST_CASE("spindle status --http serves /status.json and survives bad requests", "[http]") {
  Domain domain;
  Served served;
  const auto first = status_with_rate(served.port);
  INFO(first.dump(2));
  CHECK(first["domain"] == 0);
  CHECK(first["view"]["epoch"].get<std::uint64_t>() > 0);
  CHECK(first["members"].size() == 3);
  const auto square = topic_in(first, "Square");
  CHECK(square["type"] == "ShapeType");
  CHECK(square["read"] == true);
  // The reader's lag in Square's subgroup: a number (it pushes its counters).
  bool reader_lag = false;
  for (const auto& r : first["readers"])
    if (r["topic"] == "Square" && r["node"] == domain.reader_node)
      reader_lag = r["role"] == "reader" && r["lag"].is_number() && r["delivered"].is_number();
  CHECK(reader_lag);

  // Garbage, an unknown path, another method, an oversized head: an error status each.
  const std::string garbage("\x01\x02\xff hello\r\n\r\n", 13);
  const std::string oversized = "GET /" + std::string(20000, 'a') + "\r\n";
  CHECK(status_code(exchange(served.port, garbage)) == 400);
  CHECK(status_code(exchange(served.port, "GET /nowhere HTTP/1.1\r\n\r\n")) == 404);
  CHECK(status_code(exchange(served.port, "POST /status.json HTTP/1.1\r\n\r\n")) == 405);
  CHECK(status_code(exchange(served.port, oversized)) == 400);
  CHECK(status_code(exchange(served.port, "GET /status.json\r\n\r\n")) == 400);  // no version
  const auto page = exchange(served.port, "GET / HTTP/1.1\r\n\r\n");
  CHECK(status_code(page) == 200);
  CHECK(page.find("<canvas") != std::string::npos);

  // Still serving; the rate moved on (the publisher writes 20 samples/s more every second).
  std::this_thread::sleep_for(1500ms);
  const auto second = get_status(served.port);
  const auto later = topic_in(second, "Square");
  REQUIRE(later["samples_per_s"].is_number());
  CHECK(later["samples_per_s"].get<double>() != square["samples_per_s"].get<double>());
  CHECK(later["samples"].get<std::uint64_t>() > square["samples"].get<std::uint64_t>());
}

TEST_CASE("the status page draws in headless Chromium and its rates change", "[page]") {
  const auto binary = find_chromium();
  if (!binary) {
    // Catch2 2 has no SKIP: CTest counts exit status 77 as skipped (SKIP_RETURN_CODE).
    std::cout << "SKIPPED: chromium is not installed (tools/install-deps.sh installs it)"
              << std::endl;
    std::exit(77);
  }
  Domain domain;
  Served served;
  (void)status_with_rate(served.port);
  const Scratch scratch(std::filesystem::current_path() /
                        ("status-page-" + std::to_string(getpid())));
  const Scratch tmp(std::filesystem::path("/tmp") / ("spst-" + std::to_string(getpid())));
  const std::string url = "http://127.0.0.1:" + std::to_string(served.port) + "/";

  const auto png = scratch.path / "page.png";
  (void)chromium(*binary, scratch.path, tmp.path,
                 "--screenshot='" + png.string() +
                     "' --window-size=1000,700 --virtual-time-budget=3000 --hide-scrollbars",
                 url);
  REQUIRE(std::filesystem::exists(png));
  std::ifstream in(png, std::ios::binary);
  std::ostringstream read;
  read << in.rdbuf();
  const std::string bytes = read.str();
  CHECK(bytes.rfind("\x89PNG\r\n\x1a\n", 0) == 0);
  CHECK(bytes.size() > 10000);  // a blank 1000x700 page compresses to a few hundred bytes

  const auto dom1 =
      chromium(*binary, scratch.path, tmp.path, "--dump-dom --virtual-time-budget=2000", url);
  std::this_thread::sleep_for(1500ms);
  const auto dom2 =
      chromium(*binary, scratch.path, tmp.path, "--dump-dom --virtual-time-budget=2000", url);
  const auto rate1 = page_rate(dom1, "Square");
  const auto rate2 = page_rate(dom2, "Square");
  INFO(dom1);
  REQUIRE(rate1);
  REQUIRE(rate2);
  CHECK(std::stod(*rate1) > 0);
  CHECK(*rate1 != *rate2);
}
