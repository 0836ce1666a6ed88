// What the engine delivers to its client (DCPS): one message of a subgroup, in delivery
// order. The group layer's own type, so that the layers above never include the protocol
// layers (smc/, sst/, rdmc/, transport headers); SMC delivers this very type
// (smc::Message is an alias), so nothing is converted on the way up.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

namespace spindle::group {

struct Message;

// Zero-copy receive (docs/dev/smc.md, "Pins"): where a message is delivered in place, in its
// sender's slot, the layers above may keep reading it after the upcall. pin(), called during
// the delivery upcall on the protocol thread, returns a hold: while any hold of a message
// lives (on any thread), its slot is not reused and the view it came in stays mapped. A
// sender's window counts pinned slots as in flight, so holds are for short loans:
// EngineClient::unpin() asks for the ones not lent out when a sender needs its slots.
// Null when the message cannot be held (the subgroup's ring is gone).
class Pins {
 public:
  virtual ~Pins() = default;
  [[nodiscard]] virtual std::shared_ptr<const void> pin(const Message& m) = 0;

 protected:
  Pins() = default;
  Pins(const Pins&) = default;
  Pins& operator=(const Pins&) = default;
};

// One delivered message; `payload` points into the SST (or RDMC's buffer) and is valid
// during the upcall only, unless it is pinned (Pins).
struct Message {
  std::uint32_t subgroup = 0;
  std::uint32_t sender = 0;       // its node id
  std::uint32_t sender_rank = 0;  // index in the subgroup's sender list
  std::uint64_t index = 0;        // the sender's count of real messages before this one
  std::int64_t seq = -1;          // global seq in atomic mode; -1 in unordered mode
  std::span<const std::byte> payload;
  std::uint32_t flags = 0;  // what the sender committed it with (commit()), kSlotNull aside
  // A listener (Subgroup::listeners): messages of this sender it skipped, overwritten before
  // it took them, since the last one it delivered; 0 elsewhere.
  std::uint64_t lost_before = 0;
  // Taken by a listener, on receipt: it may have been taken already in an earlier view (a
  // listener takes messages past the view change's trim, which their sender sends again).
  bool listened = false;
  // Where `payload` may be held past the upcall (Pins): its sender's slot, a large message's
  // RDMC buffer (group/large_pins.hpp) or a recipient's copy of one; null where it is valid
  // during the upcall only.
  Pins* pins = nullptr;
};

// What a node takes of a topic (Bus::want): nothing, every message, or only its own writers'
// messages, as they were delivered (with their places in the subgroup's order: a client keeps
// its writers' latest changes for repairs, dcps/repair.hpp). A wire value of the client link.
enum class Want : std::uint8_t { none = 0, all = 1, own = 2 };

}  // namespace spindle::group
