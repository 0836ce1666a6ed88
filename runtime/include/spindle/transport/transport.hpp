// The transport contract: what SST, SMC, RDMC and membership may assume about the wire
// (DESIGN §3). One abstract class, four implementations (tcp, shm, rdma, in-memory
// simulator); protocol code is written against `Transport` only.
//
// Threading: a transport is owned by one participant. The control plane (create_region,
// connect, disconnect, destruction) is called from one control thread, never concurrently
// with itself. The data plane (write, send_block, post_receive, poll, activity, wait,
// local_region) may be called from any thread, concurrently with other data-plane calls;
// implementations lock per peer internally. The control plane must not run while
// data-plane calls are in flight (a view change quiesces the data path first). Per-peer
// write ordering (below) holds for
// writes posted by one thread in program order; posts to one peer from several threads are
// ordered by whichever post returned first.
//
// Lifecycle for one view:
//
//   create_region(id, size) ...   register local memory (SST copy, SMC slots, RDMC buffers)
//   connect(members, epoch)       connect pairwise; exchange region descriptors
//   write / send_block / poll     data path; failures arrive as Suspicion events
//   disconnect()                  tear the view down; regions stay, connect() again
//
// Memory model. Region memory is written by peers while the owner reads it. A peer's
// writes become visible in the order they were posted to this node: every write is
// applied after a release fence, so a reader that observes a value written by write N
// through an acquire load (std::atomic_ref<T>::load(acquire)) also observes every byte of
// writes 0..N-1 from that peer. Bytes inside ONE write have no defined order: put data and
// the guard counter that publishes it in two writes. Nothing is ordered across peers.
//
// Rows belong to their owners. A region may be restricted (restrict_writes(), before
// connect()): each member is granted the byte ranges its one-sided writes may touch (in the
// SST, its own row; in RDMC's control region, its own counters). A peer's write that does
// not lie wholly inside one of its ranges is never applied: it is a Suspicion of the WRITER
// (SuspicionReason::foreign_write, the detail naming region, offset, length and the ranges
// allowed), never of whoever owns the bytes it aimed at, and nothing more of the writer is
// read. What each transport enforces:
//   tcp   the receiver checks every WRITE frame before a byte is applied, stops reading the
//         stream and closes it 500 ms later (so its suspicion reaches the other members
//         before the writer, finding the stream closed, accuses it: docs/membership.md);
//   sim   the receiver checks every write when it lands (Network::forge_write() injects one);
//   rdma  one memory region per peer covering only its ranges, its own rkeys handed to it
//         alone, so the NIC refuses the rest: nothing else can be reached. The refusal
//         breaks the queue pair; the receiver sees the connection lost (connection_lost,
//         not foreign_write), the writer a completion error;
//   shm   the writer checks its own writes against its grant (a buggy peer); a hostile
//         process of the same user can map and write any segment: shm's trust boundary is
//         the user account (docs/transport-shm.md).
// Regions never restricted accept writes anywhere from every member of the view.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace spindle::transport {

using NodeId = std::uint32_t;
using RegionId = std::uint32_t;

// Where a member can be reached. tcp/rdma use host + port; shm and the simulator need only
// the id (shm segments are named from the id and the configured namespace).
struct NodeAddress {
  NodeId id = 0;
  std::string host;
  std::uint16_t port = 0;
  // Set for a member joining with this view: connect() does not wait for it (tcp, shm),
  // it connects in the background for at most this long, and PeerConnected says when it
  // did (see connect()). One that never comes must hold nobody. 0: a member connect()
  // waits for, up to the call's timeout.
  std::chrono::milliseconds connect_within{0};
  // What the member proves at connect() (tcp: in its HELLO), given by the join port when it
  // joined; a stream that claims the member without it is not bound to it. A member finds
  // its own in its entry. 0: none (members listed in a domain file).
  std::uint64_t nonce = 0;
  // In a secured domain (docs/security.md): the certificate subject (RFC 4514, canonical) the
  // view records for the member; a transport that authenticates its streams (tcp) binds a
  // stream to the member only if the peer's certificate has this subject. Empty: none.
  std::string subject{};
};

