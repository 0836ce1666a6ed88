// The shared strict YAML reader (core/yaml_reader, core/yaml_schema): durations, integers,
// choices, key checks, and the messages every loader inherits.
#include <catch2/catch.hpp>

#include "core/yaml_reader.hpp"
#include "core/yaml_schema.hpp"
#include "support.hpp"

namespace core = spindle::core;
using dds::core::Duration;

namespace {

std::string error_of(const std::string& yaml,
                     const std::function<void(const core::YamlReader&, const YAML::Node&)>& f) {
  const core::YamlReader r("t.yaml");
  return qos_test::error_of<core::YamlError>([&] { f(r, core::parse_yaml(yaml, "t.yaml")); });
}

YAML::Node value_of(const YAML::Node& map, const char* key) {
  return core::YamlReader::find(map, key);
}

}  // namespace

TEST_CASE("yaml: durations parse and format exactly", "[yaml]") {
  Duration d;
  REQUIRE(core::parse_duration("100ms", d));
  CHECK(d == Duration::from_millisecs(100));
  REQUIRE(core::parse_duration("2s", d));
  CHECK(d == Duration(2, 0));
  REQUIRE(core::parse_duration("250us", d));
  CHECK(d == Duration::from_microsecs(250));
  REQUIRE(core::parse_duration("7ns", d));
  CHECK(d.to_nanosecs() == 7);
  REQUIRE(core::parse_duration("3min", d));
  CHECK(d == Duration(180, 0));
  REQUIRE(core::parse_duration("infinite", d));
  CHECK(d.is_infinite());
  REQUIRE(core::parse_duration("0", d));
  CHECK(d == Duration::zero());
  for (const char* bad : {"", "ms", "10", "1.5s", "-1s", "10 ms", "10h", "infinity",
                          "9999999999999999999s", "99999999999s"}) {
    INFO(bad);
    CHECK_FALSE(core::parse_duration(bad, d));
  }
  for (const auto& x : {Duration::zero(), Duration::infinite(), Duration::from_millisecs(100),
                        Duration(2, 0), Duration(0, 1500), Duration(60, 0), Duration(61, 0)}) {
    Duration back;
    REQUIRE(core::parse_duration(core::format_duration(x), back));
    CHECK(back == x);
  }
  CHECK(core::format_duration(Duration::from_millisecs(1500)) == "1500ms");
  CHECK(core::format_duration(Duration(120, 0)) == "2min");
}

TEST_CASE("yaml: integers, booleans, choices and strings with exact messages", "[yaml]") {
  auto integer = [](int lo, int hi) {
    return [lo, hi](const core::YamlReader& r, const YAML::Node& n) {
      (void)r.integer<int>(value_of(n, "k"), "a.k", lo, hi);
    };
  };
  CHECK(error_of("k: 0", integer(1, INT32_MAX)) == "t.yaml:1: a.k: must be >= 1, got 0");
  CHECK(error_of("k: 70000", integer(0, 65535)) == "t.yaml:1: a.k: must be in 0..65535, got 70000");
  CHECK(error_of("k: x1", integer(0, 5)) == "t.yaml:1: a.k: expected an integer, got 'x1'");
  CHECK(error_of("k: [1]", integer(0, 5)) == "t.yaml:1: a.k: expected an integer, got a list");
  CHECK(error_of("k: +3", integer(0, 5)).empty());
  auto flag = [](const core::YamlReader& r, const YAML::Node& n) {
    (void)r.boolean(value_of(n, "k"), "k");
  };
  CHECK(error_of("k: yes", flag) == "t.yaml:1: k: expected true or false, got 'yes'");
  CHECK(error_of("k: true", flag).empty());
  const std::string_view choices[] = {"a", "b", "c"};
  auto pick = [&](const core::YamlReader& r, const YAML::Node& n) {
    (void)r.choice(value_of(n, "k"), "k", choices);
  };
  CHECK(error_of("k: d", pick) == "t.yaml:1: k: expected a, b or c, got 'd'");
  auto text = [](const core::YamlReader& r, const YAML::Node& n) {
    (void)r.text(value_of(n, "k"), "k");
  };
  CHECK(error_of("k: {x: 1}", text) == "t.yaml:1: k: expected a string, got a mapping");
  CHECK(error_of("k:", text) == "t.yaml:1: k: expected a string, got nothing");
}

