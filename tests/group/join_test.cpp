// The contact protocol's request (join.hpp): what a joiner sends reads back equal, and a
// malformed request — it comes from any program that connects to the join port — is
// refused with the line and what is wrong, never trusted.
#include <string>

#include <catch2/catch.hpp>

#include "group/join.hpp"

namespace g = spindle::group;

TEST_CASE("join: a request reads back as it was written", "[join]") {
  g::JoinRequest r;
  r.domain_id = 42;
  r.node = 0x7ffffffe;
  r.host = "127.0.0.1";
  r.port = 40000;
  r.settings = {{"protocol", "1"}, {"engine.slot_size", "1024"}};
  std::string error;
  const auto back = g::parse_join(g::encode(r), error);
  REQUIRE(back);
  CHECK(back->domain_id == 42);
  CHECK(back->node == 0x7ffffffe);
  CHECK(back->host == "127.0.0.1");
  CHECK(back->port == 40000);
  CHECK(back->settings == r.settings);
  CHECK(g::default_join_port(0) == 7410);
  CHECK(g::default_join_port(3) == 7413);
}

TEST_CASE("join: malformed requests are refused with the line and the reason", "[join]") {
  const std::string good = "SPINDLE-JOIN 1\ndomain 0\nnode 5\nhost 127.0.0.1\nport 9\n";
  const std::pair<std::string, std::string> cases[] = {
      {"GET / HTTP/1.1\n", "join request line 1: expected 'SPINDLE-JOIN 1'"},
      {"SPINDLE-JOIN 1\ndomain -1\nend\n", "join request line 2: bad or unknown field 'domain -1'"},
      {"SPINDLE-JOIN 1\nport 70000\nend\n",
       "join request line 2: bad or unknown field 'port 70000'"},
      {"SPINDLE-JOIN 1\nnode 99999999999\nend\n",
       "join request line 2: bad or unknown field 'node 99999999999'"},
      {"SPINDLE-JOIN 1\nrole admin\nend\n",
       "join request line 2: bad or unknown field 'role admin'"},
      {"SPINDLE-JOIN 1\nsetting lonely\nend\n",
       "join request line 2: bad or unknown field 'setting lonely'"},
      {good, "join request: incomplete (it needs the magic line, domain, node, port and end)"},
      {"SPINDLE-JOIN 1\ndomain 0\nport 9\nend\n",
       "join request: incomplete (it needs the magic line, domain, node, port and end)"},
      {"", "join request: incomplete (it needs the magic line, domain, node, port and end)"},
  };
  for (const auto& [text, message] : cases) {
    INFO(text);
    std::string error;
    CHECK_FALSE(g::parse_join(text, error));
    CHECK(error == message);
  }
  std::string error;
  CHECK(g::parse_join(good + "end\n", error));
}

TEST_CASE("join: with nobody at the contact, there is no domain to join", "[join]") {
  const std::vector<spindle::transport::NodeAddress> nobody{{0, "127.0.0.1", 1}};
  g::JoinRequest r;
  CHECK_FALSE(g::join(nobody, r, std::chrono::steady_clock::now() + std::chrono::seconds(2)));
}
