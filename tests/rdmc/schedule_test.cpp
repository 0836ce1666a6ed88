// The RDMC block schedules (rdmc/schedule.hpp), verified for every algorithm, every group
// size from 2 to 64 and a range of block counts: every member computes its own plan, and
// together the plans must be one consistent schedule — each send is the receive its peer
// planned in the same step, at most one send and one receive per member and step (the
// Step type), nobody sends a block before the step after it got it, every receiver gets
// every block exactly once, the sender none, and the schedule takes the steps its
// algorithm promises (the binomial pipeline: blocks + ⌈log2 n⌉ − 1 for a power of two,
// blocks + ⌊log2 n⌋ otherwise).
#include <bit>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "rdmc/schedule.hpp"

namespace rdmc = spindle::rdmc;
using rdmc::Algorithm;

namespace {

constexpr Algorithm kAll[] = {Algorithm::sequential, Algorithm::chain, Algorithm::binomial_tree,
                              Algorithm::binomial_pipeline};

std::uint32_t expected_steps(Algorithm a, std::uint32_t n, std::uint32_t k) {
  const auto floor_log = static_cast<std::uint32_t>(std::bit_width(n)) - 1;
  const auto ceil_log = static_cast<std::uint32_t>(std::bit_width(n - 1));
  switch (a) {
    case Algorithm::sequential:
      return k * (n - 1);
    case Algorithm::chain:
      return k + n - 2;
    case Algorithm::binomial_tree:
      return k * ceil_log;
    case Algorithm::binomial_pipeline:
      return std::has_single_bit(n) ? k + ceil_log - 1 : k + floor_log;
  }
  return 0;
}

// The first thing wrong with the plans of a group of n for k blocks, or "".
std::string verify(Algorithm a, std::uint32_t n, std::uint32_t k) {
  const std::string where = std::string(rdmc::to_string(a)) + ", " + std::to_string(n) +
                            " members, " + std::to_string(k) + " blocks: ";
  const auto steps = rdmc::total_steps(a, n, k);
  if (steps != expected_steps(a, n, k))
    return where + std::to_string(steps) + " steps, " + std::to_string(expected_steps(a, n, k)) +
           " expected";
  std::vector<std::vector<rdmc::Step>> plans;
  for (std::uint32_t r = 0; r < n; ++r) {
    plans.push_back(rdmc::plan(a, n, r, k));
    if (plans.back().size() != steps)
      return where + "rank " + std::to_string(r) + " plans another length";
  }
  // got[r][b]: the step rank r received block b at (-1: not yet; the sender has all).
  std::vector<std::vector<std::int64_t>> got(n, std::vector<std::int64_t>(k, -1));
  for (std::uint32_t b = 0; b < k; ++b)
    got[0][b] = -2;  // before step 0
  for (std::uint32_t s = 0; s < steps; ++s) {
    for (std::uint32_t r = 0; r < n; ++r) {
      const auto& st = plans[r][s];
      const std::string at = where + "step " + std::to_string(s) + ", rank " + std::to_string(r);
      if (st.send) {
        const auto [to, b] = *st.send;
        if (to >= n || to == r || b >= k) return at + ": sends out of range";
        if (got[r][b] == -1 || got[r][b] >= static_cast<std::int64_t>(s))
          return at + " sends block " + std::to_string(b) + " it does not have yet";
        const auto& peer = plans[to][s].receive;
        if (!peer || peer->peer != r || peer->block != b)
          return at + " sends block " + std::to_string(b) + " to rank " + std::to_string(to) +
                 ", which does not plan to receive it then";
      }
      if (st.receive) {
        const auto [from, b] = *st.receive;
        if (from >= n || from == r || b >= k) return at + ": receives out of range";
        const auto& peer = plans[from][s].send;
        if (!peer || peer->peer != r || peer->block != b)
          return at + " expects block " + std::to_string(b) + " from rank " + std::to_string(from) +
                 ", which does not send it then";
        if (r == 0) return at + ": the sender receives";
        if (got[r][b] != -1) return at + " receives block " + std::to_string(b) + " twice";
      }
    }
    for (std::uint32_t r = 0; r < n; ++r)
      if (const auto& rc = plans[r][s].receive) got[r][rc->block] = s;
  }
  for (std::uint32_t r = 1; r < n; ++r)
    for (std::uint32_t b = 0; b < k; ++b)
      if (got[r][b] == -1)
        return where + "rank " + std::to_string(r) + " never receives block " + std::to_string(b);
  return {};
}

}  // namespace

TEST_CASE("schedule: every algorithm is one consistent schedule for 2 to 64 members",
          "[schedule]") {
  std::size_t checked = 0;
  for (auto a : kAll) {
    for (std::uint32_t n = 2; n <= 64; ++n) {
      for (std::uint32_t k : {1u, 2u, 3u, 5u, 8u, 13u, 31u, 64u}) {
        const auto problem = verify(a, n, k);
        if (!problem.empty()) FAIL(problem);
        ++checked;
      }
    }
  }
  CHECK(checked == 4 * 63 * 8);
}

TEST_CASE("schedule: the binomial pipeline with one block is a binomial tree", "[schedule]") {
  // log2 n steps for a power of two (every member once), one more otherwise.
  CHECK(rdmc::total_steps(Algorithm::binomial_pipeline, 8, 1) == 3);
  CHECK(rdmc::total_steps(Algorithm::binomial_pipeline, 5, 1) == 3);
  CHECK(rdmc::total_steps(Algorithm::binomial_pipeline, 2, 1) == 1);
  // The sender injects a new block in every step until it has none left.
  const auto sender = rdmc::plan(Algorithm::binomial_pipeline, 16, 0, 10);
  for (std::uint32_t s = 0; s < 10; ++s) {
    INFO("step " << s);
    REQUIRE(sender[s].send);
    CHECK(sender[s].send->block == s);
    CHECK_FALSE(sender[s].receive);
  }
}

TEST_CASE("schedule: a plan names its algorithm and refuses what cannot be", "[schedule]") {
  for (auto a : kAll)
    CHECK(rdmc::parse_algorithm(rdmc::to_string(a)) == a);
  CHECK_FALSE(rdmc::parse_algorithm("binomial"));
  CHECK_THROWS_AS(rdmc::plan(Algorithm::chain, 4, 4, 1), std::invalid_argument);
  CHECK_THROWS_AS(rdmc::plan(Algorithm::chain, 4, 1, 0), std::invalid_argument);
  CHECK(rdmc::plan(Algorithm::binomial_pipeline, 1, 0, 5).empty());  // nobody to send to
}
