// Delivery-log checker: every process records what it sent and what it delivered; the
// checker proves, per subgroup, identical delivery order at every member (atomic),
// per-sender FIFO with no gap and no duplicate, no message that was never sent (so no
// null is ever delivered), intact payloads, and — when the run completed — that every
// member delivered every message sent.
//
// Threading: plain values; record from one thread (the predicate thread's upcall), check
// after the run. Logs are also written to and read from files (one record a line) so a
// multi-process test can check them after its children exit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace spindle::testing {

struct Sent {
  std::uint32_t subgroup = 0;
  std::uint32_t sender = 0;  // node id (SMC logs) or writer id (DCPS logs)
  std::uint64_t index = 0;
  std::uint32_t size = 0;
  std::uint32_t checksum = 0;
};

struct Delivered {
  std::uint32_t subgroup = 0;
  std::uint32_t sender = 0;  // node id (SMC logs) or writer id (DCPS logs)
  std::uint64_t index = 0;
  // SMC's global sequence number; -1 where the logger cannot see it (a DCPS reader): the
  // identical order of an atomic subgroup is then checked by (sender, index) alone.
  std::int64_t seq = -1;
  std::uint32_t size = 0;
  std::uint32_t checksum = 0;
};

struct NodeLog {
  std::uint32_t node = 0;
  std::vector<Sent> sent;
  std::vector<Delivered> delivered;
};

struct SubgroupSpec {
  std::vector<std::uint32_t> members;
  std::vector<std::uint32_t> senders;
  bool atomic = true;
};

// Deterministic payload for (subgroup, sender, index): size in [1, max] and bytes.
std::uint32_t payload_size(std::uint64_t salt, std::uint32_t subgroup, std::uint32_t sender,
                           std::uint64_t index, std::uint32_t max_payload);
void fill_payload(std::span<std::byte> out, std::uint32_t subgroup, std::uint32_t sender,
                  std::uint64_t index);
std::uint32_t checksum(std::span<const std::byte> bytes);

// Returns human-readable violations (empty = all good); `complete` demands that every sent
// message was delivered by every member of its subgroup.
std::vector<std::string> check(const std::vector<SubgroupSpec>& subgroups,
                               const std::vector<NodeLog>& logs, bool complete);

void write_log(const std::filesystem::path& file, const NodeLog& log);
NodeLog read_log(const std::filesystem::path& file);
// The logs `dir`/node0.log ... node<n-1>.log of a multi-process run.
std::filesystem::path log_path(const std::filesystem::path& dir, std::uint32_t i);
std::vector<NodeLog> read_logs(const std::filesystem::path& dir, std::uint32_t n);

}  // namespace spindle::testing
