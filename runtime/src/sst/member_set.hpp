// A set of members of a view, one bit per SST rank: who is suspected, who a proposal
// removes, who is left behind in a subgroup. A fixed width (kMaxMembers bits, four words)
// so that the SST columns that carry one have a size known before the view is: a view of
// any size up to kMaxMembers reads and writes the same columns, and a small view pays four
// words where it paid one (docs/membership.md, "The view's size").
//
// In the SST a set is kWords monotonic words (bits only appear), each stored and loaded
// on its own with release/acquire (Sst::store_set, Sst::load_set). A reader may see some
// words of a newer value and some of an older one; since bits only appear, what it reads
// is a set between the two, as a one-word read of a growing set always was.
//
// Plain value type; no threading of its own.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>

namespace spindle::sst {

class MemberSet {
 public:
  static constexpr std::size_t kBits = 256;
  static constexpr std::size_t kWords = kBits / 64;

  constexpr MemberSet() noexcept = default;
  [[nodiscard]] static constexpr MemberSet of(std::size_t rank) noexcept {
    MemberSet s;
    s.set(rank);
    return s;
  }

  // Ranks at or past kBits are in no set (set() ignores them).
  [[nodiscard]] constexpr bool test(std::size_t rank) const noexcept {
    return rank < kBits && ((words_[rank / 64] >> (rank % 64)) & 1) != 0;
  }
  constexpr MemberSet& set(std::size_t rank) noexcept {
    if (rank < kBits) words_[rank / 64] |= std::uint64_t{1} << (rank % 64);
    return *this;
  }
  [[nodiscard]] constexpr bool any() const noexcept {
    for (const auto w : words_)
      if (w != 0) return true;
    return false;
  }
  [[nodiscard]] constexpr bool none() const noexcept { return !any(); }
  [[nodiscard]] constexpr std::size_t count() const noexcept {
    std::size_t c = 0;
    for (const auto w : words_)
      c += static_cast<std::size_t>(std::popcount(w));
    return c;
  }

  [[nodiscard]] constexpr std::uint64_t word(std::size_t i) const noexcept { return words_[i]; }
  constexpr void set_word(std::size_t i, std::uint64_t w) noexcept { words_[i] = w; }

  constexpr MemberSet& operator|=(const MemberSet& o) noexcept {
    for (std::size_t i = 0; i < kWords; ++i)
      words_[i] |= o.words_[i];
    return *this;
  }
  constexpr MemberSet& operator&=(const MemberSet& o) noexcept {
    for (std::size_t i = 0; i < kWords; ++i)
      words_[i] &= o.words_[i];
    return *this;
  }
  // Every rank not in the set, up to kBits (callers look at the ranks of their view only).
  [[nodiscard]] constexpr MemberSet operator~() const noexcept {
    MemberSet s;
    for (std::size_t i = 0; i < kWords; ++i)
      s.words_[i] = ~words_[i];
    return s;
  }
  [[nodiscard]] friend constexpr MemberSet operator|(MemberSet a, const MemberSet& b) noexcept {
    return a |= b;
  }
  [[nodiscard]] friend constexpr MemberSet operator&(MemberSet a, const MemberSet& b) noexcept {
    return a &= b;
  }
  [[nodiscard]] friend constexpr bool operator==(const MemberSet&,
                                                 const MemberSet&) noexcept = default;

 private:
  std::array<std::uint64_t, kWords> words_{};
};

// The most members a view holds: the width of its member sets.
inline constexpr std::size_t kMaxMembers = MemberSet::kBits;

}  // namespace spindle::sst
