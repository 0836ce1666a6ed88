// RDMC block schedules (see schedule.hpp).
#include "rdmc/schedule.hpp"

#include <bit>
#include <map>
#include <stdexcept>
#include <string>

namespace spindle::rdmc {

namespace {

// ⌈log2 n⌉ and ⌊log2 n⌋ for n >= 1.
std::uint32_t log2_ceil(std::uint32_t n) noexcept {
  return n <= 1 ? 0 : static_cast<std::uint32_t>(std::bit_width(n - 1));
}
std::uint32_t log2_floor(std::uint32_t n) noexcept {
  return static_cast<std::uint32_t>(std::bit_width(n)) - 1;
}

// ------------------------------------------------------------------ closed-form schedules

Step sequential_step(std::uint32_t n, std::uint32_t rank, std::uint32_t k, std::uint32_t s) {
  Step st;
  const std::uint32_t to = 1 + s / k;
  const std::uint32_t block = s % k;
  if (rank == 0 && to < n) st.send = Transfer{to, block};
  if (rank == to) st.receive = Transfer{0, block};
  return st;
}

Step chain_step(std::uint32_t n, std::uint32_t rank, std::uint32_t k, std::uint32_t s) {
  Step st;
  // Block b leaves rank r at step b + r and reaches rank r + 1 then.
  if (rank + 1 < n && s >= rank && s - rank < k) st.send = Transfer{rank + 1, s - rank};
  if (rank >= 1 && s + 1 >= rank && s + 1 - rank < k) st.receive = Transfer{rank - 1, s + 1 - rank};
  return st;
}

Step tree_step(std::uint32_t n, std::uint32_t rank, std::uint32_t k, std::uint32_t s) {
  Step st;
  // Round i (steps i*k … i*k + k − 1): ranks below 2^i send every block to rank + 2^i.
  const std::uint32_t round = s / k;
  const std::uint32_t block = s % k;
  const std::uint32_t half = 1u << round;
  if (rank < half && rank + half < n) st.send = Transfer{rank + half, block};
  if (rank >= half && rank < 2 * half) st.receive = Transfer{rank - half, block};
  return st;
}

// ------------------------------------------------------------------- binomial pipeline

// The hypercube of dimension l = ⌊log2 n⌋: vertex v < 2^l is member v; members 2^l … n−1
// are the twins of vertices 1 … n − 2^l (the sender's vertex 0 has none).
class Pipeline {
 public:
  Pipeline(std::uint32_t n, std::uint32_t k)
      : n_(n), k_(k), l_(log2_floor(n)), cube_(1u << l_), vertex_steps_(k + l_ - 1) {}

  [[nodiscard]] std::uint32_t steps() const noexcept {
    return n_ == cube_ ? vertex_steps_ : vertex_steps_ + 1;
  }

  [[nodiscard]] std::vector<Step> plan(std::uint32_t rank) {
    const std::uint32_t v = vertex_of(rank);
    std::vector<Step> out(steps());
    const Pair& mine = pair(v);
    for (std::uint32_t s = 0; s < steps(); ++s) {
      Step& st = out[s];
      const auto& role = mine.roles[s];
      if (const auto o = vertex_send(v, s); o && rank == role.sender)
        st.send = Transfer{pair(o->first).roles[s].receiver, o->second};
      if (const auto in = vertex_receive(v, s); in && rank == role.receiver)
        st.receive = Transfer{pair(in->first).roles[s].sender, in->second};
      for (const auto& t : {role.up, role.down}) {
        if (!t) continue;
        if (t->from == rank) st.send = Transfer{t->to, t->block};
        if (t->to == rank) st.receive = Transfer{t->from, t->block};
      }
    }
    return out;
  }

 private:
  struct Intra {
    std::uint32_t from = 0;
    std::uint32_t to = 0;
    std::uint32_t block = 0;
  };
  // Per step: which member of a vertex sends its outgoing block and which takes its
  // incoming one, and the block the twins pass each other.
  struct Role {
    std::uint32_t sender = 0;
    std::uint32_t receiver = 0;
    std::optional<Intra> up;    // receiver -> sender
    std::optional<Intra> down;  // sender -> receiver, in a step with no traffic between vertices
  };
  struct Pair {
    std::vector<Role> roles;
  };

