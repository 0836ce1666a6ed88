// Per-topic subgroups through the whole stack in the simulator: a topic's samples travel
// only among the processes with an endpoint on it; creating and deleting endpoints lays
// the subgroups out again in a later view; a writer nobody reads writes into nothing, and a
// reader created later receives what is written after it is matched; statuses follow.
// Partitions: a process whose readers are all in other partitions is in none of the
// topic's subgroups, and a reader matching several partitions takes them in one order.
#include <algorithm>
#include <vector>

#include <catch2/catch.hpp>

#include "avionics.hpp"
#include "group/layout.hpp"
#include "sim_stack.hpp"

namespace sim = spindle::transport::sim;
namespace group = spindle::group;
using spindle::testing::keep_all;
using spindle::testing::SimStack;
using FlightState = Avionics::FlightState;

namespace {

FlightState sample(std::uint64_t seq) {
  FlightState s;
  s.aircraft_id(1);
  s.timestamp_ns(seq);
  return s;
}

// The subgroup of topic `name` in participant i's view, if any.
const group::Subgroup* topic_subgroup(const group::View& v, const std::string& name) {
  for (const auto& sg : v.subgroups)
    if (sg.name == name + "/atomic") return &sg;
  return nullptr;
}

std::vector<std::uint64_t> take_all(dds::sub::DataReader<FlightState>& r,
                                    std::vector<std::uint64_t>& got) {
  for (const auto& s : r.take())
    if (s.info().valid()) got.push_back(s.data().timestamp_ns());
  return got;
}

}  // namespace

TEST_CASE(
    "topics: a process with no endpoint on a topic is in none of its subgroups and "
    "receives none of its samples",
    "[topics]") {
  SimStack stack(sim::Config{}, 3);
  dds::topic::Topic<FlightState> t1(stack.participant(0), "Track");
  dds::topic::Topic<FlightState> t2(stack.participant(1), "Track");
  dds::pub::DataWriter<FlightState> w(dds::pub::Publisher(stack.participant(0)), t1);
  dds::sub::DataReader<FlightState> r(dds::sub::Subscriber(stack.participant(1)), t2, keep_all());
  REQUIRE(stack.run_until([&] { return w.publication_matched_status().current_count() == 1; }));
  // Every member installs the view that lays the topic out (each at its own moment).
  REQUIRE(stack.run_until([&] {
    for (std::size_t i = 0; i < 3; ++i)
      if (topic_subgroup(stack.view(i), "Track") == nullptr) return false;
    return true;
  }));
  for (std::size_t i = 0; i < 3; ++i) {
    const auto v = stack.view(i);
    const auto* sg = topic_subgroup(v, "Track");
    REQUIRE(sg != nullptr);
    CHECK(sg->members == std::vector<group::NodeId>{1, 2});
    CHECK(sg->senders == std::vector<group::NodeId>{1});
  }
  const auto before = stack.delivered(2);
  for (std::uint64_t i = 0; i < 50; ++i)
    w.write(sample(i));
  std::vector<std::uint64_t> got;
  REQUIRE(stack.run_until([&] { return take_all(r, got).size() == 50; }));
  // Member 3 delivered nothing of the topic (at most a heartbeat-free builtin: nothing).
  CHECK(stack.delivered(2) == before);
  CHECK(r.subscription_matched_status().current_count() == 1);
}