// "host:port", as errors and logs name an address.
inline std::string address_of(const NodeAddress& a) {
  return a.host + ":" + std::to_string(a.port);
}

// When connect() gives up on member `m`: the call's `deadline`, or sooner where its
// connect_within says so (`start`: when connect() began).
template <class Time>
[[nodiscard]] Time give_up_on(const NodeAddress& m, Time start, Time deadline) {
  return m.connect_within.count() > 0 ? std::min<Time>(deadline, start + m.connect_within)
                                      : deadline;
}

// A setting every member of a domain must share (protocol version, engine.slot_size, ...),
// as its name and its value in text. Transports that handshake exchange the list and refuse
// a peer whose list differs (SuspicionReason::mismatch); they compare, never interpret.
struct AgreedSetting {
  std::string name;
  std::string value;
  friend bool operator==(const AgreedSetting&, const AgreedSetting&) = default;
};

// A peer's registered region as seen by a writer after connect().
struct RegionDescriptor {
  RegionId id = 0;
  std::uint64_t size = 0;
  std::uint64_t remote_addr = 0;  // rdma: owner's virtual address; 0 elsewhere
  std::uint32_t rkey = 0;         // rdma: remote key; 0 elsewhere
};

// Result of every data-path call, classified by what the caller must do (STYLE 6).
enum class Status : std::uint8_t {
  ok,              // posted; ordering and visibility rules apply
  retry,           // back-pressure: peer queue full. Try again after poll()/wait()
  peer_suspected,  // peer is suspected or not in the view: stop using it, let the view change
  invalid,         // caller bug (unknown region, out of bounds, too large): give up
  closed,          // this transport has been shut down (or crashed, in the simulator)
};
[[nodiscard]] std::string_view to_string(Status s) noexcept;

// Why a peer became suspected. Malformed input names the field in Suspicion::detail.
enum class SuspicionReason : std::uint8_t {
  connection_lost,    // stream/QP broke (peer died, reset, EOF)
  heartbeat_timeout,  // nothing heard from the peer within the configured timeout
  connect_timeout,    // peer did not join within connect()'s deadline
  peer_left,          // peer said goodbye (clean disconnect)
  malformed_frame,    // garbage header: bad type, flags, check word or handshake
  unknown_region,     // frame names a region we never registered
  out_of_bounds,      // offset/length outside the region or over a limit
  truncated_frame,    // stream ended inside a frame
  block_overflow,     // block larger than the posted receive
  completion_error,   // rdma: error work completion
  link_cut,           // simulator: link cut by the test
  crashed,            // simulator: peer crashed
  mismatch,           // peer is in another domain or a must-agree setting differs
  no_progress,        // group layer: its counters stood still while others' went on
  foreign_write,      // peer wrote outside the ranges granted to it (another's row)
  revoked,            // group layer: its certificate was revoked (security.crl)
};
[[nodiscard]] std::string_view to_string(SuspicionReason r) noexcept;

struct Suspicion {
  NodeId peer = 0;
  SuspicionReason reason = SuspicionReason::connection_lost;
  std::string detail;  // human-readable: field, values, errno text
};

// A block (two-sided send) landed in a receive posted with post_receive(), or where the
// block placer said (place_blocks(): `placed`, no posted receive was used).
struct BlockReceived {
  NodeId peer = 0;
  RegionId region = 0;
  std::uint64_t offset = 0;
  std::uint32_t length = 0;
  std::uint32_t immediate = 0;
  bool placed = false;
};

// Where a block may land straight away (Transport::place_blocks): a local region and an
// offset with room for it.
struct BlockPlace {
  RegionId region = 0;
  std::uint64_t offset = 0;
};
// Given the block's sender, immediate and length: its place, or nullopt for the oldest
// receive posted for that sender.
using BlockPlacer = std::function<std::optional<BlockPlace>(NodeId peer, std::uint32_t immediate,
                                                            std::uint32_t length)>;

// The source of a send_block() may be reused.
struct BlockSent {
  NodeId peer = 0;
  std::uint32_t immediate = 0;
};

// A member that connect() left to connect in the background (NodeAddress::connect_within)
// is connected now: writes to it are taken from here on.
struct PeerConnected {
  NodeId peer = 0;
};