  [[nodiscard]] std::uint32_t vertex_of(std::uint32_t rank) const noexcept {
    return rank < cube_ ? rank : rank + 1 - cube_;
  }
  [[nodiscard]] std::optional<std::uint32_t> twin_of_vertex(std::uint32_t v) const noexcept {
    if (v == 0 || v + cube_ - 1 >= n_) return std::nullopt;
    return v + cube_ - 1;
  }

  // The vertex-level schedule (every vertex one member): (to, block) that vertex v sends
  // in step s. Across dimension j = s mod l to u = v ^ 2^j. Seen from u rotated so that
  // dimension j comes first: when u lacks bit j (it is "below" v across j), v hands it the
  // block it received l steps ago (the trade of the later stages); when u has bit j and
  // its next set bit, going up cyclically from j, is t dimensions away, the block u's tree
  // is due for is s + t − l; when u has no other bit (v is the sender), the next new
  // block. Past the last block the last one is repeated where needed.
  [[nodiscard]] std::optional<std::pair<std::uint32_t, std::uint32_t>> vertex_send(
      std::uint32_t v, std::uint32_t s) const noexcept {
    if (l_ == 0 || s >= vertex_steps_) return std::nullopt;
    const std::uint32_t j = s % l_;
    const std::uint32_t u = v ^ (1u << j);
    if (u == 0) return std::nullopt;  // nobody sends to the sender
    std::int64_t block = 0;
    if (((u >> j) & 1) == 0) {
      block = static_cast<std::int64_t>(s) - l_;
    } else {
      std::uint32_t t = 0;
      for (std::uint32_t i = 1; i < l_ && t == 0; ++i)
        if (((u >> ((j + i) % l_)) & 1) != 0) t = i;
      block = t == 0 ? static_cast<std::int64_t>(s) : static_cast<std::int64_t>(s) + t - l_;
    }
    if (block < 0) return std::nullopt;
    return std::pair{u, static_cast<std::uint32_t>(std::min<std::int64_t>(block, k_ - 1))};
  }
  // (from, block) that vertex v receives in step s.
  [[nodiscard]] std::optional<std::pair<std::uint32_t, std::uint32_t>> vertex_receive(
      std::uint32_t v, std::uint32_t s) const noexcept {
    if (l_ == 0 || s >= vertex_steps_) return std::nullopt;
    const std::uint32_t w = v ^ (1u << (s % l_));
    const auto o = vertex_send(w, s);
    if (!o || o->first != v) return std::nullopt;
    return std::pair{w, o->second};
  }