TEST_CASE(
    "topics: a writer nobody reads writes into nothing; a reader created later gets "
    "what is written once it is matched",
    "[topics]") {
  SimStack stack(sim::Config{}, 2);
  dds::topic::Topic<FlightState> t1(stack.participant(0), "Track");
  dds::topic::Topic<FlightState> t2(stack.participant(1), "Track");
  dds::pub::DataWriter<FlightState> w(dds::pub::Publisher(stack.participant(0)), t1);
  (void)stack.run_until([] { return false; }, std::chrono::milliseconds(20));
  // A writer alone calls for no subgroup (its announcement still ends the view: matches
  // take effect at view boundaries).
  CHECK(topic_subgroup(stack.view(0), "Track") == nullptr);
  CHECK(stack.view(0).subgroups.size() == 1);
  for (std::uint64_t i = 0; i < 5; ++i)
    w.write(sample(i));  // no reader anywhere: no subgroup, the samples go nowhere
  CHECK(stack.engine_stats(0).unread == 5);
  CHECK(topic_subgroup(stack.view(0), "Track") == nullptr);

  dds::sub::DataReader<FlightState> r(dds::sub::Subscriber(stack.participant(1)), t2, keep_all());
  REQUIRE(stack.run_until([&] { return w.publication_matched_status().current_count() == 1; }));
  // Matched means carried: the view that reported it has the topic's subgroup.
  const auto v = stack.view(0);
  const auto* sg = topic_subgroup(v, "Track");
  REQUIRE(sg != nullptr);
  CHECK(sg->members == std::vector<group::NodeId>{1, 2});
  for (std::uint64_t i = 5; i < 10; ++i)
    w.write(sample(i));
  std::vector<std::uint64_t> got;
  REQUIRE(stack.run_until([&] { return take_all(r, got).size() >= 5; }));
  (void)stack.run_until([] { return false; }, std::chrono::milliseconds(5));
  take_all(r, got);
  CHECK(got == std::vector<std::uint64_t>{5, 6, 7, 8, 9});
}

TEST_CASE("topics: deleting the last reader removes the topic's subgroup in a later view",
          "[topics]") {
  SimStack stack(sim::Config{}, 2);
  dds::topic::Topic<FlightState> t1(stack.participant(0), "Track");
  dds::topic::Topic<FlightState> t2(stack.participant(1), "Track");
  dds::pub::DataWriter<FlightState> w(dds::pub::Publisher(stack.participant(0)), t1);
  {
    dds::sub::DataReader<FlightState> r(dds::sub::Subscriber(stack.participant(1)), t2, keep_all());
    REQUIRE(stack.run_until([&] { return w.publication_matched_status().current_count() == 1; }));
    REQUIRE(topic_subgroup(stack.view(1), "Track") != nullptr);
    r.close();
  }
  REQUIRE(stack.run_until([&] {
    return w.publication_matched_status().current_count() == 0 &&
           topic_subgroup(stack.view(0), "Track") == nullptr &&
           topic_subgroup(stack.view(1), "Track") == nullptr;
  }));
  // Writes go nowhere now, and nothing blocks.
  w.write(sample(1));
  CHECK(stack.engine_stats(0).unread >= 1);
}

// Creating an endpoint returns once the view that matches it with every endpoint known at
// that moment is installed (Participant::await_match): a writer made after the readers is
// matched when its constructor returns, and its first write reaches them all.
TEST_CASE("topics: a new endpoint is matched with the existing ones when its constructor returns",
          "[topics]") {
  SimStack stack(sim::Config{}, 3);
  const auto views_before = stack.engine_stats(0).views;
  std::vector<dds::topic::Topic<FlightState>> topics;
  std::vector<dds::sub::DataReader<FlightState>> readers;
  for (std::size_t i = 0; i < 3; ++i) {
    topics.emplace_back(stack.participant(i), "Track");
    readers.emplace_back(dds::sub::Subscriber(stack.participant(i)), topics.back(), keep_all());
    CHECK(readers.back().subscription_matched_status().current_count() == 0);
  }
  dds::pub::DataWriter<FlightState> writer(dds::pub::Publisher(stack.participant(0)), topics[0]);
  CHECK(writer.publication_matched_status().current_count() == 3);
  writer.write(sample(1));  // at once: no sample is lost to matching
  for (auto& r : readers) {
    std::vector<std::uint64_t> got;
    REQUIRE(stack.run_until([&] { return take_all(r, got).size() == 1; }));
  }
  // One view change per creation, each laying the topic out anew.
  CHECK(stack.engine_stats(0).views <= views_before + 4);
  const auto v = stack.view(2);
  const auto* sg = topic_subgroup(v, "Track");
  REQUIRE(sg != nullptr);
  CHECK(sg->senders == std::vector<group::NodeId>{1});
}

