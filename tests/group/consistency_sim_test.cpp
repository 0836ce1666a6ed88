// Consistency as the reader sees it (issue 31), whole stack in the simulator over many
// seeds: what take() returns, checked where the user looks.
//
//   [coherent]  Member 1 writes coherent sets (Presentation coherent_access, TOPIC scope) of
//               1-6 samples over several instances — sets that outgrow a slot go by RDMC —
//               while member 2 writes plain samples; member 1 crashes at a random point,
//               mid-set included. Every reader (members 2 and 3, ordered and coherent
//               access) must hold each set whole or not at all, the same sets in the same
//               place of one sequence, and no part of the set member 1 had open.
//   [ordered]   Two writers of several instances on two members, three readers with TOPIC
//               ordered access, taking at random moments: every reader's take() sequence,
//               across instances, is the same.
//   [group]     A GROUP-scope publisher (ordered, coherent) writes two topics, now and then
//               in coherent sets spanning both, and may crash mid-set; every member's GROUP
//               subscriber reads inside begin/end_access, one sample per reader in the
//               order dds::sub::find lists them: every member reads the same sequence
//               across the two topics, the publisher's order, each set whole within one
//               access, nothing of an open set.
//
// A failing seed prints the command that replays it.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "avionics.hpp"
#include "sim_stack.hpp"

namespace sim = spindle::transport::sim;
using FlightState = Avionics::FlightState;
using spindle::testing::keep_all;
using spindle::testing::SimStack;

