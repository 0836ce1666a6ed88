// spindle-gateway between a Spindle domain (this process, through the standard API with
// idlc-generated ShapeType) and an RTPS domain (cyclone_shapes: a plain Cyclone DDS C program
// with Cyclone's own generated code), all in a network namespace of the test's own with
// multicast on loopback (docs/interop.md). Every wait is bounded.
#define CATCH_CONFIG_RUNNER
#include <signal.h>
#include <sys/stat.h>
#include <catch2/catch.hpp>
#include <dds/dds.hpp>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "ShapeType.hpp"
#include "namespaces.hpp"
#include "process.hpp"

namespace tst = spindle::testing;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

std::string g_dir;  // scratch folder of this run

struct Event {
  std::string kind;  // data, disposed, no_writers
  std::string color;
  int x = 0;
  int64_t ts = 0;
};

std::string dump(const std::vector<Event>& ev) {
  std::string out;
  for (const auto& e : ev)
    out += e.kind + " " + e.color + " " + std::to_string(e.x) + "\n";
  return out;
}

size_t count(const std::vector<Event>& ev, const std::string& kind, const std::string& color,
             int x = -1) {
  size_t n = 0;
  for (const auto& e : ev)
    n += e.kind == kind && e.color == color && (x < 0 || e.x == x);
  return n;
}

std::string write_file(const std::string& name, const std::string& text) {
  const std::string path = g_dir + "/" + name;
  std::ofstream(path) << text;
  return path;
}