TEST_CASE("topics: two topics with different readers travel apart, each in total order",
          "[topics]") {
  SimStack stack(sim::Config{}, 3);
  // Topic A: written on 1, read on 2. Topic B: written on 3, read on 1 and 2.
  dds::topic::Topic<FlightState> a1(stack.participant(0), "A");
  dds::topic::Topic<FlightState> a2(stack.participant(1), "A");
  dds::topic::Topic<FlightState> b1(stack.participant(0), "B");
  dds::topic::Topic<FlightState> b2(stack.participant(1), "B");
  dds::topic::Topic<FlightState> b3(stack.participant(2), "B");
  dds::pub::DataWriter<FlightState> wa(dds::pub::Publisher(stack.participant(0)), a1);
  dds::pub::DataWriter<FlightState> wb(dds::pub::Publisher(stack.participant(2)), b3);
  dds::sub::DataReader<FlightState> ra(dds::sub::Subscriber(stack.participant(1)), a2, keep_all());
  dds::sub::DataReader<FlightState> rb1(dds::sub::Subscriber(stack.participant(0)), b1, keep_all());
  dds::sub::DataReader<FlightState> rb2(dds::sub::Subscriber(stack.participant(1)), b2, keep_all());
  REQUIRE(stack.run_until([&] {
    return wa.publication_matched_status().current_count() == 1 &&
           wb.publication_matched_status().current_count() == 2;
  }));
  // Each writer matched in its own member's view; the others install it in their own time.
  REQUIRE(stack.run_until([&] {
    return stack.view(0).epoch == stack.view(1).epoch && stack.view(1).epoch == stack.view(2).epoch;
  }));
  const auto v = stack.view(0);
  REQUIRE(topic_subgroup(v, "A") != nullptr);
  REQUIRE(topic_subgroup(v, "B") != nullptr);
  CHECK(topic_subgroup(v, "A")->members == std::vector<group::NodeId>{1, 2});
  CHECK(topic_subgroup(v, "B")->members == std::vector<group::NodeId>{1, 2, 3});
  for (std::uint64_t i = 0; i < 30; ++i) {
    wa.write(sample(i));
    wb.write(sample(100 + i));
  }
  std::vector<std::uint64_t> ga, g1, g2;
  REQUIRE(stack.run_until([&] {
    take_all(ra, ga);
    take_all(rb1, g1);
    take_all(rb2, g2);
    return ga.size() == 30 && g1.size() == 30 && g2.size() == 30;
  }));
  CHECK(g1 == g2);
  CHECK(ga.front() == 0);
  CHECK(ga.back() == 29);
}

TEST_CASE(
    "topics: a writer whose member crashed is unmatched at the view change, its instance "
    "becomes NOT_ALIVE_NO_WRITERS and liveliness counts it lost",
    "[topics]") {
  SimStack stack(sim::Config{}, 3);
  dds::topic::Topic<FlightState> t1(stack.participant(0), "Track");
  dds::topic::Topic<FlightState> t3(stack.participant(2), "Track");
  dds::pub::DataWriter<FlightState> w(dds::pub::Publisher(stack.participant(2)), t3);
  dds::sub::DataReader<FlightState> r(dds::sub::Subscriber(stack.participant(0)), t1, keep_all());
  REQUIRE(stack.run_until([&] { return r.subscription_matched_status().current_count() == 1; }));
  w.write(sample(0));
  REQUIRE(stack.run_until([&] { return r.read().length() == 1; }));
  REQUIRE(r.liveliness_changed_status().alive_count() == 1);
  stack.crash(2);
  // The view without member 3 is installed at member 1: its writer is gone.
  REQUIRE(stack.run_until([&] { return r.subscription_matched_status().current_count() == 0; }));
  CHECK(!stack.view(0).rank_of(3));
  const auto live = r.liveliness_changed_status();
  CHECK(live.alive_count() == 0);
  CHECK(live.not_alive_count() == 0);  // gone, not merely not alive: it no longer counts
  const auto samples = r.read();
  REQUIRE(samples.length() >= 1);
  CHECK(samples.begin()->info().state().instance_state() ==
        dds::sub::status::InstanceState::not_alive_no_writers());
  CHECK(r.subscription_matched_status().total_count() == 1);
}

