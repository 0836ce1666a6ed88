// Names for the contract's enums, and the futex doorbell.
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <ctime>

#include <spindle/transport/doorbell.hpp>
#include <spindle/transport/transport.hpp>

namespace spindle::transport {

WriteBatchResult Transport::write_batch(NodeId peer, std::span<const WriteOp> ops) {
  WriteBatchResult r;
  for (const auto& op : ops) {
    r.status = write(peer, op.local, op.local_offset, op.remote, op.remote_offset, op.length);
    if (r.status != Status::ok) return r;
    ++r.posted;
  }
  return r;
}

std::string_view to_string(Status s) noexcept {
  switch (s) {
    case Status::ok:
      return "ok";
    case Status::retry:
      return "retry";
    case Status::peer_suspected:
      return "peer_suspected";
    case Status::invalid:
      return "invalid";
    case Status::closed:
      return "closed";
  }
  return "unknown";
}

std::string_view to_string(SuspicionReason r) noexcept {
  switch (r) {
    case SuspicionReason::connection_lost:
      return "connection_lost";
    case SuspicionReason::heartbeat_timeout:
      return "heartbeat_timeout";
    case SuspicionReason::connect_timeout:
      return "connect_timeout";
    case SuspicionReason::peer_left:
      return "peer_left";
    case SuspicionReason::malformed_frame:
      return "malformed_frame";
    case SuspicionReason::unknown_region:
      return "unknown_region";
    case SuspicionReason::out_of_bounds:
      return "out_of_bounds";
    case SuspicionReason::truncated_frame:
      return "truncated_frame";
    case SuspicionReason::block_overflow:
      return "block_overflow";
    case SuspicionReason::completion_error:
      return "completion_error";
    case SuspicionReason::link_cut:
      return "link_cut";
    case SuspicionReason::crashed:
      return "crashed";
    case SuspicionReason::mismatch:
      return "mismatch";
    case SuspicionReason::no_progress:
      return "no_progress";
    case SuspicionReason::foreign_write:
      return "foreign_write";
    case SuspicionReason::revoked:
      return "revoked";
  }
  return "unknown";
}

namespace {
long futex(std::atomic<std::uint32_t>* word, int op, std::uint32_t val,
           const timespec* timeout) noexcept {
  // std::atomic<uint32_t> is layout-compatible with uint32_t (static_assert'ed lock-free).
  return syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), op, val, timeout, nullptr, 0);
}
}  // namespace

void Doorbell::ring() noexcept {
  data_->seq.fetch_add(1);
  if (data_->waiters.load() != 0) {
    (void)futex(&data_->seq, shared_ ? FUTEX_WAKE : FUTEX_WAKE_PRIVATE, INT_MAX, nullptr);
  }
}

void Doorbell::ring_all() noexcept {
  data_->seq.fetch_add(1);
  (void)futex(&data_->seq, shared_ ? FUTEX_WAKE : FUTEX_WAKE_PRIVATE, INT_MAX, nullptr);
}

void Doorbell::wait(std::uint32_t ticket, std::chrono::nanoseconds timeout) noexcept {
  if (timeout.count() <= 0) return;
  data_->waiters.fetch_add(1);
  wait_quiet(ticket, timeout);
  data_->waiters.fetch_sub(1);
}

void Doorbell::wait_quiet(std::uint32_t ticket, std::chrono::nanoseconds timeout) noexcept {
  if (timeout.count() <= 0 || data_->seq.load() != ticket) return;
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(timeout.count() / 1'000'000'000);
  ts.tv_nsec = static_cast<long>(timeout.count() % 1'000'000'000);
  (void)futex(&data_->seq, shared_ ? FUTEX_WAIT : FUTEX_WAIT_PRIVATE, ticket, &ts);
}

void Doorbell::arm(bool armed) noexcept {
  if (armed) {
    data_->waiters.fetch_add(1);
  } else {
    data_->waiters.fetch_sub(1);
  }
}

}  // namespace spindle::transport