using Event = std::variant<Suspicion, BlockReceived, BlockSent, PeerConnected>;

// One write of a batch (Transport::write_batch): the arguments of one write() call.
struct WriteOp {
  RegionId local = 0;
  std::uint64_t local_offset = 0;
  RegionId remote = 0;
  std::uint64_t remote_offset = 0;
  std::size_t length = 0;
};

struct WriteBatchResult {
  std::size_t posted = 0;      // ops[0, posted) were posted, in order
  Status status = Status::ok;  // why ops[posted] was not; ok when all were
};

// Bytes [offset, offset + length) of a region.
struct ByteRange {
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  friend bool operator==(const ByteRange&, const ByteRange&) = default;
};

// What share_rows() needs of a row to keep it in place: its offset and length are multiples
// of this (a page).
inline constexpr std::size_t kRowAlign = 4096;

// What one member's one-sided writes may touch in a restricted region (restrict_writes).
struct WriteGrant {
  NodeId writer = 0;
  std::vector<ByteRange> ranges;  // any order; overlapping or adjacent ranges are merged
};

// A local region: memory peers write into, and the source of our own writes. Aligned to
// 64 bytes, zero-filled at creation, valid until the transport is destroyed.
struct LocalRegion {
  RegionId id = 0;
  std::span<std::byte> bytes;
};

class Transport {
 public:
  Transport() = default;
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;
  virtual ~Transport() = default;

  [[nodiscard]] virtual NodeId self() const noexcept = 0;
  [[nodiscard]] virtual std::string_view kind() const noexcept = 0;

  // --- control plane (one control thread) -------------------------------------------
  // Registers `size` bytes under `id`. Throws std::runtime_error with an actionable message
  // on resource errors (shm name in use, registration refused) or a duplicate id.
  virtual LocalRegion create_region(RegionId id, std::size_t size) = 0;
  // Frees region `id` (its memory, its registration, its name) once no view uses it: call
  // it while disconnected, when the connections of the views that used it are closed. An
  // id not registered is ignored. Every view registers a region of its own, so a member
  // that goes through many views releases the old ones (group::Engine does).
  virtual void release_region(RegionId id) = 0;
  // Region `id` is no view's any more and nothing of this process reads or writes it (the
  // view that used it ended and nothing holds it), but release_region() must wait for the
  // next disconnect: a transport may free its memory now, while connected to a later view.
  // Its address range stays valid (what is read there is unspecified) until release_region.
  // shm drops its segment here, with the peers' rows mapped into it; the others wait.
  virtual void retire_region(RegionId /*id*/) {}

  // Restricts one-sided writes into local region `id` (created, not yet released) to the
  // ranges granted: a member may write only inside its own grant, a member without one
  // nowhere; blocks (send_block) are not affected. Replaces any earlier restriction of `id`;
  // release_region() drops it. Call it while disconnected, before the connect() of the view
  // that uses the region. The declaration is the view's, made alike by every member (the
  // SST layout is the same everywhere), so the grant of self() also says where this node may
  // write into its peers' copies of the region (shm checks that before it writes). Throws
  // std::invalid_argument for an unknown region or a range outside it, std::logic_error
  // while connected. See "Rows belong to their owners" above.
  virtual void restrict_writes(RegionId id, std::span<const WriteGrant> grants) = 0;

