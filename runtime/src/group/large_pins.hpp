// Zero-copy receive of messages larger than a slot (group::Pins for RDMC's buffers;
// docs/dev/rdmc.md, "Under DCPS", "Loans"). A large message is delivered in its RDMC
// buffer, in its descriptor's place; the layers above may pin it during the upcall, and its
// buffer then stays out of RDMC's reuse until the last hold ends, on any thread. The
// protocol thread releases it to RDMC at its next look (take_released()).
//
// A group's messages leave RDMC in order, and its sender may run at most rdmc::kHeaders
// messages past the oldest one a member has not released: a held message holds its sender
// back. As SMC does for its slots, once a sender has run three quarters of that past a held
// message, the layers above are asked once to let go of what they hold without lending it
// out (relief(): EngineClient::unpin).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "group/message.hpp"

namespace spindle::group {

class LargePins final : public Pins {
 public:
  // A message: its RDMC group and number there.
  using Key = std::pair<std::uint32_t, std::uint64_t>;

  LargePins() = default;
  LargePins(const LargePins&) = delete;
  LargePins& operator=(const LargePins&) = delete;
  ~LargePins() override = default;

  // Control thread, before the view runs: what each hold keeps alive (the view whose
  // buffers it reads) and how a hold's end wakes the protocol thread (any thread).
  void set_owner(const std::weak_ptr<void>& owner, std::function<void()> wake);

  // Protocol thread, around one delivery upcall: each large message of the batch that may be
  // held (offer()), then, after the upcall, whether it was (settle(): the keys nobody holds,
  // for the caller to release now). A message in buffer space RDMC does not manage (a
  // member alone in its subgroup keeps its own bytes) is offered with those bytes' owner:
  // a hold keeps that instead, and nothing is released.
  void offer(const Message& m, Key key, std::shared_ptr<const void> bytes = nullptr);
  [[nodiscard]] std::vector<Key> settle();

  // During the upcall, for a message offered.
  [[nodiscard]] std::shared_ptr<const void> pin(const Message& m) override;

  // Protocol thread: the messages whose last hold ended since the last call.
  [[nodiscard]] std::vector<Key> take_released();
  // Protocol thread: the subgroups whose readers should let go of what they hold without
  // lending it out: where the newest message delivered in a group is three quarters of
  // rdmc::kHeaders past the oldest one held (once per such held message).
  [[nodiscard]] std::vector<std::uint32_t> relief();

  // Messages held now (protocol thread's count).
  [[nodiscard]] std::size_t held() const noexcept { return pinned_.size(); }

 private:
  // Shared with every hold, which may outlive this object's view.
  struct Shared {
    std::mutex mu;
    std::vector<Key> released;  // under mu
    std::atomic<bool> any{false};
    std::function<void()> wake;
  };
  // The last hold of one message: tells the protocol thread, then lets the view go.
  struct Held {
    Held(std::shared_ptr<Shared> s, std::shared_ptr<void> o, Key k)
        : shared(std::move(s)), owner(std::move(o)), key(k) {}
    Held(const Held&) = delete;
    Held& operator=(const Held&) = delete;
    ~Held();
    std::shared_ptr<Shared> shared;
    std::shared_ptr<void> owner;
    Key key;
  };
  struct Offered {
    std::uint32_t subgroup = 0;
    std::uint32_t sender_rank = 0;
    std::uint64_t index = 0;
    Key key;
    std::shared_ptr<const void> bytes;  // set: not RDMC's (kept alive by a hold)
    std::shared_ptr<Held> held;         // set once pinned
  };

  std::shared_ptr<Shared> shared_ = std::make_shared<Shared>();
  std::weak_ptr<void> owner_;
  std::vector<Offered> offered_;  // the current upcall's
  // Held messages (protocol thread's view: those whose end it has not taken yet), with their
  // subgroup; the newest message delivered per group; the held message relief was last
  // asked for per group.
  std::map<Key, std::uint32_t> pinned_;
  std::map<std::uint32_t, std::uint64_t> newest_;
  std::map<std::uint32_t, std::uint64_t> relieved_for_;
};

}  // namespace spindle::group