std::string shape_idl() {
  return write_file("ShapeType.idl", std::string(R"(@topic
struct ShapeType {
  @key string<128> color;
  long x;
  long y;
  long shapesize;
};
)"));
}

// A Spindle participant of `domain` with a writer and a reader of ShapeType on `topic`.
class SpindleSide {
 public:
  explicit SpindleSide(uint32_t domain, const std::string& topic_name = "Square",
                       const std::string& partition = "")
      : partition_(partition),
        dp_(domain),
        topic_(dp_, topic_name),
        writer_(make_writer()),
        reader_(make_reader()) {}

  void write(const std::string& color, int x, int64_t ts_ns = 0) {
    ShapeType s(color, x, x, 30);
    if (ts_ns > 0)
      writer_.write(s,
                    dds::core::Time(ts_ns / 1000000000, static_cast<uint32_t>(ts_ns % 1000000000)));
    else
      writer_.write(s);
  }
  void dispose(const std::string& color) {
    writer_.dispose_instance(writer_.lookup_instance(ShapeType(color, 0, 0, 0)));
  }
  void unregister(const std::string& color) {
    writer_.unregister_instance(writer_.lookup_instance(ShapeType(color, 0, 0, 0)));
  }
  void poll() {
    for (const auto& s : reader_.take()) {
      Event e;
      const auto st = s.info().state().instance_state();
      // An invalid sample's data holds its instance's key.
      const std::string color = s.data().color();
      e.color = color;
      e.x = s.info().valid() ? s.data().x() : 0;
      e.ts = s.info().timestamp().sec() * 1000000000 + s.info().timestamp().nanosec();
      if (s.info().valid()) {
        e.kind = "data";
        events.push_back(e);
      }
      if (st == dds::sub::status::InstanceState::not_alive_disposed()) {
        e.kind = "disposed";
        if (!s.info().valid() || count(events, "disposed", color) == 0) events.push_back(e);
      } else if (st == dds::sub::status::InstanceState::not_alive_no_writers()) {
        e.kind = "no_writers";
        if (!s.info().valid() || count(events, "no_writers", color) == 0) events.push_back(e);
      }
    }
  }
  std::vector<Event> events;

 private:
  dds::pub::DataWriter<ShapeType> make_writer() {
    dds::pub::qos::DataWriterQos q = topic_.qos();
    q << dds::core::policy::Reliability::Reliable() << dds::core::policy::History::KeepAll();
    // unregister leaves the instance alive (the default would dispose it too)
    q << dds::core::policy::WriterDataLifecycle::ManuallyDisposeUnregisteredInstances();
    dds::pub::qos::PublisherQos pq;
    if (!partition_.empty()) pq << dds::core::policy::Partition(partition_);
    return {dds::pub::Publisher(dp_, pq), topic_, q};
  }
  dds::sub::DataReader<ShapeType> make_reader() {
    dds::sub::qos::DataReaderQos q = topic_.qos();
    q << dds::core::policy::Reliability::Reliable() << dds::core::policy::History::KeepAll();
    dds::sub::qos::SubscriberQos sq;
    if (!partition_.empty()) sq << dds::core::policy::Partition(partition_);
    return {dds::sub::Subscriber(dp_, sq), topic_, q};
  }
  std::string partition_;
  dds::domain::DomainParticipant dp_;
  dds::topic::Topic<ShapeType> topic_;
  dds::pub::DataWriter<ShapeType> writer_;
  dds::sub::DataReader<ShapeType> reader_;
};

// cyclone_shapes in a child process.
class CycloneSide {
 public:
  explicit CycloneSide(uint32_t domain, const std::string& topic = "Square",
                       const std::string& partition = "")
      : proc_(partition.empty()
                  ? std::vector<std::string>{tst::self_dir() + "/cyclone_shapes",
                                             std::to_string(domain), topic}
                  : std::vector<std::string>{tst::self_dir() + "/cyclone_shapes",
                                             std::to_string(domain), topic, partition}) {
    const auto line = proc_.read_line(Clock::now() + 20s);
    REQUIRE(line == std::optional<std::string>("ready"));
  }
  void write(const std::string& color, int x, int64_t ts_ns = 0) {
    if (ts_ns > 0)
      proc_.send("writets " + color + " " + std::to_string(x) + " " + std::to_string(x) + " 30 " +
                 std::to_string(ts_ns) + "\n");
    else
      proc_.send("write " + color + " " + std::to_string(x) + " " + std::to_string(x) + " 30\n");
  }
  void dispose(const std::string& color) { proc_.send("dispose " + color + "\n"); }
  void unregister(const std::string& color) { proc_.send("unregister " + color + "\n"); }
  void poll() {
    while (auto line = proc_.read_line(Clock::now() + 5ms)) {
      std::istringstream is(*line);
      Event e;
      is >> e.kind >> e.color;
      if (e.kind == "data") {
        int y = 0, size = 0;
        is >> e.x >> y >> size;
      }
      is >> e.ts;
      events.push_back(e);
    }
  }
  void quit() {
    proc_.send("quit\n");
    CHECK(proc_.wait(Clock::now() + 10s) == 0);
  }
  std::vector<Event> events;

 private:
  tst::Process proc_;
};

class GatewayProc {
 public:
  explicit GatewayProc(const std::string& config)
      : proc_({"/bin/sh", "-c",
               "exec " + std::string(SPINDLE_GATEWAY) + " --config " + config + " 2>&1"}) {
    for (auto deadline = Clock::now() + 60s; Clock::now() < deadline;) {
      const auto line = proc_.read_line(deadline);
      REQUIRE(line);
      if (line->find(": ready (") != std::string::npos) return;
      output += *line + "\n";
    }
    FAIL("the gateway did not get ready: " << output);
  }
  // Reads what it prints for up to `limit`; true once `text` has shown `times` times.
  bool saw(const std::string& text, size_t times, std::chrono::milliseconds limit) {
    for (auto deadline = Clock::now() + limit;;) {
      size_t n = 0;
      for (size_t at = output.find(text); at != std::string::npos; at = output.find(text, at + 1))
        ++n;
      if (n >= times) return true;
      if (Clock::now() >= deadline) return false;
      auto line = proc_.read_line(std::min(deadline, Clock::now() + 50ms));
      if (line) output += *line + "\n";
    }
  }
  // Stops it with SIGTERM; its last lines (the counters).
  std::string stop() {
    ::kill(proc_.pid(), SIGTERM);
    std::string out;
    while (auto line = proc_.read_line(Clock::now() + 20s))
      out += *line + "\n";
    CHECK(proc_.wait(Clock::now() + 20s) == 0);
    return out;
  }
  void kill() {
    ::kill(proc_.pid(), SIGKILL);
    proc_.wait(Clock::now() + 20s);
  }
  std::string output;

 private:
  tst::Process proc_;
};

template <typename F>
bool eventually(F&& done, std::chrono::seconds limit,
                const std::vector<std::function<void()>>& polls) {
  for (auto deadline = Clock::now() + limit; Clock::now() < deadline;) {
    for (const auto& p : polls)
      p();
    if (done()) return true;
    std::this_thread::sleep_for(20ms);
  }
  for (const auto& p : polls)
    p();
  return done();
}

// Until a sample of each side has reached the other (discovery is done on both sides of the
// gateway): "WarmS" from Spindle, "WarmC" from Cyclone.
template <typename A, typename B>
void connect(A& a, B& b, const std::string& tag) {
  int i = 0;
  const bool ok = eventually(
      [&] {
        a.write("WarmA" + tag, i);
        b.write("WarmB" + tag, i);
        ++i;
        std::this_thread::sleep_for(50ms);
        return count(a.events, "data", "WarmB" + tag) > 0 &&
               count(b.events, "data", "WarmA" + tag) > 0;
      },
      60s, {[&] { a.poll(); }, [&] { b.poll(); }});
  REQUIRE(ok);
  std::this_thread::sleep_for(300ms);
  a.poll();
  b.poll();
}

const std::string kMinimal = R"(spindle: {domain: 0}
rtps: {domain: 0}
idl: [ShapeType.idl]
topics:
  - {name: Square, type: ShapeType}
)";

}  // namespace

