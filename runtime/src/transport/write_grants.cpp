// Grants of one-sided writes per writer and region (see write_grants.hpp).
#include "transport/write_grants.hpp"

#include <algorithm>
#include <stdexcept>

namespace spindle::transport {

void WriteGrants::restrict(RegionId id, std::uint64_t size, std::span<const WriteGrant> grants) {
  std::map<NodeId, std::vector<ByteRange>> table;
  for (const auto& g : grants) {
    auto& v = table[g.writer];
    for (const auto& r : g.ranges) {
      if (r.offset > size || r.length > size - r.offset) {
        throw std::invalid_argument("restrict_writes: node " + std::to_string(g.writer) +
                                    "'s range [" + std::to_string(r.offset) + ", +" +
                                    std::to_string(r.length) + ") lies outside region " +
                                    std::to_string(id) + " of " + std::to_string(size) + " bytes");
      }
      if (r.length > 0) v.push_back(r);
    }
  }
  for (auto& [writer, v] : table) {
    std::sort(v.begin(), v.end(),
              [](const ByteRange& a, const ByteRange& b) { return a.offset < b.offset; });
    std::vector<ByteRange> merged;
    for (const auto& r : v) {
      if (!merged.empty() && r.offset <= merged.back().offset + merged.back().length) {
        auto& m = merged.back();
        m.length = std::max(m.offset + m.length, r.offset + r.length) - m.offset;
      } else {
        merged.push_back(r);
      }
    }
    v = std::move(merged);
  }
  regions_[id] = std::move(table);
}

std::span<const ByteRange> WriteGrants::ranges(NodeId writer, RegionId id) const noexcept {
  const auto r = regions_.find(id);
  if (r == regions_.end()) return {};
  const auto w = r->second.find(writer);
  if (w == r->second.end()) return {};
  return w->second;
}

bool WriteGrants::allows(NodeId writer, RegionId id, std::uint64_t offset,
                         std::uint64_t length) const noexcept {
  const auto r = regions_.find(id);
  if (r == regions_.end()) return true;
  const auto w = r->second.find(writer);
  if (w == r->second.end()) return false;
  const auto& v = w->second;
  // The last range starting at or before `offset` is the only one that can hold it.
  auto it = std::upper_bound(v.begin(), v.end(), offset,
                             [](std::uint64_t o, const ByteRange& b) { return o < b.offset; });
  if (it == v.begin()) return false;
  --it;
  const std::uint64_t in = offset - it->offset;
  return in <= it->length && length <= it->length - in;
}

std::string WriteGrants::refusal(NodeId writer, RegionId id, std::uint64_t offset,
                                 std::uint64_t length) const {
  std::string s = "write of [" + std::to_string(offset) + ", +" + std::to_string(length) +
                  ") into region " + std::to_string(id);
  const auto v = ranges(writer, id);
  if (v.empty()) return s + ", where node " + std::to_string(writer) + " may write nothing";
  s += " outside what node " + std::to_string(writer) + " may write there:";
  std::size_t shown = 0;
  for (const auto& r : v) {
    if (shown++ == 8) {
      s += " ... (" + std::to_string(v.size()) + " ranges)";
      break;
    }
    s += (shown == 1 ? " [" : ", [") + std::to_string(r.offset) + ", +" + std::to_string(r.length) +
         ")";
  }
  return s;
}

}  // namespace spindle::transport
