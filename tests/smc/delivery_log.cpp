// Delivery-log checker (see delivery_log.hpp).
#include "delivery_log.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace spindle::testing {

namespace {
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
}  // namespace

std::uint32_t payload_size(std::uint64_t salt, std::uint32_t subgroup, std::uint32_t sender,
                           std::uint64_t index, std::uint32_t max_payload) {
  const std::uint64_t h = mix(salt ^ mix((std::uint64_t{subgroup} << 32) ^ sender) ^ mix(index));
  switch (h % 4) {
    case 0:
      return 1;
    case 1:
      return max_payload;
    default:
      return static_cast<std::uint32_t>(1 + (h >> 8) % max_payload);
  }
}

void fill_payload(std::span<std::byte> out, std::uint32_t subgroup, std::uint32_t sender,
                  std::uint64_t index) {
  std::uint64_t h = mix((std::uint64_t{subgroup} << 48) ^ (std::uint64_t{sender} << 32) ^ index);
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (i % 8 == 0) h = mix(h);
    out[i] = static_cast<std::byte>(h >> (8 * (i % 8)));
  }
}

std::uint32_t checksum(std::span<const std::byte> bytes) {
  std::uint32_t h = 2166136261u;
  for (auto b : bytes) {
    h ^= static_cast<std::uint32_t>(b);
    h *= 16777619u;
  }
  return h;
}

std::vector<std::string> check(const std::vector<SubgroupSpec>& subgroups,
                               const std::vector<NodeLog>& logs, bool complete) {
  std::vector<std::string> errors;
  auto fail = [&](std::string s) {
    if (errors.size() < 20) errors.push_back(std::move(s));
  };
  // What was sent: (subgroup, sender, index) -> record.
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint64_t>, Sent> sent;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint64_t> sent_count;
  for (const auto& log : logs) {
    for (const auto& s : log.sent) {
      if (!sent.emplace(std::tuple{s.subgroup, s.sender, s.index}, s).second)
        fail("node " + std::to_string(s.sender) + " logged message " + std::to_string(s.index) +
             " twice");
      sent_count[{s.subgroup, s.sender}] =
          std::max(sent_count[{s.subgroup, s.sender}], s.index + 1);
    }
  }
  for (std::uint32_t sg = 0; sg < subgroups.size(); ++sg) {
    const auto& spec = subgroups[sg];
    const std::vector<Delivered>* reference = nullptr;
    std::uint32_t reference_node = 0;
    std::vector<Delivered> mine;
    for (const auto& log : logs) {
      if (std::find(spec.members.begin(), spec.members.end(), log.node) == spec.members.end())
        continue;
      mine.clear();
      for (const auto& d : log.delivered)
        if (d.subgroup == sg) mine.push_back(d);
      const std::string who =
          "subgroup " + std::to_string(sg) + " node " + std::to_string(log.node) + ": ";
      // Per-sender FIFO, no gap, no duplicate, no phantom (null), intact payload.
      std::map<std::uint32_t, std::uint64_t> next;
      std::int64_t last_seq = -1;
      for (std::size_t k = 0; k < mine.size(); ++k) {
        const auto& d = mine[k];
        auto sit = std::find(spec.senders.begin(), spec.senders.end(), d.sender);
        if (sit == spec.senders.end()) {
          fail(who + "delivered a message from non-sender " + std::to_string(d.sender));
          continue;
        }
        auto& n = next[d.sender];
        if (d.index != n)
          fail(who + "from sender " + std::to_string(d.sender) + " expected index " +
               std::to_string(n) + ", delivered " + std::to_string(d.index) + " (position " +
               std::to_string(k) + ")");
        n = d.index + 1;
        auto it = sent.find({sg, d.sender, d.index});
        if (it == sent.end()) {
          fail(who + "delivered message " + std::to_string(d.index) + " of sender " +
               std::to_string(d.sender) + " that was never sent (a null?)");
        } else if (it->second.size != d.size || it->second.checksum != d.checksum) {
          fail(who + "payload of message " + std::to_string(d.index) + " from " +
               std::to_string(d.sender) + " differs from what was sent");
        }
        if (spec.atomic && d.seq >= 0) {
          if (d.seq <= last_seq)
            fail(who + "global seq not increasing at position " + std::to_string(k));
          const auto rank = static_cast<std::int64_t>(sit - spec.senders.begin());
          if (d.seq % static_cast<std::int64_t>(spec.senders.size()) != rank)
            fail(who + "seq " + std::to_string(d.seq) + " is not in sender " +
                 std::to_string(d.sender) + "'s round-robin column");
          last_seq = d.seq;
        }
      }
      if (complete) {
        for (auto s : spec.senders) {
          const auto want = sent_count.contains({sg, s}) ? sent_count[{sg, s}] : 0;
          if (next[s] != want)
            fail(who + "delivered " + std::to_string(next[s]) + " of " + std::to_string(want) +
                 " messages from sender " + std::to_string(s));
        }
      }
      // Identical order everywhere (atomic): every member's sequence is a prefix of the
      // longest one, and equal to it when complete.
      if (spec.atomic) {
        if (reference == nullptr) {
          reference = &log.delivered;
          reference_node = log.node;
        } else {
          std::vector<Delivered> ref;
          for (const auto& d : *reference)
            if (d.subgroup == sg) ref.push_back(d);
          const std::size_t common = std::min(ref.size(), mine.size());
          for (std::size_t k = 0; k < common; ++k) {
            if (ref[k].sender != mine[k].sender || ref[k].index != mine[k].index ||
                ref[k].seq != mine[k].seq) {
              fail(who + "order differs from node " + std::to_string(reference_node) +
                   " at position " + std::to_string(k));
              break;
            }
          }
          if (complete && ref.size() != mine.size())
            fail(who + "delivered " + std::to_string(mine.size()) + " messages, node " +
                 std::to_string(reference_node) + " " + std::to_string(ref.size()));
        }
      }
    }
  }
  return errors;
}