TEST_CASE("ShapeType crosses both ways through the minimal gateway.yaml, once, with its dispose",
          "[both]") {
  shape_idl();
  GatewayProc gw(write_file("gateway.yaml", kMinimal));
  SpindleSide spindle(0);
  CycloneSide cyclone(0);
  connect(spindle, cyclone, "");

  const int64_t base = 1700000000LL * 1000000000LL;
  for (int i = 0; i < 50; ++i) {
    spindle.write("Blue", i, base + i);
    cyclone.write("Red", i, base + 1000 + i);
  }
  spindle.dispose("Blue");
  cyclone.dispose("Red");
  const auto polls =
      std::vector<std::function<void()>>{[&] { spindle.poll(); }, [&] { cyclone.poll(); }};
  const bool all = eventually(
      [&] {
        return count(cyclone.events, "data", "Blue") >= 50 &&
               count(spindle.events, "data", "Red") >= 50 &&
               count(cyclone.events, "disposed", "Blue") >= 1 &&
               count(spindle.events, "disposed", "Red") >= 1;
      },
      60s, polls);
  std::this_thread::sleep_for(1s);  // room for an echo or a duplicate to show
  spindle.poll();
  cyclone.poll();
  CHECK(all);
  for (int i = 0; i < 50; ++i) {
    INFO("sample " << i);
    // Once on the far side, and once (its own, never an echo) on the near side.
    CHECK(count(cyclone.events, "data", "Blue", i) == 1);
    CHECK(count(spindle.events, "data", "Blue", i) == 1);
    CHECK(count(spindle.events, "data", "Red", i) == 1);
    CHECK(count(cyclone.events, "data", "Red", i) == 1);
  }
  CHECK(count(cyclone.events, "disposed", "Blue") == 1);
  CHECK(count(spindle.events, "disposed", "Red") == 1);
  CHECK(count(spindle.events, "disposed", "Blue") == 1);
  CHECK(count(cyclone.events, "disposed", "Red") == 1);
  // Source timestamps cross unchanged.
  for (const auto& e : cyclone.events)
    if (e.kind == "data" && e.color == "Blue") CHECK(e.ts == base + e.x);
  for (const auto& e : spindle.events)
    if (e.kind == "data" && e.color == "Red") CHECK(e.ts == base + 1000 + e.x);
  const auto stats = gw.stop();
  INFO(stats);
  // The counters: the 50, the warm-up samples that crossed, one dispose each way; and every
  // sample the gateway wrote came back to its reader on the same side and went no further.
  const auto to_rtps = 50 + count(cyclone.events, "data", "WarmA");
  const auto to_spindle = 50 + count(spindle.events, "data", "WarmB");
  CHECK(stats.find("Square spindle->rtps data " + std::to_string(to_rtps) + " disposed 1 ") !=
        std::string::npos);
  CHECK(stats.find("Square rtps->spindle data " + std::to_string(to_spindle) + " disposed 1 ") !=
        std::string::npos);
  // (the dispose counts too where it came as a sample of its own)
  CHECK((stats.find("from_gateways " + std::to_string(to_spindle) + " ") != std::string::npos ||
         stats.find("from_gateways " + std::to_string(to_spindle + 1) + " ") != std::string::npos));
  cyclone.quit();
}