TEST_CASE(
    "topics: a topic's partitions travel apart; a process reading another partition "
    "receives none of its samples, a wildcard reader takes both in one order",
    "[topics]") {
  SimStack stack(sim::Config{}, 4);
  std::vector<dds::topic::Topic<FlightState>> topics;
  for (std::size_t i = 0; i < 4; ++i)
    topics.emplace_back(stack.participant(i), "Track");
  auto publisher = [&](std::size_t i, const std::string& partition) {
    dds::pub::qos::PublisherQos q;
    q << dds::core::policy::Partition(partition);
    return dds::pub::Publisher(stack.participant(i), q);
  };
  auto subscriber = [&](std::size_t i, const std::string& partition) {
    dds::sub::qos::SubscriberQos q;
    q << dds::core::policy::Partition(partition);
    return dds::sub::Subscriber(stack.participant(i), q);
  };
  // Member 1 writes in "east", member 2 in "west"; member 3 reads "east", member 4 "west".
  dds::pub::DataWriter<FlightState> east(publisher(0, "east"), topics[0]);
  dds::pub::DataWriter<FlightState> west(publisher(1, "west"), topics[1]);
  dds::sub::DataReader<FlightState> r_east(subscriber(2, "east"), topics[2], keep_all());
  dds::sub::DataReader<FlightState> r_west(subscriber(3, "west"), topics[3], keep_all());
  REQUIRE(stack.run_until([&] {
    return east.publication_matched_status().current_count() == 1 &&
           west.publication_matched_status().current_count() == 1 &&
           stack.view(0).epoch == stack.view(3).epoch;  // member 1 installed the last view too
  }));
  auto subgroups_of = [&](std::size_t i) {
    std::vector<std::vector<group::NodeId>> out;
    for (const auto& sg : stack.view(i).subgroups)
      if (sg.topic != 0) out.push_back(sg.members);
    return out;
  };
  auto split = subgroups_of(0);
  std::sort(split.begin(), split.end());
  CHECK(split == std::vector<std::vector<group::NodeId>>{{1, 3}, {2, 4}});
  const auto west_before = stack.delivered(3);
  for (std::uint64_t i = 0; i < 20; ++i)
    east.write(sample(i));
  std::vector<std::uint64_t> got;
  REQUIRE(stack.run_until([&] { return take_all(r_east, got).size() == 20; }));
  (void)stack.run_until([] { return false; }, std::chrono::milliseconds(5));
  CHECK(stack.delivered(3) == west_before);  // member 4 reads "west" only: nothing of "east"
  std::vector<std::uint64_t> none;
  CHECK(take_all(r_west, none).empty());

  // A reader of "*" on member 4 joins both partitions into one subgroup: it takes both
  // writers' samples, and member 3 ("east") still receives nothing of "west" that it keeps.
  dds::sub::DataReader<FlightState> r_all(subscriber(3, "*"), topics[3], keep_all());
  REQUIRE(
      stack.run_until([&] { return r_all.subscription_matched_status().current_count() == 2; }));
  // Member 1 installs that view too (each member at its own step).
  CHECK(stack.run_until([&] { return subgroups_of(0).size() == 1; }));
  for (std::uint64_t i = 100; i < 110; ++i) {
    east.write(sample(i));
    west.write(sample(i + 1000));
  }
  std::vector<std::uint64_t> all, west_got, east_got;
  REQUIRE(stack.run_until([&] { return take_all(r_all, all).size() == 20; }));
  REQUIRE(stack.run_until([&] { return take_all(r_west, west_got).size() == 10; }));
  REQUIRE(stack.run_until([&] { return take_all(r_east, east_got).size() == 10; }));
  CHECK(std::all_of(west_got.begin(), west_got.end(), [](auto v) { return v >= 1000; }));
  CHECK(std::all_of(east_got.begin(), east_got.end(), [](auto v) { return v < 1000; }));
}