  // The roles in vertex v over every step: for a single member, itself; for twins a and b,
  // replayed from the vertex's own traffic (which depends on v alone), so every member
  // computes any vertex's roles alike. The twin holding the block the vertex sends in a
  // step sends it (a when both do); the other takes the vertex's incoming block and passes
  // its partner the highest block the partner lacks. In a step where the vertex sends
  // nothing, the twin with more blocks counts as the sender; when nothing comes in either,
  // the twins also pass each other a block the other way round.
  const Pair& pair(std::uint32_t v) {
    if (const auto it = pairs_.find(v); it != pairs_.end()) return it->second;
    Pair p;
    p.roles.resize(steps());
    const auto twin = twin_of_vertex(v);
    if (!twin) {
      for (auto& r : p.roles)
        r.sender = r.receiver = v;
      return pairs_.emplace(v, std::move(p)).first->second;
    }
    const std::uint32_t a = v;
    const std::uint32_t b = *twin;
    std::vector<char> has_a(k_, 0), has_b(k_, 0);
    auto has = [&](std::uint32_t m) -> std::vector<char>& { return m == a ? has_a : has_b; };
    auto count = [](const std::vector<char>& h) {
      std::uint32_t c = 0;
      for (char x : h)
        c += x != 0 ? 1u : 0u;
      return c;
    };
    // The highest block `from` has and `to` lacks.
    auto lacking = [&](std::uint32_t from, std::uint32_t to) -> std::optional<std::uint32_t> {
      for (std::uint32_t blk = k_; blk-- > 0;)
        if (has(from)[blk] != 0 && has(to)[blk] == 0) return blk;
      return std::nullopt;
    };
    for (std::uint32_t s = 0; s < steps(); ++s) {
      Role& r = p.roles[s];
      const auto out = vertex_send(v, s);
      const auto in = vertex_receive(v, s);
      if (out) {
        r.sender = has_a[out->second] != 0 ? a : b;
      } else {
        r.sender = count(has_a) >= count(has_b) ? a : b;
      }
      r.receiver = r.sender == a ? b : a;
      if (const auto blk = lacking(r.receiver, r.sender)) r.up = Intra{r.receiver, r.sender, *blk};
      if (!out && !in)
        if (const auto blk = lacking(r.sender, r.receiver))
          r.down = Intra{r.sender, r.receiver, *blk};
      // Apply the step (decided above from the state before it).
      if (in) has(r.receiver)[in->second] = 1;
      for (const auto& t : {r.up, r.down})
        if (t) has(t->to)[t->block] = 1;
    }
    return pairs_.emplace(v, std::move(p)).first->second;
  }

  std::uint32_t n_;
  std::uint32_t k_;
  std::uint32_t l_;
  std::uint32_t cube_;
  std::uint32_t vertex_steps_;
  std::map<std::uint32_t, Pair> pairs_;
};

}  // namespace

std::string_view to_string(Algorithm a) noexcept {
  switch (a) {
    case Algorithm::sequential:
      return "sequential";
    case Algorithm::chain:
      return "chain";
    case Algorithm::binomial_tree:
      return "binomial_tree";
    case Algorithm::binomial_pipeline:
      return "binomial_pipeline";
  }
  return "?";
}

std::optional<Algorithm> parse_algorithm(std::string_view name) noexcept {
  for (auto a : {Algorithm::sequential, Algorithm::chain, Algorithm::binomial_tree,
                 Algorithm::binomial_pipeline})
    if (to_string(a) == name) return a;
  return std::nullopt;
}

std::uint32_t total_steps(Algorithm a, std::uint32_t members, std::uint32_t blocks) noexcept {
  if (members <= 1 || blocks == 0) return 0;
  switch (a) {
    case Algorithm::sequential:
      return blocks * (members - 1);
    case Algorithm::chain:
      return blocks + members - 2;
    case Algorithm::binomial_tree:
      return blocks * log2_ceil(members);
    case Algorithm::binomial_pipeline: {
      const std::uint32_t l = log2_floor(members);
      return blocks + l - ((1u << l) == members ? 1 : 0);
    }
  }
  return 0;
}

std::vector<Step> plan(Algorithm a, std::uint32_t members, std::uint32_t rank,
                       std::uint32_t blocks) {
  if (rank >= members)
    throw std::invalid_argument("rdmc: rank " + std::to_string(rank) + " of a group of " +
                                std::to_string(members));
  if (blocks == 0) throw std::invalid_argument("rdmc: a message of no blocks");
  if (a == Algorithm::binomial_pipeline) {
    if (members <= 1) return {};
    return Pipeline(members, blocks).plan(rank);
  }
  std::vector<Step> out(total_steps(a, members, blocks));
  for (std::uint32_t s = 0; s < out.size(); ++s) {
    switch (a) {
      case Algorithm::sequential:
        out[s] = sequential_step(members, rank, blocks, s);
        break;
      case Algorithm::chain:
        out[s] = chain_step(members, rank, blocks, s);
        break;
      case Algorithm::binomial_tree:
        out[s] = tree_step(members, rank, blocks, s);
        break;
      case Algorithm::binomial_pipeline:
        break;
    }
  }
  return out;
}

}  // namespace spindle::rdmc