TEST_CASE("unregister crosses; a one-way topic stays one way", "[lifecycle]") {
  shape_idl();
  GatewayProc gw(write_file("gateway.yaml", R"(spindle: {domain: 0}
rtps: {domain: 0}
idl: [ShapeType.idl]
topics:
  - {name: Square, type: ShapeType}
  - {name: Circle, type: ShapeType, direction: to_rtps}
)"));
  SpindleSide spindle(0);
  CycloneSide cyclone(0);
  connect(spindle, cyclone, "");
  spindle.write("Blue", 1);
  cyclone.write("Red", 1);
  spindle.unregister("Blue");
  cyclone.unregister("Red");
  const auto polls =
      std::vector<std::function<void()>>{[&] { spindle.poll(); }, [&] { cyclone.poll(); }};
  const bool ended = eventually(
      [&] {
        return count(cyclone.events, "no_writers", "Blue") == 1 &&
               count(spindle.events, "no_writers", "Red") == 1;
      },
      30s, polls);
  INFO("cyclone saw:\n" << dump(cyclone.events) << "spindle saw:\n" << dump(spindle.events));
  CHECK(ended);

  SpindleSide spindle_circle(0, "Circle");
  CycloneSide cyclone_circle(0, "Circle");
  const auto cpolls = std::vector<std::function<void()>>{[&] { spindle_circle.poll(); },
                                                         [&] { cyclone_circle.poll(); }};
  // Spindle to RTPS arrives; RTPS to Spindle never does.
  int i = 0;
  CHECK(eventually(
      [&] {
        spindle_circle.write("Green", i);
        cyclone_circle.write("Yellow", i++);
        std::this_thread::sleep_for(50ms);
        return count(cyclone_circle.events, "data", "Green") > 0;
      },
      60s, cpolls));
  for (int k = 0; k < 20; ++k)
    cyclone_circle.write("Yellow", 1000 + k);
  std::this_thread::sleep_for(1s);
  spindle_circle.poll();
  CHECK(count(spindle_circle.events, "data", "Yellow") == 0);
  const auto stats = gw.stop();
  INFO(stats);
  CHECK(stats.find("Circle rtps->spindle") == std::string::npos);
  cyclone.quit();
  cyclone_circle.quit();
}

TEST_CASE(
    "two gateways between the same two domains: one passes each sample on, once, and the "
    "other takes over when it dies",
    "[loops]") {
  shape_idl();
  const auto cfg = write_file("gateway.yaml", kMinimal);
  GatewayProc gw1(cfg);
  GatewayProc gw2(cfg);
  // One of them finds the other and stands by on both routes.
  GatewayProc* standby = nullptr;
  for (auto deadline = Clock::now() + 60s; standby == nullptr && Clock::now() < deadline;) {
    if (gw1.saw(": standby (", 2, 100ms))
      standby = &gw1;
    else if (gw2.saw(": standby (", 2, 100ms))
      standby = &gw2;
  }
  REQUIRE(standby != nullptr);
  GatewayProc* leader = standby == &gw1 ? &gw2 : &gw1;
  SpindleSide spindle(0);
  CycloneSide cyclone(0);
  connect(spindle, cyclone, "");
  const auto polls =
      std::vector<std::function<void()>>{[&] { spindle.poll(); }, [&] { cyclone.poll(); }};
  auto exchange = [&](int first) {
    for (int i = first; i < first + 20; ++i) {
      spindle.write("Blue", i);
      cyclone.write("Red", i);
    }
    CHECK(eventually(
        [&] {
          return count(cyclone.events, "data", "Blue") >= static_cast<size_t>(first + 20) &&
                 count(spindle.events, "data", "Red") >= static_cast<size_t>(first + 20);
        },
        60s, polls));
    std::this_thread::sleep_for(1s);  // room for an echo or a duplicate to show
    spindle.poll();
    cyclone.poll();
    for (int i = first; i < first + 20; ++i) {
      INFO("sample " << i);
      // Its origin sees each sample once (its own); the far side once (from one gateway).
      CHECK(count(spindle.events, "data", "Blue", i) == 1);
      CHECK(count(cyclone.events, "data", "Red", i) == 1);
      CHECK(count(cyclone.events, "data", "Blue", i) == 1);
      CHECK(count(spindle.events, "data", "Red", i) == 1);
    }
  };
  exchange(0);
  // The leader dies without a goodbye: the other takes both routes over.
  leader->kill();
  REQUIRE(standby->saw(": active", 2, 60s));
  connect(spindle, cyclone, "after");
  exchange(20);
  const auto stats = standby->stop();
  INFO(stats);
  CHECK(stats.find(" standby 0") == std::string::npos);  // it did stand by
  cyclone.quit();
}

TEST_CASE("a cycle of three domains sends nothing back and nothing twice", "[cycle]") {
  shape_idl();
  // Spindle 0 -- RTPS 0 -- Spindle 1 -- Spindle 0.
  GatewayProc g1(write_file("g1.yaml", kMinimal));
  GatewayProc g2(write_file("g2.yaml", R"(spindle: {domain: 1}
rtps: {domain: 0}
idl: [ShapeType.idl]
topics: [{name: Square, type: ShapeType}]
)"));
  GatewayProc g3(write_file("g3.yaml", R"(spindle: [{domain: 0}, {domain: 1}]
idl: [ShapeType.idl]
topics: [{name: Square, type: ShapeType}]
)"));
  SpindleSide s0(0);
  SpindleSide s1(1);
  CycloneSide r0(0);
  connect(s0, r0, "01");
  connect(s1, r0, "11");
  connect(s0, s1, "22");
  for (int i = 0; i < 20; ++i) {
    s0.write("S0", i);
    s1.write("S1", i);
    r0.write("R0", i);
  }
  const auto polls = std::vector<std::function<void()>>{[&] { s0.poll(); }, [&] { s1.poll(); },
                                                        [&] { r0.poll(); }};
  CHECK(eventually(
      [&] {
        for (auto* ev : {&s0.events, &s1.events, &r0.events})
          for (const char* c : {"S0", "S1", "R0"})
            if (count(*ev, "data", c) < 20) return false;
        return true;
      },
      60s, polls));
  std::this_thread::sleep_for(2s);
  for (const auto& p : polls)
    p();
  for (int i = 0; i < 20; ++i) {
    for (const char* c : {"S0", "S1", "R0"}) {
      INFO("sample " << c << " " << i);
      CHECK(count(s0.events, "data", c, i) == 1);
      CHECK(count(s1.events, "data", c, i) == 1);
      CHECK(count(r0.events, "data", c, i) == 1);
    }
  }
  r0.quit();
}

TEST_CASE("streams pick up again after the gateway or the RTPS side restarts", "[restart]") {
  shape_idl();
  const auto cfg = write_file("gateway.yaml", kMinimal);
  SpindleSide spindle(0);
  auto gw = std::make_unique<GatewayProc>(cfg);
  {
    CycloneSide cyclone(0);
    connect(spindle, cyclone, "a");
    gw->kill();  // no goodbye
    gw.reset();
    gw = std::make_unique<GatewayProc>(cfg);
    connect(spindle, cyclone, "b");
    cyclone.quit();
  }
  // The RTPS side restarts: a new process, a new participant.
  CycloneSide cyclone(0);
  connect(spindle, cyclone, "c");
  spindle.write("Blue", 7);
  cyclone.write("Red", 7);
  const auto polls =
      std::vector<std::function<void()>>{[&] { spindle.poll(); }, [&] { cyclone.poll(); }};
  CHECK(eventually(
      [&] {
        return count(cyclone.events, "data", "Blue", 7) == 1 &&
               count(spindle.events, "data", "Red", 7) == 1;
      },
      30s, polls));
  gw->stop();
  cyclone.quit();
}

TEST_CASE("topic patterns bridge what applications write; deny and partitions keep the rest out",
          "[filters]") {
  shape_idl();
  GatewayProc gw(write_file("gateway.yaml", R"(spindle: {domain: 0}
rtps: {domain: 0}
idl: [ShapeType.idl]
deny: ["Secret*"]
topics:
  - {name: "*", type: ShapeType}
  - {name: Triangle, type: ShapeType, partitions: [red]}
)"));
  // A topic no entry names, found in the RTPS domain through the pattern.
  {
    SpindleSide spindle(0, "Square2");
    CycloneSide cyclone(0, "Square2");
    connect(spindle, cyclone, "");
    CHECK(gw.saw("bridging Square2 (found in ", 1, 5s));
    cyclone.quit();
  }
  // Denied: nothing crosses, however long it is written.
  {
    SpindleSide spindle(0, "SecretSquare");
    CycloneSide cyclone(0, "SecretSquare");
    for (int i = 0; i < 30; ++i) {
      spindle.write("Blue", i);
      cyclone.write("Red", i);
      std::this_thread::sleep_for(100ms);
      spindle.poll();
      cyclone.poll();
    }
    CHECK(count(spindle.events, "data", "Red") == 0);
    CHECK(count(cyclone.events, "data", "Blue") == 0);
    cyclone.quit();
  }
  // Partitions: the gateway's Triangle readers and writers are in "red" on both sides.
  {
    SpindleSide red(0, "Triangle", "red");
    SpindleSide blue(0, "Triangle", "blue");
    CycloneSide cyclone(0, "Triangle", "red");
    connect(red, cyclone, "");
    for (int i = 0; i < 10; ++i)
      cyclone.write("Red", 100 + i);
    CHECK(eventually([&] { return count(red.events, "data", "Red") >= 10; }, 30s,
                     {[&] { red.poll(); }}));
    std::this_thread::sleep_for(500ms);
    blue.poll();
    CHECK(count(blue.events, "data", "Red") == 0);
    CHECK(count(blue.events, "data", "WarmB") == 0);
    cyclone.quit();
  }
  const auto stats = gw.stop();
  INFO(gw.output << stats);
  CHECK(stats.find("SecretSquare") == std::string::npos);
}

TEST_CASE("samples that do not decode are counted, not fatal", "[refused]") {
  // The gateway's ShapeType has a member more than Cyclone's: every sample from the RTPS side
  // is too short for it.
  write_file("Longer.idl", R"(@topic
struct ShapeType {
  @key string<128> color;
  long x;
  long y;
  long shapesize;
  long long extra;
};
)");
  GatewayProc gw(write_file("gateway.yaml", R"(spindle: {domain: 0}
rtps: {domain: 0}
idl: [Longer.idl]
topics: [{name: Square, type: ShapeType}]
)"));
  CycloneSide cyclone(0);
  for (int i = 0; i < 20; ++i) {
    cyclone.write("Red", i);
    std::this_thread::sleep_for(100ms);
  }
  const auto stats = gw.stop();
  INFO(gw.output << stats);
  CHECK(stats.find("rtps refused ") != std::string::npos);
  CHECK(stats.find("Square rtps->spindle data 0 ") != std::string::npos);
  cyclone.quit();
}

namespace {

// Runs the gateway on `config` and returns its exit status and output.
std::pair<int, std::string> run_gateway(const std::string& config) {
  tst::Process p(
      {"/bin/sh", "-c", "exec " + std::string(SPINDLE_GATEWAY) + " --config " + config + " 2>&1"});
  std::string out;
  while (auto line = p.read_line(Clock::now() + 30s))
    out += *line + "\n";
  return {p.wait(Clock::now() + 30s), out};
}

}  // namespace

TEST_CASE("a configuration it cannot use is refused with file:line and key", "[config]") {
  shape_idl();
  struct Case {
    const char* yaml;
    const char* expect;
  };
  const Case cases[] = {
      {"spindle: {domain: 0}\nrtps: {domain: 0}\nidl: [ShapeType.idl]\ntopics:\n  - {name: Square, "
       "type: ShapeTyp}\n",
       "bad.yaml:5:5: type: no type 'ShapeTyp' in the IDL files (ShapeType)"},
      {"spindle: {domain: 0}\nrtps: {domain: 0}\nidl: [ShapeType.idl]\ntopcs: []\n",
       "bad.yaml:4:1: topcs: unknown key"},
      {"spindle: {domain: 0}\nrtps: {domain: 0}\nidl: [ShapeType.idl]\ntopics:\n  - {name: Square, "
       "type: ShapeType, direction: sideways}\n",
       "bad.yaml:5:48: topics[0].direction: 'sideways' is not one of both, to_spindle, to_rtps"},
      {"spindle: {domain: 0}\nidl: [ShapeType.idl]\ntopics: [{name: Square, type: ShapeType}]\n",
       "a gateway joins exactly two domains (found 1)"},
      {"spindle: {domain: 0}\nrtps: {domain: 999}\nidl: [ShapeType.idl]\ntopics: [{name: Square, "
       "type: ShapeType}]\n",
       "bad.yaml:2:16: rtps.domain: domain id 999 is not in 0..232"},
      {"spindle: {domain: 0}\nrtps: {domain: 0}\nidl: [Broken.idl]\ntopics: [{name: Square, type: "
       "ShapeType}]\n",
       "Broken.idl:2:"},
      {"spindle: {domain: 0}\nrtps: {domain: 0}\nidl: [Missing.idl]\ntopics: [{name: Square, type: "
       "ShapeType}]\n",
       "Missing.idl"},
      {"spindle: {domain: 0}\nrtps: {domain: 0}\nidl: [ShapeType.idl]\ntopics:\n  - {name: Square, "
       "type: ShapeType, qos: {history: -3}}\n",
       "bad.yaml:5:52: topics[0].qos.history: '-3' is neither a depth"},
      {"spindle: {domain: 0}\nrtps: {domain: 0\n", "bad.yaml:3:1:"},
      {"spindle: {domain: 0}\nrtps: {domain: 0}\nidl: [ShapeType.idl]\ntopics:\n  - {name: Square, "
       "type: ''}\n",
       "topics[0].type: empty (the topic's IDL type)"},
  };
  write_file("Broken.idl", "struct ShapeType {\n  long x\n};\n");
  for (const auto& c : cases) {
    INFO(c.yaml);
    const auto [rc, out] = run_gateway(write_file("bad.yaml", c.yaml));
    INFO(out);
    CHECK(rc == 2);
    CHECK(out.find(c.expect) != std::string::npos);
  }
  const auto [rc, out] = run_gateway(g_dir + "/nowhere.yaml");
  CHECK(rc == 2);
  CHECK(out.find("nowhere.yaml: cannot read the configuration file") != std::string::npos);
}

int main(int argc, char* argv[]) {
  if (const auto why = tst::enter_namespaces(); !why.empty()) {
    std::fprintf(stderr, "gateway_test: skipped: %s\n", why.c_str());
    return 77;
  }
  // Cyclone DDS finds its peers by multicast: loopback must carry it.
  if (!tst::run_quietly(tst::ip_tool() + " link set lo multicast on")) {
    std::fprintf(stderr, "gateway_test: skipped: cannot turn on multicast on loopback\n");
    return 77;
  }
  // A network of our own: the default join ports (7410 + domain) are free, and two Spindle
  // domains need two of them.
  ::unsetenv("SPINDLE_CONFIG");
  char tmpl[] = "/tmp/gateway_test.XXXXXX";
  const char* base = std::getenv("SPINDLE_TEST_SCRATCH");
  std::string pattern = base != nullptr ? std::string(base) + "/gateway_test.XXXXXX" : tmpl;
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr) {
    std::perror("gateway_test: mkdtemp");
    return 1;
  }
  g_dir = buf.data();
  // Durable logs of logged topics (none here) stay in the scratch folder, not the user's.
  ::setenv("XDG_STATE_HOME", g_dir.c_str(), 1);
  const int rc = Catch::Session().run(argc, argv);
  std::filesystem::remove_all(g_dir);
  return rc;
}