  // Declares the rows of region `id` (created, not yet connected): each grant is one
  // member's row, a single range that only it writes, and every member declares the same.
  // It restricts writes as restrict_writes() does. Beyond that, a transport whose peers map
  // each other's memory (shm) may keep each row once, at its owner: a peer's row is then read
  // where it lies, and a write() of our own row to such a peer copies nothing and only wakes
  // it (docs/transport-shm.md, "Rows in place"). That needs rows that start and end on
  // kRowAlign boundaries; a transport that cannot, or a peer that did not declare them,
  // keeps copies. Either way a peer sees our row's bytes after our write() of them, in the
  // order of the memory model above: in place, it sees them as soon as we store them, so
  // the owner stores data before the guard that publishes it (release), as the SST does.
  // Rows so declared belong to the view connected next: after disconnect() each side keeps
  // reading the peers' rows as they ended, but a peer no longer maps them (a later view
  // declares a region of its own, as the SST's does).
  virtual void share_rows(RegionId id, std::span<const WriteGrant> rows) {
    restrict_writes(id, rows);
  }
  // Whether share_rows() may keep rows in place here (shm, and auto with its shm half): a
  // layer that would declare a region of every member's rows only to read them in place
  // (RDMC's message buffers) asks first, and keeps its own layout where the answer is no.
  [[nodiscard]] virtual bool keeps_rows_in_place() const noexcept { return false; }
  // Whether `peer`'s row of region `id` (declared with share_rows()) is read where it lies,
  // at the peer, in the view connected: both declared the rows alike and the peer is
  // connected (not connecting()). Symmetric: where it is, the peer reads ours in place too.
  // Any thread, after connect().
  [[nodiscard]] virtual bool row_in_place(NodeId /*peer*/, RegionId /*id*/) const { return false; }
  // After share_rows(): the peers' rows of region `id` that are in place stay mapped here past
  // disconnect(), until retire_region() or release_region(), instead of becoming copies in
  // our own memory. For rows too large to copy at every view change that something may read
  // after the view ended (RDMC's message buffers, which loans hold): the peer's memory lives
  // until every process that mapped its row let go. Call it while disconnected.
  virtual void keep_rows_mapped(RegionId /*id*/) {}
  // create_region() and share_rows() in one step, for a region whose rows are known when it
  // is made (the SST's): a transport that keeps rows in place (shm) then never maps the whole
  // region, not even for the moment between the two calls.
  virtual LocalRegion create_rows_region(RegionId id, std::size_t size,
                                         std::span<const WriteGrant> rows) {
    auto region = create_region(id, size);
    share_rows(id, rows);
    return region;
  }

  // Connects to every other member pairwise (members includes self) and exchanges region
  // descriptors. Returns ok when all peers are connected; otherwise peer_suspected, and a
  // Suspicion(connect_timeout or the cause) is queued for each missing peer.
  //
  // A member joining with this view (NodeAddress::connect_within set) holds nobody: where
  // connecting(peer) says so, connect() returned without it and goes on connecting to it in
  // the background for connect_within (or the timeout, whichever is shorter). Until then
  // writes, blocks and receives for it are refused with retry and remote_region() has
  // nothing; once connected, a PeerConnected event says so. One that never comes is left
  // to the layer above (the SST suspects it when its heartbeat never starts). tcp, shm
  // and rdma do so; a transport that does not waits for it in connect() like any member;
  // the simulator returns at once for every member and holds writes until their target
  // joined.
  [[nodiscard]] virtual Status connect(std::span<const NodeAddress> members,
                                       std::uint64_t view_epoch,
                                       std::chrono::milliseconds timeout) = 0;

  // Whether connect() left `peer` to connect in the background and it has not yet (see
  // connect()); true only for a member of the view connected. Any thread, after connect().
  // The default: never (a transport that waits for every member).
  [[nodiscard]] virtual bool connecting(NodeId /*peer*/) const { return false; }

  // Closes every connection of the current view (peers see peer_left) and drops events
  // not yet polled. Never blocks longer than the implementation's linger bound (well under
  // a second). Regions stay registered.
  virtual void disconnect() = 0;

  // --- data plane (any thread) -------------------------------------------------------
  [[nodiscard]] virtual std::optional<RegionDescriptor> remote_region(NodeId peer,
                                                                      RegionId id) const = 0;
  [[nodiscard]] virtual std::optional<LocalRegion> local_region(RegionId id) const = 0;

  // One-sided: copy `length` bytes at `local_offset` of local region `local` into peer's
  // region `remote` at `remote_offset`. tcp, shm and the simulator copy the source before
  // returning; rdma's NIC reads it until the write completes, which monotonic data (SST
  // rows, counters) tolerates — copy anything else to a staging region first.
  [[nodiscard]] virtual Status write(NodeId peer, RegionId local, std::uint64_t local_offset,
                                     RegionId remote, std::uint64_t remote_offset,
                                     std::size_t length) = 0;