namespace {

// Seeds explored past the floor while this much time remains (sim::Seeds): a sanitizer build
// or a slow machine runs fewer, a release build all of them.
constexpr std::chrono::seconds kBudget{30};

// A sample's identity: (aircraft = instance, timestamp = set * 100 + index), and the size of
// its set in the callsign.
struct Got {
  std::uint32_t instance;
  std::uint64_t stamp;
  std::uint32_t set_size;
  friend bool operator==(const Got&, const Got&) = default;
};

dds::sub::Subscriber ordered_subscriber(dds::domain::DomainParticipant& p, bool coherent) {
  dds::sub::qos::SubscriberQos q;
  q << dds::core::policy::Presentation::TopicAccessScope(coherent, true);
  return dds::sub::Subscriber(p, q);
}

void take_into(dds::sub::DataReader<FlightState>& r, std::vector<Got>& out) {
  for (const auto& s : r.take())
    if (s.info().valid())
      out.push_back({s.data().aircraft_id(), s.data().timestamp_ns(),
                     static_cast<std::uint32_t>(std::stoul(s.data().callsign()))});
}

// A seed's network (its latencies from `rng`) and its config.
sim::Config seed_config(std::uint64_t seed, sim::Rng& rng) {
  sim::Config config;
  config.seed = seed;
  config.max_latency = std::chrono::microseconds(rng.uniform(2, 100));
  return config;
}

// What the seeds exercised, so that a run that checks nothing fails.
struct Coverage {
  std::uint64_t sets = 0;         // sets the readers took
  std::uint64_t cut_mid_set = 0;  // seeds whose writer crashed with a set open
  std::uint64_t samples = 0;      // samples the ordered readers took
  std::uint64_t group_sets = 0;   // sets spanning two topics read whole in one access
};
Coverage coverage;

std::string coherent_seed(std::uint64_t seed) {
  sim::Rng rng(seed);
  const auto config = seed_config(seed, rng);
  SimStack stack(config, 3, static_cast<std::uint32_t>(rng.uniform(2, 16)), 512);
  if (rng.chance(500'000)) stack.one_host();
  std::vector<dds::topic::Topic<FlightState>> topics;
  for (std::size_t i = 0; i < 3; ++i)
    topics.emplace_back(stack.participant(i), "Sets");
  dds::pub::qos::PublisherQos pq;
  pq << dds::core::policy::Presentation::TopicAccessScope(true, true);
  dds::pub::Publisher sets_pub(stack.participant(0), pq);
  dds::pub::qos::DataWriterQos wq;
  wq << dds::core::policy::Reliability::Reliable(dds::core::Duration::from_secs(1))
     << dds::core::policy::History::KeepAll();
  dds::pub::DataWriter<FlightState> sets(sets_pub, topics[0], wq);
  // Coherent and ordered too (a reader asking for both matches only such writers), but it
  // writes outside any set.
  dds::pub::DataWriter<FlightState> plain(dds::pub::Publisher(stack.participant(1), pq), topics[1],
                                          wq);
  std::vector<dds::sub::DataReader<FlightState>> readers;
  for (std::size_t i = 1; i < 3; ++i)
    readers.emplace_back(ordered_subscriber(stack.participant(i), true), topics[i], keep_all());
  if (!stack.run_until([&] { return sets.publication_matched_status().current_count() == 2; }))
    return "the set writer did not match both readers";
  std::vector<std::vector<Got>> got(2);
  const auto total_sets = rng.uniform(3, 30);
  const auto crash_at = rng.uniform(0, total_sets);  // in the middle of this set
  std::uint64_t plain_seq = 0;
  bool crashed = false;
  for (std::uint64_t set = 1; set <= total_sets && !crashed; ++set) {
    const auto size = static_cast<std::uint32_t>(rng.uniform(1, 6));
    const auto crash_after = set == crash_at ? rng.uniform(0, size) : size + 1;
    {
      std::optional<dds::pub::CoherentSet> cs(std::in_place, sets_pub);
      for (std::uint32_t k = 0; k < size; ++k) {
        if (k == crash_after) {
          crashed = true;
          break;
        }
        FlightState s;
        s.aircraft_id(static_cast<std::uint32_t>(rng.uniform(1, 4)));
        s.timestamp_ns(set * 100 + k);
        s.callsign(std::to_string(size));
        sets.write(s);
      }
      if (crashed) {
        // The process dies with the set open: nothing of it was sent.
        stack.crash(0);
        cs.reset();  // its participant is gone: ending the set fails quietly
        break;
      }
      cs->end();
    }
    for (auto n = rng.uniform(0, 3); n > 0; --n) {
      FlightState s;
      s.aircraft_id(9);
      s.timestamp_ns(plain_seq++);
      s.callsign("1");
      plain.write(s);
    }
    for (auto k = rng.uniform(0, 30); k > 0; --k)
      (void)stack.net().step();
    for (std::size_t r = 0; r < 2; ++r)
      if (rng.chance(300'000)) take_into(readers[r], got[r]);
  }
  if (!crashed && rng.chance(500'000)) stack.crash(0);
  // Let the view change (if any) and the last deliveries land.
  (void)stack.run_until([&] { return stack.view(1).members.size() == (stack.alive(0) ? 3 : 2); });
  (void)stack.run_until([] { return false; }, std::chrono::milliseconds(5));
  for (std::size_t r = 0; r < 2; ++r)
    take_into(readers[r], got[r]);
  if (got[0] != got[1])
    return "the readers took different sequences (" + std::to_string(got[0].size()) + " and " +
           std::to_string(got[1].size()) + " samples)";
  // Sets whole: every sample of set s, and they sit together in the sequence (no other
  // sample of the set writer between them).
  std::map<std::uint64_t, std::uint32_t> count;
  std::map<std::uint64_t, std::uint32_t> size_of;
  std::uint64_t open = 0;
  std::uint32_t left = 0;
  for (const auto& g : got[0]) {
    if (g.instance == 9) continue;  // plain samples
    const auto set = g.stamp / 100;
    ++count[set];
    size_of[set] = g.set_size;
    if (left > 0 && set != open) return "set " + std::to_string(open) + " was interleaved";
    if (left == 0) {
      open = set;
      left = g.set_size;
    }
    --left;
  }
  if (left != 0) return "set " + std::to_string(open) + " arrived in part";
  for (const auto& [set, n] : count) {
    if (n != size_of[set]) {
      return "set " + std::to_string(set) + ": " + std::to_string(n) + " of " +
             std::to_string(size_of[set]) + " samples";
    }
    if (crashed && set == crash_at) return "a part of the set open at the crash arrived";
  }
  coverage.sets += count.size();
  if (crashed) ++coverage.cut_mid_set;
  // Nothing of a set before it ended: a complete run delivered every set.
  if (!crashed && stack.alive(0) && count.size() != total_sets)
    return std::to_string(count.size()) + " of " + std::to_string(total_sets) + " sets arrived";
  return {};
}

std::string ordered_seed(std::uint64_t seed) {
  sim::Rng rng(seed);
  const auto config = seed_config(seed, rng);
  SimStack stack(config, 3, static_cast<std::uint32_t>(rng.uniform(2, 16)));
  std::vector<dds::topic::Topic<FlightState>> topics;
  std::vector<dds::sub::DataReader<FlightState>> readers;
  for (std::size_t i = 0; i < 3; ++i) {
    topics.emplace_back(stack.participant(i), "Ordered");
    readers.emplace_back(ordered_subscriber(stack.participant(i), false), topics.back(),
                         keep_all());
  }
  dds::pub::qos::DataWriterQos wq;
  wq << dds::core::policy::Reliability::Reliable(dds::core::Duration::from_secs(1))
     << dds::core::policy::History::KeepAll();
  dds::pub::qos::PublisherQos pq;  // offering what the readers ask (RxO)
  pq << dds::core::policy::Presentation::TopicAccessScope(false, true);
  std::vector<dds::pub::DataWriter<FlightState>> writers;
  for (std::size_t i = 0; i < 2; ++i)
    writers.emplace_back(dds::pub::Publisher(stack.participant(i), pq), topics[i], wq);
  std::vector<std::vector<Got>> got(3);
  const auto total = rng.uniform(10, 200);
  for (std::uint64_t n = 0; n < total; ++n) {
    const auto w = static_cast<std::size_t>(rng.uniform(0, 1));
    FlightState s;
    s.aircraft_id(static_cast<std::uint32_t>(w * 10 + rng.uniform(1, 3)));
    s.timestamp_ns(n);
    s.callsign("1");
    writers[w].write(s);
    for (auto k = rng.uniform(0, 10); k > 0; --k)
      (void)stack.net().step();
    for (std::size_t r = 0; r < 3; ++r)
      if (rng.chance(100'000)) take_into(readers[r], got[r]);
  }
  const bool all = stack.run_until([&] {
    for (std::size_t r = 0; r < 3; ++r)
      take_into(readers[r], got[r]);
    return std::all_of(got.begin(), got.end(), [&](const auto& g) { return g.size() == total; });
  });
  if (!all) {
    return "not every reader took every sample of " + std::to_string(total) + ": " +
           std::to_string(got[0].size()) + ", " + std::to_string(got[1].size()) + ", " +
           std::to_string(got[2].size()) + " (writers matched " +
           std::to_string(writers[0].publication_matched_status().current_count()) + ", " +
           std::to_string(writers[1].publication_matched_status().current_count()) + ")";
  }
  if (got[0] != got[1] || got[0] != got[2]) return "the readers took different sequences";
  coverage.samples += total;
  return {};
}

// One read of a GROUP subscriber: inside an access, each reader in the order find() lists
// them, one sample each. Appends (topic index, stamp) and returns how many it read.
std::size_t read_group(dds::sub::Subscriber& sub,
                       std::map<dds::core::InstanceHandle, std::size_t>& topic_of,
                       std::vector<std::pair<std::size_t, std::uint64_t>>& out) {
  dds::sub::CoherentAccess access(sub);
  std::vector<dds::sub::DataReader<FlightState>> order;
  dds::sub::find<dds::sub::DataReader<FlightState>>(sub, dds::sub::status::DataState::any(),
                                                    std::back_inserter(order));
  std::size_t n = 0;
  for (auto& r : order) {
    for (const auto& s : r.select().max_samples(1).take()) {
      if (!s.info().valid()) continue;
      out.emplace_back(topic_of.at(r.instance_handle()), s.data().timestamp_ns());
      ++n;
    }
  }
  access.end();
  return n;
}

// Each coherent set (stamps [first, last]) read within one access by every member from
// `from` on: its samples all lie between the same two of the member's access ends.
std::string split_sets(const std::vector<std::vector<std::pair<std::size_t, std::uint64_t>>>& got,
                       const std::vector<std::vector<std::size_t>>& cuts,
                       const std::vector<std::pair<std::uint64_t, std::uint64_t>>& sets,
                       std::size_t from) {
  for (std::size_t m = from; m < got.size(); ++m) {
    auto access_of = [&](std::size_t position) {
      return std::upper_bound(cuts[m].begin(), cuts[m].end(), position) - cuts[m].begin();
    };
    for (const auto& [a, b] : sets) {
      std::optional<std::ptrdiff_t> access;
      for (std::size_t i = 0; i < got[m].size(); ++i) {
        if (got[m][i].second < a || got[m][i].second > b) continue;
        const auto here = access_of(i);
        if (access && *access != here)
          return "member " + std::to_string(m + 1) + " read the set of stamps " +
                 std::to_string(a) + ".." + std::to_string(b) + " across two accesses";
        access = here;
      }
    }
  }
  return {};
}

std::string group_seed(std::uint64_t seed) {
  sim::Rng rng(seed);
  const auto config = seed_config(seed, rng);
  SimStack stack(config, 3, static_cast<std::uint32_t>(rng.uniform(2, 16)), 512);
  if (rng.chance(500'000)) stack.one_host();
  const auto group = dds::core::policy::Presentation::GroupAccessScope(true, true);
  dds::pub::qos::PublisherQos pq;
  pq << group;
  dds::sub::qos::SubscriberQos sq;
  sq << group;
  dds::pub::qos::DataWriterQos wq;
  wq << dds::core::policy::Reliability::Reliable(dds::core::Duration::from_secs(1))
     << dds::core::policy::History::KeepAll();
  const std::vector<std::string> names{"GroupA", "GroupB"};
  std::vector<std::vector<dds::topic::Topic<FlightState>>> topics(3);
  std::vector<dds::sub::Subscriber> subs;
  std::vector<std::map<dds::core::InstanceHandle, std::size_t>> topic_of(3);
  std::vector<dds::sub::DataReader<FlightState>> readers;
  for (std::size_t m = 0; m < 3; ++m) {
    for (const auto& n : names)
      topics[m].emplace_back(stack.participant(m), n);
    subs.emplace_back(stack.participant(m), sq);
    for (std::size_t t = 0; t < 2; ++t) {
      readers.emplace_back(subs.back(), topics[m][t], keep_all());
      topic_of[m].emplace(readers.back().instance_handle(), t);
    }
  }
  dds::pub::Publisher pub(stack.participant(0), pq);
  std::vector<dds::pub::DataWriter<FlightState>> writers;
  for (std::size_t t = 0; t < 2; ++t)
    writers.emplace_back(pub, topics[0][t], wq);
  for (auto& w : writers)
    if (w.publication_matched_status().current_count() != 3)
      return "a group writer did not match the three readers when made";
  std::vector<std::vector<std::pair<std::size_t, std::uint64_t>>> got(3);
  std::vector<std::vector<std::size_t>> cuts(3);  // where each member's accesses ended in got
  auto read = [&](std::size_t m) {
    (void)read_group(subs[m], topic_of[m], got[m]);
    cuts[m].push_back(got[m].size());
  };
  std::vector<std::pair<std::size_t, std::uint64_t>> written;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> set_range;  // [first, last] stamp
  const auto total = rng.uniform(5, 60);
  const auto crash_at = rng.chance(300'000) ? rng.uniform(0, total) : total + 1;
  bool crashed = false;
  std::uint64_t stamp = 0;
  for (std::uint64_t step = 0; step < total && !crashed; ++step) {
    const bool in_set = rng.chance(400'000);
    const auto size = in_set ? rng.uniform(2, 5) : 1;
    std::optional<dds::pub::CoherentSet> cs;
    if (in_set) cs.emplace(pub);
    const auto first = stamp;
    std::vector<std::pair<std::size_t, std::uint64_t>> part;
    for (std::uint64_t k = 0; k < size; ++k) {
      if (step == crash_at && k == size / 2 && in_set) {
        crashed = true;
        break;
      }
      const auto t = static_cast<std::size_t>(rng.uniform(0, 1));
      FlightState s;
      s.aircraft_id(static_cast<std::uint32_t>(rng.uniform(1, 3)));
      s.timestamp_ns(stamp++);
      s.callsign("1");
      writers[t].write(s);
      part.emplace_back(t, s.timestamp_ns());
    }
    if (crashed) {
      stack.crash(0);
      cs.reset();
      break;
    }
    if (cs) {
      cs->end();
      set_range.emplace_back(first, stamp - 1);
    }
    written.insert(written.end(), part.begin(), part.end());
    for (auto k = rng.uniform(0, 20); k > 0; --k)
      (void)stack.net().step();
    for (std::size_t m = 1; m < 3; ++m)
      if (rng.chance(250'000)) read(m);
  }
  const std::size_t from = crashed ? 1 : 0;
  (void)stack.run_until([&] { return stack.view(1).members.size() == (crashed ? 2u : 3u); });
  // A crashed publisher's last samples reach the survivors up to the ragged edge: a prefix.
  const bool all = stack.run_until([&] {
    for (std::size_t m = from; m < 3; ++m)
      read(m);
    for (std::size_t m = from; m < 3; ++m)
      if (got[m].size() < written.size()) return false;
    return true;
  });
  if (crashed) {
    (void)stack.run_until([] { return false; }, std::chrono::milliseconds(5));
    for (std::size_t m = from; m < 3; ++m)
      read(m);
    if (got[1] != got[2]) return "the survivors read different sequences";
    if (got[1].size() > written.size() ||
        !std::equal(got[1].begin(), got[1].end(), written.begin()))
      return "the survivors read what the publisher did not write, or in another order";
    // Whole sets only: a set is read entirely or not at all.
    for (const auto& [a, b] : set_range) {
      const auto n = std::count_if(got[1].begin(), got[1].end(),
                                   [&](const auto& g) { return g.second >= a && g.second <= b; });
      if (n != 0 && static_cast<std::uint64_t>(n) != b - a + 1)
        return "a set of " + std::to_string(b - a + 1) + " arrived in part";
    }
    return split_sets(got, cuts, set_range, from);
  }
  if (!all) {
    return "not every member read every sample of " + std::to_string(written.size()) + ": " +
           std::to_string(got[0].size()) + ", " + std::to_string(got[1].size()) + ", " +
           std::to_string(got[2].size()) + (crashed ? " (member 1 crashed)" : "") + "; views " +
           std::to_string(stack.view(0).epoch) + " " + std::to_string(stack.view(1).epoch) + " " +
           std::to_string(stack.view(2).epoch) + "; halted '" + stack.halted(0) + "'";
  }
  for (std::size_t m = from; m < 3; ++m) {
    if (got[m] != written) {
      std::size_t i = 0;
      while (i < got[m].size() && i < written.size() && got[m][i] == written[i])
        ++i;
      auto show = [](const auto& v, std::size_t k) {
        return k < v.size() ? std::to_string(v[k].first) + ":" + std::to_string(v[k].second)
                            : std::string("(end)");
      };
      return "member " + std::to_string(m + 1) +
             " read another sequence than the publisher wrote (" + std::to_string(got[m].size()) +
             " samples of " + std::to_string(written.size()) + "; at " + std::to_string(i) +
             " it read " + show(got[m], i) + ", written " + show(written, i) + ")";
    }
  }
  for (const auto& [a, b] : set_range)
    if (b > a) ++coverage.group_sets;
  return split_sets(got, cuts, set_range, from);
}

// Runs `run` over the test's seeds (at least `floor`, more while `budget` lasts); returns how
// many it explored, which the coverage checks scale with.
template <class Seed>
std::uint64_t explore(Seed run, std::uint64_t default_count, std::uint64_t floor,
                      std::chrono::seconds budget, const char* tag) {
  auto seeds = sim::Seeds::from_env(default_count, floor, budget);
  for (const std::uint64_t seed : seeds) {
    std::string problem;
    try {
      problem = run(seed);
    } catch (const std::exception& e) {
      problem = std::string("threw: ") + e.what();
    }
    if (!problem.empty())
      FAIL("seed " << seed << ": " << problem << "\nreplay: " << sim::replay_command(seed, tag));
  }
  return seeds.explored();
}

}  // namespace

TEST_CASE("consistency: coherent sets arrive whole or not at all, cut by a crash anywhere",
          "[coherent]") {
  const auto n = explore(coherent_seed, 2000, 200, kBudget, "[coherent]");
  if (n >= 100) {
    CHECK(coverage.sets > n / 2);
    CHECK(coverage.cut_mid_set > n / 40);
  }
}

TEST_CASE("consistency: a GROUP publisher's topics are read in one order, sets whole", "[group]") {
  const auto n = explore(group_seed, 1000, 100, kBudget, "[group]");
  if (n >= 100) CHECK(coverage.group_sets > n / 2);
}

TEST_CASE("consistency: ordered readers take one sequence across instances", "[ordered]") {
  const auto n = explore(ordered_seed, 1000, 100, kBudget, "[ordered]");
  if (n >= 100) CHECK(coverage.samples > n * 10);
}