TEST_CASE("yaml: maps reject unknown and repeated keys; syntax errors name the line", "[yaml]") {
  auto only_ab = [](const core::YamlReader& r, const YAML::Node& n) {
    r.expect_map(n, "top", {"a", "b"});
  };
  CHECK(error_of("a: 1\nc: 2\n", only_ab) == "t.yaml:2: top.c: unknown key (allowed: a, b)");
  CHECK(error_of("a: 1\nb: 2\na: 3\n", only_ab) == "t.yaml:3: top.a: given twice");
  CHECK(error_of("[1, 2]", only_ab) == "t.yaml:1: top: expected a mapping, got a list");
  CHECK(error_of("", only_ab).empty());  // an empty document is an empty mapping
  CHECK(qos_test::error_of<core::YamlError>([] {
          (void)core::parse_yaml("a: 1\nb: [\n", "t.yaml");
        }).rfind("t.yaml:3: syntax: ", 0) == 0);
  CHECK(error_of("version: 2", [](const core::YamlReader& r, const YAML::Node& n) {
          core::check_version(r, n, 1);
        }) == "t.yaml:1: version: unsupported version 2 (this loader reads version 1)");
  CHECK(error_of("a: 1", [](const core::YamlReader& r, const YAML::Node& n) {
          core::check_version(r, n, 1);
        }) == "t.yaml:1: version: missing (this loader reads version 1)");
  CHECK(qos_test::error_of<core::YamlError>([] {
          (void)core::read_text_file("/nonexistent/x.yaml", "thing");
        }) == "/nonexistent/x.yaml: cannot open the thing");
}

TEST_CASE("yaml: schema fields walk nested keys and render back", "[yaml]") {
  struct Cfg {
    std::int64_t depth = 1;
    std::int64_t limit = -1;
    Duration period = Duration::infinite();
  };
  std::vector<core::Field<Cfg>> fields(3);
  fields[0].key = "history.depth";
  fields[0].type = core::ValueType::integer;
  fields[0].lo = 1;
  fields[0].hi = INT32_MAX;
  fields[0].get = [](const Cfg& c) -> core::Value { return c.depth; };
  fields[0].set = [](Cfg& c, const core::Value& v) { c.depth = std::get<std::int64_t>(v); };
  fields[1].key = "history.limit";
  fields[1].type = core::ValueType::count;
  fields[1].lo = 1;
  fields[1].hi = INT32_MAX;
  fields[1].get = [](const Cfg& c) -> core::Value { return c.limit; };
  fields[1].set = [](Cfg& c, const core::Value& v) { c.limit = std::get<std::int64_t>(v); };
  fields[2].key = "period";
  fields[2].type = core::ValueType::duration;
  fields[2].lo = 1'000'000;
  fields[2].hi = core::kNoUpperBound;
  fields[2].get = [](const Cfg& c) -> core::Value { return c.period; };
  fields[2].set = [](Cfg& c, const core::Value& v) { c.period = std::get<Duration>(v); };

  const core::YamlReader r("t.yaml");
  Cfg c;
  const auto set = core::read_fields(
      r, core::parse_yaml("history: {depth: 4, limit: unlimited}\nperiod: 5ms\n", "t.yaml"), "s",
      fields, c);
  CHECK(set.size() == 3);
  CHECK(c.depth == 4);
  CHECK(c.limit == -1);
  CHECK(c.period == Duration::from_millisecs(5));
  const auto text = core::render_block(core::specs_of(fields), core::render_values(fields, c), 2);
  CHECK(text == "  history:\n    depth: 4\n    limit: unlimited\n  period: 5ms\n");

  auto fails = [&](const std::string& yaml) {
    Cfg x;
    return qos_test::error_of<core::YamlError>(
        [&] { (void)core::read_fields(r, core::parse_yaml(yaml, "t.yaml"), "s", fields, x); });
  };
  CHECK(fails("history: {depth: 0}") == "t.yaml:1: s.history.depth: must be >= 1, got 0");
  CHECK(fails("history: {limit: 0}") ==
        "t.yaml:1: s.history.limit: must be >= 1 or unlimited, got 0");
  CHECK(fails("history: {limit: lots}") ==
        "t.yaml:1: s.history.limit: expected an integer or unlimited, got 'lots'");
  CHECK(fails("history:\n  deep: 1\n") ==
        "t.yaml:2: s.history.deep: unknown key (allowed: depth, limit)");
  CHECK(fails("period: 10us") == "t.yaml:1: s.period: must be >= 1ms, got 10us");
  CHECK(fails("period: soon") ==
        "t.yaml:1: s.period: expected a duration (an integer with ns, us, ms, s or min, or 0, "
        "or infinite), got 'soon'");
  CHECK(fails("history: 3") == "t.yaml:1: s.history: expected a mapping, got '3'");
}