  // Several writes to one peer in one call: posts ops in order, exactly as that many write()
  // calls would, and stops at the first one refused. Returns how many were posted and the
  // status of the first refused op (ok when all were). Frame-based transports send the
  // posted ops together (tcp: one send for an SST flush instead of one per write); the
  // default just calls write() per op.
  [[nodiscard]] virtual WriteBatchResult write_batch(NodeId peer, std::span<const WriteOp> ops);

  // Two-sided: sends `length` bytes with a 32-bit immediate; it lands in the oldest receive
  // the peer posted for us. Blocks to one peer arrive in the order sent; relative to writes
  // they are not ordered (rdma carries them on a queue pair of their own). A block with no
  // posted receive waits for one (on tcp it also holds back later writes), so post
  // receives ahead (RDMC's ready_for_block). BlockSent: the source may be reused.
  [[nodiscard]] virtual Status send_block(NodeId peer, RegionId local, std::uint64_t offset,
                                          std::uint32_t length, std::uint32_t immediate) = 0;
  [[nodiscard]] virtual Status post_receive(NodeId peer, RegionId local, std::uint64_t offset,
                                            std::uint32_t capacity) = 0;
  // Zero-copy two-sided receive: a transport that sees a block's immediate before it copies
  // the block out (shm: the ring's record) asks `placer` where it goes, and lands it there
  // instead of in a posted receive (BlockReceived::placed); the posted receives stay for the
  // blocks it has no place for. The placer runs on the thread that calls poll(), within it.
  // `owner` names who set it: a null placer clears it only if `owner` set the current one.
  // Transports that match receives as blocks arrive (tcp, rdma) ignore it.
  virtual void place_blocks(const void* owner, BlockPlacer placer) {
    (void)owner;
    (void)placer;
  }

  // Appends pending events (suspicions, block completions) to `out`; never blocks. A
  // transport whose streams the polling thread reads itself does so first (receive()).
  virtual std::size_t poll(std::vector<Event>& out) = 0;
  // For a thread that spins waiting for peers' writes, at each turn: a transport whose
  // streams are read by the thread that waits (tcp: docs/transport-tcp.md, "Who reads a
  // stream") applies what arrived now, with no other thread woken; the others need nothing
  // (their writes land by themselves). Never blocks; any thread.
  virtual void receive() {}
  // The thread that called receive() or poll() while it spun stops for now, without sleeping
  // on this transport's wake-up source (wait() and wait_quiet() say it themselves): it goes
  // back to the application, or sleeps elsewhere. The transport's own thread reads again.
  virtual void stop_polling() noexcept {}

  // Wake-up source (DESIGN §9). activity() is a ticket that changes whenever a peer's
  // write or block lands here, an event is queued, or send back-pressure eases. Take the
  // ticket, check your predicates, then wait(ticket, ...) — it returns at once if anything
  // happened since the ticket, so no wake-up is lost.
  [[nodiscard]] virtual std::uint64_t activity() const noexcept = 0;
  virtual void wait(std::uint64_t ticket, std::chrono::nanoseconds timeout) = 0;
  // Rings this node's own wake-up source: a local event (an application's commit, a
  // membership request) that a thread in wait() or wait_quiet() must see. Changes
  // activity(). Any thread; one wake-up call.
  virtual void notify() noexcept = 0;

  // Quiet sleeps, for a thread that stands by while another runs the protocol (an
  // application thread driving the predicate loop, sst/predicate_loop.hpp). wait_quiet()
  // sleeps like wait() but peers' writes do not wake it: only notify(), its timeout, or a
  // peer's write while a waiter is armed do. arm_waiter(true) counts one waiter on the
  // quiet sleeper's behalf, so every ring from then on wakes it; arm_waiter(false) takes
  // that count back (calls balance). A peer's write then costs its writer no wake-up call
  // while the standby sleeps. The defaults: wait_quiet() is wait() (every ring wakes it,
  // spurious returns being allowed) and arming does nothing.
  virtual void wait_quiet(std::uint64_t ticket, std::chrono::nanoseconds timeout) {
    wait(ticket, timeout);
  }
  virtual void arm_waiter(bool /*armed*/) noexcept {}
};

}  // namespace spindle::transport
