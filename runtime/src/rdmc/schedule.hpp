// RDMC block schedules (DESIGN §6; the RDMC paper, §3 and Appendix A): which block each
// member of a multicast group sends to whom, and receives from whom, at each step, for a
// message cut into `blocks` blocks that rank 0 (the sender) holds. In every step a member
// sends at most one block and receives at most one, every receiver gets every block exactly
// once, and nobody sends a block before it has it. Each member computes its own part only
// (plan()), from the group size, its rank and the block count — no global state, no gossip.
//
//   sequential         the sender sends the whole message to each receiver in turn:
//                      blocks × (n − 1) steps
//   chain              a bucket brigade 0 → 1 → … → n−1, one block behind the other:
//                      blocks + n − 2 steps
//   binomial tree      the whole message along a binomial tree, one doubling per round:
//                      blocks × ⌈log2 n⌉ steps
//   binomial pipeline  blocks along binomial trees embedded in a hypercube of dimension
//                      l = ⌊log2 n⌋: in step s every vertex trades one block with its
//                      neighbour across dimension s mod l (the sender injects a new block
//                      each step, the others relay the highest-numbered block their
//                      neighbour lacks): blocks + l − 1 steps when n is a power of two.
//                      Otherwise vertices 1 … n − 2^l hold two members ("twins"): in a step
//                      where the vertex sends, the twin holding that block sends it and
//                      the other receives the vertex's incoming block and passes its partner
//                      a block only it has; one more step completes them: blocks + l.
//
// For n = 8 and 3 blocks (a, b, c) the pipeline runs (vertex → vertex: block):
//
//   step 0 (dim 0)   0→1 a
//   step 1 (dim 1)   0→2 b   1→3 a
//   step 2 (dim 2)   0→4 c   1→5 a   2→6 b   3→7 a
//   step 3 (dim 0)   0→1 c   2→3 b   3→2 a   4→5 c   5→4 a   6→7 b   7→6 a
//   step 4 (dim 1)   0→2 c   1→3 c   3→1 b   4→6 c   5→7 c   6→4 b   7→5 b
//
// 3 + 3 − 1 = 5 steps; the last ones trade in both directions across each edge.
//
// Threading: pure functions over values.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace spindle::rdmc {

enum class Algorithm : std::uint8_t { sequential, chain, binomial_tree, binomial_pipeline };

[[nodiscard]] std::string_view to_string(Algorithm a) noexcept;
// "sequential", "chain", "binomial_tree" or "binomial_pipeline"; nullopt otherwise.
[[nodiscard]] std::optional<Algorithm> parse_algorithm(std::string_view name) noexcept;

// One block between this member and a peer (ranks in the group; 0 is the sender).
struct Transfer {
  std::uint32_t peer = 0;
  std::uint32_t block = 0;
  friend bool operator==(const Transfer&, const Transfer&) = default;
};

// What one member does in one step.
struct Step {
  std::optional<Transfer> send;
  std::optional<Transfer> receive;
  friend bool operator==(const Step&, const Step&) = default;
};

// The steps a message of `blocks` blocks takes to reach every one of `members` members.
[[nodiscard]] std::uint32_t total_steps(Algorithm a, std::uint32_t members,
                                        std::uint32_t blocks) noexcept;

// Rank `rank`'s part of the schedule: total_steps() entries, one per step. Throws
// std::invalid_argument when rank >= members or blocks == 0.
[[nodiscard]] std::vector<Step> plan(Algorithm a, std::uint32_t members, std::uint32_t rank,
                                     std::uint32_t blocks);

}  // namespace spindle::rdmc