void write_log(const std::filesystem::path& file, const NodeLog& log) {
  std::ofstream out(file);
  out << "node " << log.node << '\n';
  for (const auto& s : log.sent)
    out << "S " << s.subgroup << ' ' << s.sender << ' ' << s.index << ' ' << s.size << ' '
        << s.checksum << '\n';
  for (const auto& d : log.delivered)
    out << "D " << d.subgroup << ' ' << d.sender << ' ' << d.index << ' ' << d.seq << ' ' << d.size
        << ' ' << d.checksum << '\n';
  if (!out) throw std::runtime_error("cannot write " + file.string());
}

NodeLog read_log(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw std::runtime_error("cannot read " + file.string());
  NodeLog log;
  std::string tag;
  in >> tag >> log.node;
  while (in >> tag) {
    if (tag == "S") {
      Sent s;
      in >> s.subgroup >> s.sender >> s.index >> s.size >> s.checksum;
      log.sent.push_back(s);
    } else if (tag == "D") {
      Delivered d;
      in >> d.subgroup >> d.sender >> d.index >> d.seq >> d.size >> d.checksum;
      log.delivered.push_back(d);
    } else {
      throw std::runtime_error(file.string() + ": bad record tag '" + tag + "'");
    }
  }
  return log;
}

std::filesystem::path log_path(const std::filesystem::path& dir, std::uint32_t i) {
  return dir / ("node" + std::to_string(i) + ".log");
}

std::vector<NodeLog> read_logs(const std::filesystem::path& dir, std::uint32_t n) {
  std::vector<NodeLog> logs;
  for (std::uint32_t i = 0; i < n; ++i)
    logs.push_back(read_log(log_path(dir, i)));
  return logs;
}

}  // namespace spindle::testing
