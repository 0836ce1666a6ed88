// TCP transport implementation (see <spindle/transport/tcp.hpp> for the model and the
// threading rules, frame.hpp for the wire format).
//
// Connection set-up: the member with the higher id connects to the one with the lower id
// and sends HELLO first; the lower one answers with its HELLO once its own connect() for
// that view epoch has started (a HELLO for a later epoch is parked until then, an earlier
// one is refused). A stream is established when both HELLOs crossed; data frames only
// follow that. A HELLO names the sender's domain and its must-agree settings; a peer whose
// differ is refused with both values named (the listener still answers with its own HELLO
// before it closes, so the dialer can name them too).
//
// Hostile or broken strangers: an accepted stream holds a small buffer until a valid HELLO
// binds it to a member, and is closed if none came within hello_timeout. The acceptor backs
// off briefly and keeps accepting when descriptors run out (EMFILE, ENFILE).
//
// Secured streams (TcpConfig::security, secure_stream.hpp): a stream first runs a TLS 1.3
// handshake in handshake units, written by the I/O thread alone (Conn::hs_out); then the
// dialer sends its HELLO. Frames queue in clear in Peer::pending as before and are sealed
// into Peer::wire under the peer's mutex just before they go to the socket, by whichever
// thread sends them; the I/O thread opens records into the decoder's buffer.
//
// Receiving in place (docs/transport-tcp.md, "Who reads a stream"): once a plain stream is
// established, its socket leaves the I/O thread's reactor for an epoll set of our own
// (rx_ep_). Whoever holds rx_mu_ serves that set: a thread that polls the transport while it
// spins (receive(), poll()), or the I/O thread, which watches the set through a second one
// (io_ep_) that holds rx_ep_ only while no thread spins. So a spinning protocol thread reads
// its peers' frames itself and no other thread wakes on the way; the thread that stops
// spinning to sleep (wait(), wait_quiet(), stop_polling()) puts rx_ep_ back in io_ep_ with
// one epoll_ctl, and the I/O thread wakes only where a frame is there to read. The I/O
// thread still sends a stream's backlog (raw sends; EPOLLOUT in rx_ep_ says when there is
// room again) and closes it.
// Boost 1.74's C++20 coroutine support uses std::exchange without including <utility>.
#include <utility>

#include <boost/asio.hpp>

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <future>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>

#include <spindle/transport/doorbell.hpp>
#include <spindle/transport/forwarding_impl.hpp>
#include <spindle/transport/tcp.hpp>

#include "frame.hpp"
#include "secure_stream.hpp"
#include "security/credentials.hpp"
#include "transport/aligned_buffer.hpp"
#include "transport/event_queue.hpp"
#include "transport/write_grants.hpp"

namespace spindle::transport {

namespace asio = boost::asio;
using asio::ip::tcp;
using Clock = std::chrono::steady_clock;
using tcp_frames::FrameDecoder;

class tcp_detail::Impl {
 public:
  struct Conn;

  struct Posted {
    RegionId region;
    std::uint64_t offset;
    std::uint32_t capacity;
  };

  struct Peer {
    NodeAddress addr;
    std::uint64_t epoch = 0;
    std::mutex mu;
    // Guarded by mu.
    std::vector<std::byte> pending;  // frames waiting for the I/O thread
    // Secured streams: seals pending into wire, the sealed bytes not yet sent.
    std::unique_ptr<tcp_secure::Sealer> seal;
    std::vector<std::byte> wire;
    [[nodiscard]] std::size_t queued() const noexcept { return pending.size() + wire.size(); }
    bool writing = false;  // the I/O thread owns the write loop
    bool blocked = false;  // a caller saw retry: ring the doorbell on drain
    bool established = false;
    bool suspected = false;
    bool closing = false;          // GOODBYE queued; close once flushed
    bool retired = false;          // view gone: report nothing more about it
    Clock::time_point deadline{};  // connect() gives up on it then (connect_within)
    bool background = false;       // joining: connect() does not wait for it (connecting())
    int fd = -1;                   // the stream's socket for direct sends; -1 once closing
    Clock::time_point last_post{};
    int burst = 0;                   // frames posted within kBurstGap of each other
    std::atomic<bool> heard{false};  // a frame from the peer was read since our last post
    std::map<RegionId, RegionDescriptor> remote;
    std::deque<Posted> posted;
    std::weak_ptr<Conn> conn;
    std::optional<asio::ip::address> ip;  // addr.host resolved by connect(), if it resolved
    std::string resolve_error;
  };

  // A stream whose peer wrote outside its ranges is read no more and closed this much later.
  static constexpr std::chrono::milliseconds kRefusedLinger{500};

  // Until a HELLO binds a stream to a member, it reads through this much buffer only.
  static constexpr std::size_t kHandshakeBuffer = 4096;

  // One stream. Lives on the I/O thread; kept alive by its pending handlers and conns_.
  struct Conn final : tcp_frames::FrameSink, std::enable_shared_from_this<Conn> {
    Conn(Impl& i, tcp::socket s) : impl(i), sock(std::move(s)), dec(i.cfg_.max_block) {
      rbuf.resize(kHandshakeBuffer);
    }
    Impl& impl;
    tcp::socket sock;
    FrameDecoder dec;
    std::shared_ptr<Peer> peer;  // null until the HELLO binds it
    std::vector<std::byte> rbuf;
    std::size_t rstart = 0, rend = 0;
    std::vector<std::byte> inflight;
    std::size_t sent = 0;  // of inflight, on a stream read in place (raw sends)
    // closed: I/O thread writes; read by the threads that serve rx_ep_ too. paused: written
    // under rx_mu_ once the stream is read in place.
    std::atomic<bool> closed{false}, paused{false};
    bool goodbye = false, active = false;
    // Read in place (rx_ep_): the socket left asio (fd is ours now). Under rx_mu_: gone
    // (nothing more is read; close() is on its way), and the events it is watched for.
    bool in_place = false;
    int fd = -1;
    bool gone = false;
    bool want_out = false;
    std::uint32_t watched = 0;
    [[nodiscard]] int handle() { return in_place ? fd : sock.native_handle(); }
    tcp_frames::Hello hello;
    bool got_hello = false;
    Clock::time_point opened = Clock::now();
    Clock::time_point last_rx = opened;
    Clock::time_point parked_at{};  // its HELLO waits for our connect() (park())
    std::uint64_t pending_block_imm = 0;
    std::uint32_t pending_block_len = 0;
    Posted pending_block_target{};
    // Secured streams only (secure != false): the bytes read from the socket, the handshake
    // while it runs and what it sends, and the keys after it (seal moves to the Peer when
    // the stream is bound). I/O thread only.
    bool secure = false;
    std::vector<std::byte> net;
    std::size_t nstart = 0, nend = 0;
    std::unique_ptr<tcp_secure::Handshake> tls;
    std::size_t hs_received = 0;
    std::vector<std::byte> hs_out, hs_inflight;
    bool hs_writing = false;
    bool hs_done = false;
    bool hello_due = false;  // dialer: HELLO goes once the handshake's last bytes are out
    std::string subject;     // the peer certificate's, once the handshake checked it
    std::unique_ptr<tcp_secure::Sealer> seal;
    std::unique_ptr<tcp_secure::Opener> open;

    std::span<std::byte> region(RegionId id) override {
      if (!peer) return {};
      auto it = impl.regions_.find(id);
      return it == impl.regions_.end() ? std::span<std::byte>{} : it->second.span();
    }
    std::string refuse_write(RegionId id, std::uint64_t offset, std::uint32_t length) override {
      if (!peer || impl.grants_.allows(peer->addr.id, id, offset, length)) return {};
      return impl.grants_.refusal(peer->addr.id, id, offset, length);
    }
    void on_hello(const tcp_frames::Hello& h) override {
      got_hello = true;
      hello = h;
    }
    BlockTarget on_block_begin(std::uint32_t length, std::uint32_t immediate) override {
      if (!peer) return BlockTarget{false, true, {}, 0};
      std::lock_guard lock(peer->mu);
      if (peer->posted.empty()) return BlockTarget{};
      const Posted p = peer->posted.front();
      if (length > p.capacity) return BlockTarget{false, true, {}, p.capacity};
      peer->posted.pop_front();
      pending_block_imm = immediate;
      pending_block_len = length;
      pending_block_target = p;
      auto& mem = impl.regions_.at(p.region);
      return BlockTarget{true, false, mem.span().subspan(p.offset, length), p.capacity};
    }
    void on_block_end() override {
      impl.push_event(peer.get(), BlockReceived{peer->addr.id, pending_block_target.region,
                                                pending_block_target.offset, pending_block_len,
                                                static_cast<std::uint32_t>(pending_block_imm)});
    }
    void on_goodbye() override { goodbye = true; }
  };

  explicit Impl(TcpConfig cfg)
      : cfg_(std::move(cfg)),
        acceptor_(io_),
        work_(asio::make_work_guard(io_)),
        heartbeat_(io_),
        accept_pause_(io_),
        sweep_(io_),
        doorbell_(cfg_.doorbell != nullptr ? cfg_.doorbell : &bell_, cfg_.doorbell != nullptr),
        rx_desc_(io_),
        rx_timer_(io_) {
    if (auto why = tcp_frames::check_settings(cfg_.must_agree); !why.empty())
      throw std::invalid_argument("tcp: must_agree: " + why);
    const std::string host = !cfg_.bind.empty()       ? cfg_.bind
                             : cfg_.self.host.empty() ? "127.0.0.1"
                                                      : cfg_.self.host;
    std::string why;
    const auto ip = resolve(host, why);
    if (!ip) {
      throw std::system_error(std::make_error_code(std::errc::invalid_argument),
                              "tcp: cannot resolve this node's host '" + host + "': " + why);
    }
    tcp::endpoint ep(*ip, cfg_.self.port);
    acceptor_.open(ep.protocol());
    acceptor_.set_option(tcp::acceptor::reuse_address(true));
    acceptor_.bind(ep);
    acceptor_.listen();
    port_ = acceptor_.local_endpoint().port();
    accept();
    arm_sweep();
    open_receive_sets();
    thread_ = std::thread([this] { io_.run(); });
  }

  ~Impl() {
    if (connected_) disconnect();
    asio::post(io_, [this] {
      boost::system::error_code ec;
      acceptor_.close(ec);
      heartbeat_.cancel();
      accept_pause_.cancel();
      sweep_.cancel();
      rx_timer_.cancel();
      rx_desc_.close(ignored_);  // io_ep_
      for (auto& t : std::vector(lingers_))
        t->cancel();
      stopping_ = true;  // a sweep already due must not arm itself again
      auto conns = conns_;
      for (auto& c : conns)
        close(c);
      std::lock_guard lock(mu_);
      for (auto& c : parked_)
        close(c);
      parked_.clear();
    });
    // Every socket is closed, so each pending handler runs once (aborted) and run() returns.
    work_.reset();
    thread_.join();
    if (rx_ep_ >= 0) ::close(rx_ep_);
  }

  // ------------------------------------------------------------------ control plane
  LocalRegion create_region(RegionId id, std::size_t size) {
    if (connected_) throw std::logic_error("tcp: create_region while connected; disconnect first");
    auto [it, inserted] = regions_.emplace(id, AlignedBuffer{});
    if (!inserted) throw std::invalid_argument("tcp: region " + std::to_string(id) + " exists");
    it->second = AlignedBuffer(size);
    return LocalRegion{id, it->second.span()};
  }

  LocalRegion adopt_region(RegionId id, std::span<std::byte> memory) {
    if (connected_) throw std::logic_error("tcp: adopt_region while connected; disconnect first");
    auto [it, inserted] = regions_.emplace(id, AlignedBuffer::borrow(memory));
    if (!inserted) throw std::invalid_argument("tcp: region " + std::to_string(id) + " exists");
    return LocalRegion{id, it->second.span()};
  }

  void release_region(RegionId id) {
    if (connected_) throw std::logic_error("tcp: release_region while connected; disconnect first");
    regions_.erase(id);
    grants_.release(id);
  }

  void restrict_writes(RegionId id, std::span<const WriteGrant> grants) {
    if (connected_)
      throw std::logic_error("tcp: restrict_writes while connected; disconnect first");
    const auto it = regions_.find(id);
    if (it == regions_.end())
      throw std::invalid_argument("tcp: restrict_writes: no region " + std::to_string(id));
    grants_.restrict(id, it->second.size(), grants);
  }

  Status connect(std::span<const NodeAddress> members, std::uint64_t epoch,
                 std::chrono::milliseconds timeout) {
    if (connected_) disconnect();
    const auto deadline = Clock::now() + timeout;
    // Names resolve here, on the control thread, never on the I/O thread. Only the members
    // we dial need an address.
    std::map<NodeId, std::shared_ptr<Peer>> peers;
    for (const auto& m : members) {
      if (m.id == cfg_.self.id) {
        self_nonce_ = m.nonce;  // what our HELLOs prove (read by the I/O thread after this)
        continue;
      }
      auto p = std::make_shared<Peer>();
      p->addr = m;
      p->epoch = epoch;
      p->deadline = give_up_on(m, Clock::now(), deadline);
      p->background = m.connect_within.count() > 0;
      if (m.id < cfg_.self.id) p->ip = resolve(m.host, p->resolve_error);
      peers.emplace(m.id, std::move(p));
    }
    {
      std::lock_guard lock(mu_);
      epoch_ = epoch;
      parked_for_ = std::max<Clock::duration>(kParkedFor, timeout);
      peers_ = std::move(peers);
      connected_ = true;
      descriptors_.clear();
      for (const auto& [id, buf] : regions_)
        descriptors_.push_back({id, buf.size(), 0, 0});
    }
    asio::post(io_, [this] {
      std::lock_guard lock(mu_);
      for (auto& [id, p] : peers_) {
        if (id > cfg_.self.id) continue;
        start_connect(p, p->deadline);  // we are the higher id: we dial
      }
      auto parked = std::move(parked_);
      parked_.clear();
      for (auto& c : parked)
        bind_passive(c);
      arm_heartbeat();
    });
    std::unique_lock lock(mu_);
    auto all_done = [&] {
      const auto now = Clock::now();
      return std::all_of(peers_.begin(), peers_.end(), [now](auto& kv) {
        std::lock_guard pl(kv.second->mu);
        return kv.second->established || kv.second->suspected || kv.second->background ||
               now >= kv.second->deadline;
      });
    };
    // Notifiers do not hold mu_, so re-check every few milliseconds instead of trusting
    // one notification.
    while (!all_done() && Clock::now() < deadline) {
      cv_.wait_for(lock, std::chrono::milliseconds(5));
    }
    Status result = Status::ok;
    for (auto& [id, p] : peers_) {
      std::unique_lock pl(p->mu);
      if (p->established) continue;
      // A joiner connects in the background (PeerConnected); the SST suspects it if it
      // never does.
      if (p->background && !p->suspected) continue;
      result = Status::peer_suspected;
      if (p->suspected) continue;
      pl.unlock();
      if (auto r = refused_hellos_.find(id); r != refused_hellos_.end()) {
        const std::string why = r->second;
        refused_hellos_.erase(r);
        raise(p, SuspicionReason::malformed_frame, "node " + std::to_string(id) + ": " + why);
        continue;
      }
      raise(p, SuspicionReason::connect_timeout,
            "no connection to node " + std::to_string(id) + " at " + p->addr.host + ":" +
                std::to_string(p->addr.port) + " within the connect timeout");
    }
    return result;
  }

  void disconnect() {
    std::map<NodeId, std::shared_ptr<Peer>> peers;
    {
      std::lock_guard lock(mu_);
      if (!connected_) return;
      peers = peers_;
      for (auto& [id, p] : peers) {
        std::lock_guard pl(p->mu);
        p->retired = true;
        if (p->established && !p->suspected) {
          tcp_frames::encode_header(p->pending, {tcp_frames::FrameType::goodbye, 0, 0, 0});
          p->closing = true;
        }
      }
    }
    // Let GOODBYEs drain for a bounded time, then close whatever is left.
    auto done = std::make_shared<std::promise<void>>();
    auto fut = done->get_future();
    asio::post(io_, [this, peers] {
      for (auto& [id, p] : peers)
        kick(p);
    });
    const auto linger = Clock::now() + std::chrono::milliseconds(200);
    while (Clock::now() < linger) {
      bool flushed = true;
      for (auto& [id, p] : peers) {
        std::lock_guard pl(p->mu);
        if (p->closing && (p->writing || p->queued() != 0)) flushed = false;
      }
      if (flushed) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    asio::post(io_, [this, peers, done] {
      for (auto& [id, p] : peers) {
        std::shared_ptr<Conn> c;
        {
          std::lock_guard pl(p->mu);
          c = p->conn.lock();
          p->conn.reset();
          p->established = false;
        }
        if (c) close(c);
      }
      heartbeat_.cancel();
      done->set_value();
    });
    fut.wait();
    std::lock_guard lock(mu_);
    peers_.clear();
    connected_ = false;
    events_.clear();
  }

  // ------------------------------------------------------------------ data plane
  std::shared_ptr<Peer> find(NodeId id) const {
    auto it = peers_.find(id);  // peers_ only changes in connect/disconnect (see header)
    return it == peers_.end() ? nullptr : it->second;
  }

  Status write(NodeId peer, RegionId local, std::uint64_t local_offset, RegionId remote,
               std::uint64_t remote_offset, std::size_t length) {
    const WriteOp op{local, local_offset, remote, remote_offset, length};
    return write_batch(peer, std::span<const WriteOp>(&op, 1)).status;
  }

  // Every op's frame goes into the peer's queue under one lock, then one flush: a batch
  // leaves in one send. The statuses are those of write() called per op, in order.
  WriteBatchResult write_batch(NodeId peer, std::span<const WriteOp> ops) {
    if (ops.empty()) return {};
    // The source of an op, or nothing when it is not a registered range.
    auto source = [&](const WriteOp& op) -> const std::byte* {
      auto src = regions_.find(op.local);
      if (src == regions_.end() || !in_bounds(op.local_offset, op.length, src->second.size()) ||
          op.length > UINT32_MAX) {
        return nullptr;
      }
      return src->second.data() + op.local_offset;
    };
    // write() checks our own side before the peer.
    const std::byte* const first = source(ops[0]);
    if (first == nullptr) return {0, Status::invalid};
    auto p = find(peer);
    if (!p) return {0, Status::peer_suspected};
    WriteBatchResult res;
    std::lock_guard lock(p->mu);
    if (p->suspected || p->closing) return {0, Status::peer_suspected};
    if (!p->established) return {0, p->background ? Status::retry : Status::peer_suspected};
    for (; res.posted < ops.size(); ++res.posted) {
      const auto& op = ops[res.posted];
      const std::byte* from = res.posted == 0 ? first : source(op);
      auto r = p->remote.find(op.remote);
      if (from == nullptr || r == p->remote.end() ||
          !in_bounds(op.remote_offset, op.length, r->second.size)) {
        res.status = Status::invalid;
        break;
      }
      const std::size_t frame = tcp_frames::kHeaderSize + op.length;
      if (p->queued() != 0 && p->queued() + frame > cfg_.max_queued_bytes) {
        p->blocked = true;
        res.status = Status::retry;
        break;
      }
      tcp_frames::encode_header(p->pending,
                                {tcp_frames::FrameType::write, op.remote, op.remote_offset,
                                 static_cast<std::uint32_t>(op.length)});
      p->pending.insert(p->pending.end(), from, from + op.length);
    }
    if (res.posted > 0) flush_locked(p, static_cast<int>(res.posted));
    return res;
  }

  Status send_block(NodeId peer, RegionId local, std::uint64_t offset, std::uint32_t length,
                    std::uint32_t immediate) {
    auto src = regions_.find(local);
    if (src == regions_.end() || !in_bounds(offset, length, src->second.size())) {
      return Status::invalid;
    }
    auto p = find(peer);
    if (!p) return Status::peer_suspected;
    {
      std::lock_guard lock(p->mu);
      if (p->suspected || p->closing) return Status::peer_suspected;
      if (!p->established) return p->background ? Status::retry : Status::peer_suspected;
      const std::size_t frame = tcp_frames::kHeaderSize + length;
      if (p->queued() != 0 && p->queued() + frame > cfg_.max_queued_bytes) {
        p->blocked = true;
        return Status::retry;
      }
      tcp_frames::encode_header(p->pending, {tcp_frames::FrameType::block, immediate, 0, length});
      const std::byte* from = src->second.data() + offset;
      p->pending.insert(p->pending.end(), from, from + length);
      flush_locked(p, 1);
    }
    // The bytes were copied: the source may be reused now.
    push_event(p.get(), BlockSent{peer, immediate});
    return Status::ok;
  }

  Status post_receive(NodeId peer, RegionId local, std::uint64_t offset, std::uint32_t capacity) {
    auto dst = regions_.find(local);
    if (dst == regions_.end() || !in_bounds(offset, capacity, dst->second.size())) {
      return Status::invalid;
    }
    auto p = find(peer);
    if (!p) return Status::peer_suspected;
    std::lock_guard lock(p->mu);
    if (p->suspected) return Status::peer_suspected;
    if (!p->established) return p->background ? Status::retry : Status::peer_suspected;
    p->posted.push_back(Posted{local, offset, capacity});
    if (p->posted.size() == 1) {
      asio::post(io_, [this, p] {
        std::shared_ptr<Conn> c;
        {
          std::lock_guard pl(p->mu);
          c = p->conn.lock();
        }
        if (!c) return;
        std::lock_guard rl(rx_mu_);  // a stream read in place: nobody serves it meanwhile
        if (c->paused) {
          c->paused = false;
          process(c);
        }
      });
    }
    return Status::ok;
  }

  // A thread that polls while it spins reads the streams in place itself (when no other
  // thread serves them right now), and the receive thread stands aside meanwhile.
  std::size_t poll(std::vector<Event>& out) {
    receive();
    return events_.drain(out);
  }
  void receive() {
    if (rx_count_.load(std::memory_order_relaxed) == 0) return;
    const auto now = Clock::now().time_since_epoch().count();
    // A busy stream is the I/O thread's for now: woken by epoll, it reads what piled up
    // meanwhile in a few large reads on the other core, where a spinning poller would make a
    // recv or two per frame.
    if (now < busy_until_.load(std::memory_order_relaxed)) return;
    std::unique_lock l(rx_mu_, std::try_to_lock);
    if (!l.owns_lock()) return;  // another thread serves the streams right now
    last_poll_.store(now, std::memory_order_relaxed);
    watch_in_io_locked(false);  // it spins: the I/O thread need not wake for what it reads
    if (!serve_locked()) {
      busy_streak_ = 0;
      return;
    }
    // Data at every look, kBusyStreak in a row: a stream, not a reply awaited (a round trip
    // finds its reply once, among many empty looks). Handed to the I/O thread for a while.
    if (++busy_streak_ < kBusyStreak) return;
    busy_streak_ = 0;
    watch_in_io_locked(true);
    // Stand aside only where the I/O thread now wakes for the streams (the ADD may fail).
    if (rx_in_io_.load()) busy_until_.store(now + kBusyHandOff.count(), std::memory_order_relaxed);
  }
  // The poller stops polling (it sleeps now): the I/O thread reads from here on.
  void stop_polling() noexcept {
    // Not on rx_count_: a poller may have taken rx_ep_ out while the last streams of a view
    // closed, and the next view's streams are added to it.
    if (rx_ep_ < 0 || rx_in_io_.load()) return;
    std::lock_guard l(rx_mu_);
    watch_in_io_locked(true);
  }
  [[nodiscard]] NodeId self() const noexcept { return cfg_.self.id; }
  [[nodiscard]] std::uint64_t activity() const noexcept { return doorbell_.ticket(); }
  void wait(std::uint64_t ticket, std::chrono::nanoseconds timeout) {
    stop_polling();
    doorbell_.wait(static_cast<std::uint32_t>(ticket), timeout);
  }
  void notify() noexcept { doorbell_.ring_all(); }
  void wait_quiet(std::uint64_t ticket, std::chrono::nanoseconds timeout) {
    stop_polling();
    doorbell_.wait_quiet(static_cast<std::uint32_t>(ticket), timeout);
  }
  void arm_waiter(bool armed) noexcept { doorbell_.arm(armed); }

  bool connecting(NodeId peer) const {
    auto p = find(peer);
    if (!p) return false;
    std::lock_guard lock(p->mu);
    return p->background && !p->established && !p->suspected;
  }

  std::optional<RegionDescriptor> remote_region(NodeId peer, RegionId id) const {
    auto p = find(peer);
    if (!p) return std::nullopt;
    std::lock_guard lock(p->mu);
    auto it = p->remote.find(id);
    if (it == p->remote.end()) return std::nullopt;
    return it->second;
  }

  std::optional<LocalRegion> local_region(RegionId id) const {
    auto it = regions_.find(id);
    if (it == regions_.end()) return std::nullopt;
    return LocalRegion{id, it->second.span()};
  }

  // ------------------------------------------------------------------ I/O thread
  void push_event(Peer* p, Event e) {
    if (p != nullptr) {
      std::lock_guard pl(p->mu);
      if (p->retired) return;
    }
    events_.push(std::move(e));
    doorbell_.ring();
  }

  // Marks the peer suspected, closes its stream (`linger` later if nonzero), reports once
  // (unless its view is gone).
  void raise(const std::shared_ptr<Peer>& p, SuspicionReason reason, std::string detail,
             std::chrono::milliseconds linger = std::chrono::milliseconds(0)) {
    std::shared_ptr<Conn> c;
    {
      std::lock_guard pl(p->mu);
      if (p->suspected) return;
      p->suspected = true;
      p->established = false;
      c = p->conn.lock();
      if (p->retired) return;
    }
    events_.push(Suspicion{p->addr.id, reason, std::move(detail)});
    doorbell_.ring();
    cv_.notify_all();
    if (!c) return;
    if (linger.count() == 0) {
      asio::post(io_, [this, c] { close(c); });
      return;
    }
    asio::post(io_, [this, c, linger] {
      auto timer = std::make_shared<asio::steady_timer>(io_, linger);
      lingers_.push_back(timer);
      timer->async_wait([this, c, timer](const boost::system::error_code&) {
        std::erase(lingers_, timer);
        close(c);
      });
    });
  }

  void close(const std::shared_ptr<Conn>& c) {
    std::unique_lock rl(rx_mu_, std::defer_lock);
    if (c->in_place) {
      rl.lock();  // nobody serves the stream while it closes
      if (!io_.get_executor().running_in_this_thread()) {
        // A thread serving rx_ep_ found it ended: nothing more is read; the I/O thread
        // closes it.
        c->gone = true;
        watch_locked(*c);
        asio::post(io_, [this, c] { close(c); });
        return;
      }
    }
    close_now(c);
  }

  // I/O thread (and rx_mu_ held, for a stream read in place).
  void close_now(const std::shared_ptr<Conn>& c) {
    if (c->closed) return;
    c->closed = true;
    if (c->peer) {
      // No direct send may use this descriptor number once it is closed (and reused).
      std::lock_guard pl(c->peer->mu);
      if (c->peer->fd == c->handle()) c->peer->fd = -1;
    }
    if (c->in_place) {
      watch_locked(*c);
      rx_conns_.erase(c);
      rx_count_.fetch_sub(1);
      ::shutdown(c->fd, SHUT_RDWR);
      ::close(c->fd);
    } else {
      boost::system::error_code ec;
      c->sock.shutdown(tcp::socket::shutdown_both, ec);
      c->sock.close(ec);
    }
    conns_.erase(c);
  }

  // ------------------------------------------------------------------ streams read in place
  // rx_mu_ held: rx_ep_ watches the stream for what it needs now (nothing once it is gone or
  // closed, or while it waits for a receive; room to send while the I/O thread waits for it).
  void watch_locked(Conn& c) {
    const std::uint32_t want = c.gone || c.closed ? 0u
                                                  : (c.paused ? 0u : std::uint32_t{EPOLLIN}) |
                                                        (c.want_out ? std::uint32_t{EPOLLOUT} : 0u);
    if (want == c.watched) return;
    epoll_event ev{};
    ev.events = want;
    ev.data.ptr = &c;
    // Not watched at all rather than for nothing: a hung-up socket reports EPOLLHUP anyway.
    const int op = want == 0 ? EPOLL_CTL_DEL : c.watched == 0 ? EPOLL_CTL_ADD : EPOLL_CTL_MOD;
    if (::epoll_ctl(rx_ep_, op, c.fd, &ev) != 0 && op != EPOLL_CTL_DEL) {
      // A stream nobody would read again (ENOSPC: fs.epoll.max_user_watches; ENOMEM) ends
      // now, saying why, rather than fall silent. Not from here: the caller may be reading it.
      const std::string why = std::string("epoll_ctl(") + (op == EPOLL_CTL_ADD ? "ADD" : "MOD") +
                              ") to watch it failed: " + std::strerror(errno);
      c.gone = true;
      asio::post(io_, [this, sc = c.shared_from_this(), why] {
        std::lock_guard l(rx_mu_);
        if (!sc->closed) ended(sc, why);
      });
      return;
    }
    c.watched = want;
  }

  // I/O thread, from read(): a plain stream bound to its member, with no send of the I/O
  // thread in flight, leaves asio for rx_ep_. False: not now (asio reads it once more).
  bool go_in_place(const std::shared_ptr<Conn>& c) {
    if (c->in_place || c->secure || !c->peer || !c->got_hello || rx_ep_ < 0 || stopping_)
      return false;
    const auto& p = c->peer;
    std::lock_guard rl(rx_mu_);
    {
      std::lock_guard pl(p->mu);
      if (p->writing || !p->established || p->conn.lock() != c) return false;
      boost::system::error_code ec;
      const int fd = c->sock.release(ec);
      if (ec) return false;
      c->fd = fd;
      c->in_place = true;
    }
    rx_conns_.insert(c);
    rx_count_.fetch_add(1);
    watch_locked(*c);
    if (!rx_watchdog_) {
      rx_watchdog_ = true;
      arm_watchdog();
    }
    return true;
  }

  // rx_mu_ held: reads and applies what the streams in rx_ep_ have now. Whether any had data.
  bool serve_locked() {
    std::array<epoll_event, 32> evs;
    const int got = ::epoll_wait(rx_ep_, evs.data(), static_cast<int>(evs.size()), 0);
    bool data = false;
    for (std::size_t i = 0; i < static_cast<std::size_t>(std::max(got, 0)); ++i) {
      // Alive: rx_conns_ holds it until it leaves rx_ep_, both under rx_mu_.
      const auto c = static_cast<Conn*>(evs[i].data.ptr)->shared_from_this();
      if ((evs[i].events & EPOLLOUT) != 0 && c->want_out) {
        c->want_out = false;
        watch_locked(*c);
        asio::post(io_, [this, c] { send_in_place(c); });
      }
      if ((evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) != 0) data = read_in_place(c) || data;
    }
    return data;
  }

  // rx_mu_ held: reads what the stream has (a few buffers at most: the others get their turn)
  // and applies it in stream order, as the I/O thread's read() does through asio. Whether it
  // read anything.
  bool read_in_place(const std::shared_ptr<Conn>& c) {
    bool read = false;
    for (int round = 0; round < 4; ++round) {
      if (c->gone || c->closed || c->paused) return read;
      if (c->rstart == c->rend) c->rstart = c->rend = 0;
      const std::size_t room = c->rbuf.size() - c->rend;
      const ssize_t n = ::recv(c->fd, c->rbuf.data() + c->rend, room, MSG_DONTWAIT);
      if (n > 0) {
        read = true;
        c->rend += static_cast<std::size_t>(n);
        c->last_rx = Clock::now();
        if (!decode(c)) {
          // Paused for a receive (post_receive() watches it again), or read no more.
          if (!c->paused) c->gone = true;
          watch_locked(*c);
          return read;
        }
        if (static_cast<std::size_t>(n) < room) return read;
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return read;
      ended(c, n == 0 ? std::string("end of stream") : std::string(std::strerror(errno)));
      return read;
    }
    return read;
  }

  // The stream ended or failed (`why`): its peer is reported as it left or failed.
  void ended(const std::shared_ptr<Conn>& c, const std::string& why) {
    const bool truncated = c->dec.mid_frame() || c->nend != c->nstart;
    if (c->peer) {
      if (c->goodbye) {
        raise(c->peer, SuspicionReason::peer_left,
              "node " + std::to_string(c->peer->addr.id) + " disconnected");
      } else if (truncated) {
        raise(c->peer, SuspicionReason::truncated_frame,
              "stream from node " + std::to_string(c->peer->addr.id) + " ended inside a frame");
      } else {
        raise(c->peer, SuspicionReason::connection_lost,
              "stream from node " + std::to_string(c->peer->addr.id) + " closed: " + why);
      }
    }
    close(c);
  }

  // I/O thread: sends the rest of the stream's inflight bytes (raw, non-blocking); without
  // room, rx_ep_ watches for it and the thread that sees it calls this again.
  void send_in_place(const std::shared_ptr<Conn>& c) {
    const auto& p = c->peer;
    while (c->sent < c->inflight.size()) {
      const ssize_t n = c->closed
                            ? -1
                            : ::send(c->fd, c->inflight.data() + c->sent,
                                     c->inflight.size() - c->sent, MSG_DONTWAIT | MSG_NOSIGNAL);
      if (n > 0) {
        c->sent += static_cast<std::size_t>(n);
        continue;
      }
      if (n < 0 && !c->closed && errno == EINTR) continue;
      if (n < 0 && !c->closed && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        std::lock_guard rl(rx_mu_);
        c->want_out = true;
        watch_locked(*c);
        return;
      }
      send_failed(p, *c, std::strerror(errno));
      return;
    }
    write_more(p);
  }

  // I/O thread: a send of the stream's backlog failed (`why`): the peer is suspected unless
  // the stream was closed on purpose, and the backlog's writer stops.
  void send_failed(const std::shared_ptr<Peer>& p, const Conn& c, const std::string& why) {
    if (!c.closed) {
      raise(p, SuspicionReason::connection_lost,
            "send to node " + std::to_string(p->addr.id) + " failed: " + why);
    }
    std::lock_guard pl(p->mu);
    p->writing = false;
    if (p->closing) {
      p->pending.clear();
      p->wire.clear();
    }
  }

  // Constructor: rx_ep_ for the streams, io_ep_ holding it for the I/O thread's reactor.
  void open_receive_sets() {
    const int rx_ep = ::epoll_create1(EPOLL_CLOEXEC);
    const int io_ep = ::epoll_create1(EPOLL_CLOEXEC);
    boost::system::error_code ec;
    if (rx_ep >= 0 && io_ep >= 0) rx_desc_.assign(io_ep, ec);
    if (rx_ep < 0 || io_ep < 0 || ec) {  // every stream stays with asio
      if (rx_ep >= 0) ::close(rx_ep);
      if (io_ep >= 0) ::close(io_ep);
      return;
    }
    rx_ep_ = rx_ep;
    std::lock_guard l(rx_mu_);
    watch_in_io_locked(true);
    watch_io();
  }

  // rx_mu_ held: rx_ep_ in io_ep_ (the I/O thread wakes for what arrives) or not (a poller
  // spins and reads it). Where the ADD fails, the streams stay out of io_ep_ and the
  // watchdog reads them (every kWatchdog: late, but nothing is lost); tried again next time.
  void watch_in_io_locked(bool in) {
    if (rx_in_io_.load() == in) return;
    epoll_event ev{};
    ev.events = EPOLLIN;
    if (::epoll_ctl(rx_desc_.native_handle(), in ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, rx_ep_, &ev) !=
            0 &&
        in && errno != EEXIST) {
      if (!std::exchange(rx_io_failed_, true))
        std::cerr << "spindle tcp: node " << cfg_.self.id
                  << ": epoll_ctl(ADD) of the streams read in place failed: "
                  << std::strerror(errno) << "; the I/O thread reads them every "
                  << kWatchdog.count() / 1'000'000 << " ms until it succeeds\n";
      return;
    }
    if (in) rx_io_failed_ = false;
    rx_in_io_.store(in);
  }

  // I/O thread: serves rx_ep_ whenever io_ep_ says something is ready in it.
  void watch_io() {
    rx_desc_.async_wait(asio::posix::descriptor_base::wait_read,
                        [this](const boost::system::error_code& ec) {
                          if (ec || stopping_) return;
                          {
                            std::lock_guard l(rx_mu_);
                            (void)serve_locked();
                          }
                          watch_io();
                        });
  }

  // I/O thread, while streams are read in place: a poller that neither polls nor sleeps for
  // kWatchdog (an upcall that runs long) gets the I/O thread back on its streams.
  void arm_watchdog() {
    rx_timer_.expires_after(kWatchdog);
    rx_timer_.async_wait([this](const boost::system::error_code& ec) {
      if (ec || stopping_) return;
      if (rx_count_.load() == 0) {
        rx_watchdog_ = false;
        return;
      }
      const auto since = Clock::now().time_since_epoch().count() - last_poll_.load();
      if (!rx_in_io_.load() && since > kWatchdog.count()) {
        std::lock_guard l(rx_mu_);
        watch_in_io_locked(true);
        // The set could not go back to io_ep_ (watch_in_io_locked): read it from here.
        if (!rx_in_io_.load()) (void)serve_locked();
      }
      arm_watchdog();
    });
  }

  // Caller holds p->mu: hand the queue to the I/O thread if it is not writing already.
  void start_locked(const std::shared_ptr<Peer>& p) {
    if (p->writing) return;
    p->writing = true;
    asio::post(io_, [this, p] { write_more(p); });
  }

  // Caller holds p->mu and just queued frames. On a quiet link the first few frames are
  // sent from the calling thread (one non-blocking send, no I/O-thread wake-up: this halves
  // a round trip); in a burst the I/O thread sends whole batches (far fewer syscalls).
  // Stream order holds: a direct send happens only while the I/O thread is not writing.
  // kDirectFrames covers what one SST flush posts to a peer: the data (two writes when
  // it wraps the ring), its guard, the counters and a status row. With only two (the data
  // and its guard), every batch's counter update woke the I/O thread and handed it the
  // stream, so the next batch's data went through it too (bench_smc, tcp, 10 KB, 2 members
  // one sending, pinned: atomic/raw 0.54-0.64 over 4 runs, 0.75-0.92 with 8; with no limit
  // at all a stream of 100-byte writes lost its coalescing, 2e8 -> 1.8e7 messages/s).
  // An answer starts a burst of its own: frames posted more than kAnswerGap after our last
  // send, with a frame from the peer read since. A round trip answers at once, and with
  // round trips under 20 us (streams read in place) every hop was counted into one endless
  // burst and went through the I/O thread (DCPS 64 B round trip 27.8 us, 17.2 with the rule;
  // a stream's posts follow each other without hearing back, and keep their batches).
  // Gaps count from the end of our last direct send, not its start: a send that took
  // longer than the gap must not make the next post look quiet.
  void flush_locked(const std::shared_ptr<Peer>& p, int frames) {
    static constexpr auto kBurstGap = std::chrono::microseconds(20);
    static constexpr auto kAnswerGap = std::chrono::microseconds(3);
    static constexpr int kDirectFrames = 8;
    const auto now = Clock::now();
    const bool answer =
        p->heard.exchange(false, std::memory_order_relaxed) && now - p->last_post > kAnswerGap;
    p->burst = (answer || now - p->last_post > kBurstGap ? 0 : p->burst) + frames;
    p->last_post = now;
    if (!p->writing && p->fd >= 0 && p->burst <= kDirectFrames) {
      auto& out = outgoing_locked(*p);
      const ssize_t n = ::send(p->fd, out.data(), out.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
      if (n > 0) out.erase(out.begin(), out.begin() + n);
      p->last_post = Clock::now();
      if (p->queued() == 0) return;
      // Partial, would block, or failed: the I/O thread carries on and reports errors.
    }
    start_locked(p);
  }

  // Caller holds p.mu: the bytes that go to the socket next. On a secured stream the frames
  // queued in clear are sealed here, so records leave in the order they were sealed.
  static std::vector<std::byte>& outgoing_locked(Peer& p) {
    if (!p.seal) return p.pending;
    if (!p.pending.empty()) {
      p.seal->seal(p.pending, p.wire);
      p.pending.clear();
    }
    return p.wire;
  }

  void kick(const std::shared_ptr<Peer>& p) {
    std::lock_guard pl(p->mu);
    if (p->queued() != 0) start_locked(p);
  }

  void write_more(const std::shared_ptr<Peer>& p) {
    std::shared_ptr<Conn> c;
    bool wake = false;
    {
      std::lock_guard pl(p->mu);
      c = p->conn.lock();
      auto& out = outgoing_locked(*p);
      if (!c || c->closed || out.empty()) {
        p->writing = false;
        // Disconnecting from a stream that is gone already: its GOODBYE can never go, and
        // disconnect() must not linger for it (the peer is installing the next view too).
        if (p->closing && (!c || c->closed)) {
          p->pending.clear();
          p->wire.clear();
        }
        if (c && p->closing && p->queued() == 0) {
          boost::system::error_code ec;
          if (c->in_place)
            ::shutdown(c->fd, SHUT_WR);
          else
            c->sock.shutdown(tcp::socket::shutdown_send, ec);
        }
        return;
      }
      c->inflight.clear();
      std::swap(c->inflight, out);
      wake = std::exchange(p->blocked, false);
    }
    if (wake) doorbell_.ring();  // back-pressure eased
    if (c->in_place) {
      c->sent = 0;
      send_in_place(c);
      return;
    }
    asio::async_write(c->sock, asio::buffer(c->inflight),
                      [this, p, c](const boost::system::error_code& ec, std::size_t) {
                        if (ec) {
                          send_failed(p, *c, ec.message());
                          return;
                        }
                        write_more(p);
                      });
  }

  // Accepts for as long as the acceptor is open. A stream that failed before we took it is
  // skipped; when the process is out of descriptors or memory, accepting pauses briefly
  // (the backlog waits in the kernel) and resumes: it never stops for good.
  void accept() {
    acceptor_.async_accept([this](const boost::system::error_code& ec, tcp::socket s) {
      if (ec == asio::error::operation_aborted || !acceptor_.is_open()) return;  // closed
      if (ec) {
        const bool starved = ec == asio::error::no_descriptors || ec.value() == ENFILE ||
                             ec == asio::error::no_buffer_space || ec == asio::error::no_memory;
        if (!starved) {
          accept();
          return;
        }
        ++accept_pauses_;
        accept_pause_.expires_after(kAcceptPause);
        accept_pause_.async_wait([this](const boost::system::error_code& e) {
          if (!e) accept();
        });
        return;
      }
      boost::system::error_code ignored;
      s.set_option(tcp::no_delay(true), ignored);
      auto c = std::make_shared<Conn>(*this, std::move(s));
      conns_.insert(c);
      if (cfg_.security) {
        c->secure = true;
        start_tls(c);
      }
      read(c);
      accept();
    });
  }

  // Closes accepted streams that have not said a valid HELLO within hello_timeout.
  void arm_sweep() {
    const auto period = std::clamp<std::chrono::milliseconds>(
        cfg_.hello_timeout / 4, std::chrono::milliseconds(10), std::chrono::milliseconds(500));
    sweep_.expires_after(period);
    sweep_.async_wait([this](const boost::system::error_code& ec) {
      if (ec || stopping_) return;
      const auto now = Clock::now();
      std::vector<std::shared_ptr<Conn>> silent;
      for (const auto& c : conns_) {
        if (!c->active && !c->got_hello && now - c->opened > cfg_.hello_timeout)
          silent.push_back(c);
      }
      {
        // HELLOs parked past their time: no view of ours needed them.
        std::lock_guard lock(mu_);
        std::erase_if(parked_, [&](const std::shared_ptr<Conn>& c) {
          if (c->closed) return true;
          if (now - c->parked_at <= parked_for_) return false;
          silent.push_back(c);
          return true;
        });
      }
      for (auto& c : silent) {
        ++hello_timeouts_;
        close(c);
      }
      arm_sweep();
    });
  }

  // A host name or address; IPv4 first (members default to 127.0.0.1). nullopt with `why`
  // set if it does not resolve.
  static std::optional<asio::ip::address> resolve(const std::string& host, std::string& why) {
    boost::system::error_code ec;
    const auto literal = asio::ip::make_address(host, ec);
    if (!ec) return literal;
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* res = nullptr;
    const int rc = ::getaddrinfo(host.c_str(), nullptr, &hints, &res);
    if (rc != 0) {
      why = ::gai_strerror(rc);
      return std::nullopt;
    }
    std::optional<asio::ip::address> v4, v6;
    for (auto* a = res; a != nullptr; a = a->ai_next) {
      if (a->ai_family == AF_INET && !v4) {
        const auto* sin = reinterpret_cast<const sockaddr_in*>(a->ai_addr);
        v4 = asio::ip::address_v4(ntohl(sin->sin_addr.s_addr));
      } else if (a->ai_family == AF_INET6 && !v6) {
        const auto* sin6 = reinterpret_cast<const sockaddr_in6*>(a->ai_addr);
        asio::ip::address_v6::bytes_type b;
        std::memcpy(b.data(), sin6->sin6_addr.s6_addr, b.size());
        v6 = asio::ip::address_v6(b, sin6->sin6_scope_id);
      }
    }
    ::freeaddrinfo(res);
    if (v4) return v4;
    if (v6) return v6;
    why = "no IPv4 or IPv6 address";
    return std::nullopt;
  }

  // Our HELLO for `epoch`.
  tcp_frames::Hello my_hello(std::uint64_t epoch) {
    tcp_frames::Hello h;
    h.node = cfg_.self.id;
    h.epoch = epoch;
    h.domain = cfg_.domain_id;
    h.nonce = self_nonce_;
    {
      std::lock_guard lock(desc_mu_);
      h.regions = descriptors_;
    }
    h.settings = cfg_.must_agree;
    return h;
  }

  // Why a peer's HELLO is refused although it is well formed: another domain, or a
  // must-agree setting that differs. Empty when they agree.
  std::string mismatch(const tcp_frames::Hello& h) const {
    std::string out;
    const std::string who = "node " + std::to_string(h.node);
    auto add = [&](const std::string& s) { out += (out.empty() ? "" : "; ") + s; };
    if (h.domain != cfg_.domain_id) {
      add(who + " is in domain " + std::to_string(h.domain) + ", this node in domain " +
          std::to_string(cfg_.domain_id));
    }
    for (const auto& mine : cfg_.must_agree) {
      auto it = std::find_if(h.settings.begin(), h.settings.end(),
                             [&](const AgreedSetting& t) { return t.name == mine.name; });
      if (it == h.settings.end()) {
        add(mine.name + ": " + who + " does not state it, this node has " + mine.value);
      } else if (it->value != mine.value) {
        add(mine.name + ": " + who + " has " + it->value + ", this node " + mine.value);
      }
    }
    for (const auto& theirs : h.settings) {
      if (std::none_of(cfg_.must_agree.begin(), cfg_.must_agree.end(),
                       [&](const AgreedSetting& m) { return m.name == theirs.name; })) {
        add(theirs.name + ": " + who + " has " + theirs.value + ", this node does not state it");
      }
    }
    return out;
  }

  void start_connect(const std::shared_ptr<Peer>& p, Clock::time_point deadline) {
    if (!p->ip) {
      raise(p, SuspicionReason::connect_timeout,
            "cannot resolve host '" + p->addr.host + "' of node " + std::to_string(p->addr.id) +
                ": " + p->resolve_error);
      return;
    }
    const auto addr = *p->ip;
    auto c = std::make_shared<Conn>(*this, tcp::socket(io_));
    c->active = true;
    c->secure = cfg_.security != nullptr;
    c->sock.async_connect(
        tcp::endpoint(addr, p->addr.port),
        [this, p, c, deadline](const boost::system::error_code& err) {
          {
            std::lock_guard pl(p->mu);
            if (p->suspected || p->retired) return;
          }
          if (err) {
            if (Clock::now() >= deadline) return;  // connect() reports the timeout
            auto t = std::make_shared<asio::steady_timer>(io_, std::chrono::milliseconds(20));
            t->async_wait([this, p, deadline, t](const boost::system::error_code&) {
              start_connect(p, deadline);
            });
            return;
          }
          boost::system::error_code ignored;
          c->sock.set_option(tcp::no_delay(true), ignored);
          conns_.insert(c);
          c->peer = p;
          if (c->secure) {
            // Direct sends (p->fd) and our HELLO wait for the handshake (send_first_hello).
            {
              std::lock_guard pl(p->mu);
              p->conn = c;
            }
            start_tls(c);
            read(c);
            return;
          }
          {
            std::lock_guard pl(p->mu);
            p->conn = c;
            p->fd = c->sock.native_handle();
            tcp_frames::encode_hello(p->pending, my_hello(p->epoch));
            start_locked(p);
          }
          read(c);
        });
  }

  // A HELLO arrived on an accepted stream: bind it to its peer, park it, or refuse it.
  // Called with mu_ held or from the read path (which takes it).
  void bind_passive(const std::shared_ptr<Conn>& c) {
    if (c->closed) return;
    if (!connected_ || c->hello.epoch > epoch_) {
      park(c);
      return;
    }
    auto it = peers_.find(c->hello.node);
    if (c->hello.epoch < epoch_ || it == peers_.end() || c->hello.node <= cfg_.self.id) {
      close(c);  // stale view, stranger, or the wrong direction
      return;
    }
    auto& p = it->second;
    // A stream that claims a member which joined with a nonce binds only if it proves it:
    // whoever else sends that member's id (ahead of it, for a view to come) is a stranger.
    if (p->addr.nonce != 0 && c->hello.nonce != p->addr.nonce) {
      ++strangers_refused_;
      close(c);
      return;
    }
    // Secured: the member's certificate, not merely one of the CA's. A stream that claims it
    // with another subject is never bound; if the member itself never comes, connect()
    // names both subjects instead of a timeout.
    if (c->secure) {
      const std::string want = security::canonical_subject(p->addr.subject);
      if (c->subject != want) {
        ++strangers_refused_;
        remember_refusal_locked(c->hello.node, "a stream presenting certificate subject " +
                                                   c->subject + " claimed it, where the view has " +
                                                   (want.empty() ? "no subject" : want));
        close(c);
        return;
      }
    }
    if (auto why = mismatch(c->hello); !why.empty()) {
      // Answer with our HELLO first (a few hundred bytes into an idle socket: one
      // non-blocking send) so the dialer can name the difference too; then refuse.
      std::vector<std::byte> ours;
      tcp_frames::encode_hello(ours, my_hello(epoch_));
      if (c->seal) {
        std::vector<std::byte> sealed;
        c->seal->seal(ours, sealed);
        ours.swap(sealed);
      }
      (void)::send(c->sock.native_handle(), ours.data(), ours.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
      raise(p, SuspicionReason::mismatch, why);
      close(c);
      return;
    }
    {
      std::lock_guard pl(p->mu);
      if (p->established || p->suspected) {
        close(c);
        return;
      }
      c->peer = p;
      p->conn = c;
      p->fd = c->sock.native_handle();
      if (c->seal) p->seal = std::move(c->seal);
      for (auto& r : c->hello.regions)
        p->remote[r.id] = r;
      tcp_frames::encode_hello(p->pending, my_hello(epoch_));
      p->established = true;
      start_locked(p);
    }
    c->last_rx = Clock::now();
    if (p->background) push_event(p.get(), PeerConnected{p->addr.id});
    cv_.notify_all();
  }

  // ------------------------------------------------------------------ secured streams
  // (I/O thread; secure_stream.hpp has the layout.)

  // A secured stream starts its handshake: the dialer (TLS client) speaks first.
  void start_tls(const std::shared_ptr<Conn>& c) {
    c->net.resize(kHandshakeBuffer);
    c->tls = std::make_unique<tcp_secure::Handshake>(*cfg_.security, c->active);
    if (c->active && c->tls->step({}, c->hs_out) == tcp_secure::Handshake::Step::failed) {
      (void)secure_fail(c, SuspicionReason::malformed_frame, c->tls->error());
      return;
    }
    hs_flush(c);
  }

  // Runs the handshake on its units and opens records into rbuf for the decoder, as far as
  // the bytes read and rbuf's room allow (one record's plaintext fits when the decoder has
  // emptied rbuf). False: the stream was closed.
  bool unseal(const std::shared_ptr<Conn>& c) {
    for (;;) {
      const std::size_t avail = c->nend - c->nstart;
      if (avail < tcp_secure::kUnitHeader) return true;
      const std::byte* at = c->net.data() + c->nstart;
      const auto unit = tcp_secure::parse_unit(at);
      if (unit.handshake) {
        if (c->hs_done)
          return secure_fail(c, SuspicionReason::malformed_frame,
                             "handshake bytes after the handshake");
        if (unit.length == 0 || c->hs_received + unit.length > tcp_secure::kMaxHandshakeBytes) {
          return secure_fail(c, SuspicionReason::malformed_frame,
                             "TLS handshake of more than 64 KiB (or an empty unit)");
        }
        if (avail < unit.wire()) return true;
        c->hs_received += unit.length;
        const auto step = c->tls->step({at + tcp_secure::kUnitHeader, unit.length}, c->hs_out);
        c->nstart += unit.wire();
        if (step == tcp_secure::Handshake::Step::failed)
          return secure_fail(c, SuspicionReason::malformed_frame, c->tls->error());
        if (step == tcp_secure::Handshake::Step::done && !handshake_done(c)) return false;
        hs_flush(c);
        continue;
      }
      if (!c->hs_done) {
        return secure_fail(c, SuspicionReason::malformed_frame,
                           "a sealed record before the TLS handshake finished");
      }
      if (unit.length == 0 || unit.length > tcp_secure::kMaxRecord) {
        return secure_fail(
            c, SuspicionReason::malformed_frame,
            "a sealed record of " + std::to_string(unit.length) + " bytes (1 to 1048576)");
      }
      if (avail < unit.wire()) return true;
      if (c->rstart == c->rend) c->rstart = c->rend = 0;
      if (c->rbuf.size() - c->rend < unit.length && c->rstart > 0) {
        std::memmove(c->rbuf.data(), c->rbuf.data() + c->rstart, c->rend - c->rstart);
        c->rend -= c->rstart;
        c->rstart = 0;
      }
      if (c->rbuf.size() - c->rend < unit.length) {
        if (c->rend > 0) return true;  // the decoder holds plaintext yet (paused at a block)
        c->rbuf.resize(unit.length);
      }
      if (!c->open->open({at, unit.wire()}, c->rbuf.data() + c->rend)) {
        return secure_fail(c, SuspicionReason::malformed_frame,
                           "sealed record " + std::to_string(c->open->records()) +
                               " does not authenticate (altered or forged)");
      }
      c->rend += unit.length;
      c->nstart += unit.wire();
    }
  }

  // The handshake finished: judge the peer's certificate, take the keys, free the TLS
  // session. The dialer also checks that the certificate is the member's it dialed (the
  // listener checks at the HELLO, in bind_passive()). False: the stream was closed.
  bool handshake_done(const std::shared_ptr<Conn>& c) {
    const auto id = c->tls->identify();
    auto keys = c->tls->keys();
    const std::string error = c->tls->error();
    c->tls.reset();
    c->hs_done = true;
    if (!keys.seal) return secure_fail(c, SuspicionReason::malformed_frame, error);
    if (!id.valid()) {
      return secure_fail(c, SuspicionReason::mismatch,
                         "certificate " + id.subject + " (issuer " + id.issuer +
                             ") does not check out: " + id.refusal);
    }
    c->subject = id.subject;
    c->seal = std::move(keys.seal);
    c->open = std::move(keys.open);
    if (c->active) {
      const std::string want = security::canonical_subject(c->peer->addr.subject);
      if (id.subject != want) {
        return secure_fail(c, SuspicionReason::malformed_frame,
                           "presents certificate subject " + id.subject + " where the view has " +
                               (want.empty() ? "no subject" : want));
      }
      c->hello_due = true;
    }
    return true;
  }

  // Closes a secured stream that failed; suspects its member if it has one (the dialed
  // member, or the one it was bound to), else counts a stranger. Returns false.
  bool secure_fail(const std::shared_ptr<Conn>& c, SuspicionReason reason,
                   const std::string& detail) {
    if (c->peer) {
      raise(c->peer, reason,
            "node " + std::to_string(c->peer->addr.id) + " at " + address_of(c->peer->addr) + ": " +
                detail);
    } else {
      ++strangers_refused_;
    }
    close(c);
    return false;
  }

  // Writes the handshake's units, one batch at a time; then, on the dialer, the HELLO.
  void hs_flush(const std::shared_ptr<Conn>& c) {
    if (c->closed || c->hs_writing) return;
    if (c->hs_out.empty()) {
      if (c->hello_due) send_first_hello(c);
      return;
    }
    c->hs_writing = true;
    c->hs_inflight.clear();
    std::swap(c->hs_inflight, c->hs_out);
    asio::async_write(c->sock, asio::buffer(c->hs_inflight),
                      [this, c](const boost::system::error_code& ec, std::size_t) {
                        c->hs_writing = false;
                        if (c->closed) return;
                        if (ec) {
                          (void)secure_fail(c, SuspicionReason::connection_lost,
                                            "TLS handshake send failed: " + ec.message());
                          return;
                        }
                        hs_flush(c);
                      });
  }

  // The dialer's handshake is done and its last bytes are out: from now on the peer's
  // queue carries the stream (sealed), starting with our HELLO.
  void send_first_hello(const std::shared_ptr<Conn>& c) {
    c->hello_due = false;
    const auto& p = c->peer;
    std::lock_guard pl(p->mu);
    if (p->suspected || p->retired) return;
    p->fd = c->sock.native_handle();
    p->seal = std::move(c->seal);
    tcp_frames::encode_hello(p->pending, my_hello(p->epoch));
    start_locked(p);
  }

  void read(const std::shared_ptr<Conn>& c) {
    if (c->closed || c->paused) return;
    if (c->in_place) {
      std::lock_guard rl(rx_mu_);
      watch_locked(*c);  // after a pause: read in place again
      return;
    }
    if (go_in_place(c)) return;
    if (c->rstart == c->rend) c->rstart = c->rend = 0;
    // Bound to a member: now the stream gets its full buffer (no read is in flight here).
    if (c->peer && c->rbuf.size() < cfg_.read_buffer) c->rbuf.resize(cfg_.read_buffer);
    asio::mutable_buffer into(c->rbuf.data() + c->rend, c->rbuf.size() - c->rend);
    if (c->secure) {
      // Sealed bytes go to net; unseal() opens them into rbuf. net holds at least the unit
      // that has begun (a record: at most 1 MiB + 20; a handshake unit: 64 KiB + 4).
      if (c->nstart == c->nend) {
        c->nstart = c->nend = 0;
      } else if (c->nstart > 0) {
        std::memmove(c->net.data(), c->net.data() + c->nstart, c->nend - c->nstart);
        c->nend -= c->nstart;
        c->nstart = 0;
      }
      std::size_t want = c->peer ? cfg_.read_buffer : kHandshakeBuffer;
      if (c->nend >= tcp_secure::kUnitHeader)
        want = std::max(want, tcp_secure::parse_unit(c->net.data()).wire());
      if (c->net.size() < want) c->net.resize(want);
      into = asio::mutable_buffer(c->net.data() + c->nend, c->net.size() - c->nend);
    }
    c->sock.async_read_some(into, [this, c](const boost::system::error_code& ec, std::size_t n) {
      if (c->closed) return;
      if (ec) {
        ended(c, ec.message());
        return;
      }
      (c->secure ? c->nend : c->rend) += n;
      c->last_rx = Clock::now();
      process(c);
    });
  }

  // Applies what was read (opened first, on a secured stream), then reads on unless the
  // stream closed or waits for a receive.
  void process(const std::shared_ptr<Conn>& c) {
    for (;;) {
      if (c->closed) return;
      if (c->secure && !unseal(c)) return;
      if (!decode(c)) return;
      // A whole record may wait still, for want of room in rbuf: the decoder emptied it.
      if (!c->secure || !whole_unit(*c)) break;
    }
    read(c);
  }

  static bool whole_unit(const Conn& c) {
    const std::size_t avail = c.nend - c.nstart;
    return avail >= tcp_secure::kUnitHeader &&
           avail >= tcp_secure::parse_unit(c.net.data() + c.nstart).wire();
  }

  // Feeds rbuf to the decoder and acts on what it found. False: the stream closed, stopped
  // being read, or waits for a receive (post_receive() resumes it).
  bool decode(const std::shared_ptr<Conn>& c) {
    const bool had_hello = c->got_hello;
    if (c->peer) c->peer->heard.store(true, std::memory_order_relaxed);  // flush_locked()
    auto r = c->dec.feed(
        std::span<const std::byte>(c->rbuf.data() + c->rstart, c->rend - c->rstart), *c);
    c->rstart += r.consumed;
    if (r.consumed > 0) doorbell_.ring();
    if (r.state == tcp_frames::DecodeState::error) {
      if (c->peer && r.reason == SuspicionReason::foreign_write) {
        // Rows belong to their owners. Nothing more of this stream is read (so nothing of
        // it is applied), but it closes only kRefusedLinger later (or when the view ends):
        // a writer that finds its stream closed suspects us in its own row, and our
        // suspicion of it must reach the other members first (docs/membership.md).
        raise(c->peer, r.reason, "node " + std::to_string(c->peer->addr.id) + ": " + r.detail,
              kRefusedLinger);
        return false;
      }
      if (c->peer) {
        raise(c->peer, r.reason, "node " + std::to_string(c->peer->addr.id) + ": " + r.detail);
      } else if (auto claimed = refused_member(c->dec.refused_hello_node(), r.detail)) {
        // A member's HELLO we cannot accept (another version): say so, not a timeout.
        raise(claimed, r.reason, "node " + std::to_string(claimed->addr.id) + ": " + r.detail);
      } else {
        report_stranger(c, r.reason, r.detail);
      }
      close(c);
      return false;
    }
    if (!had_hello && c->got_hello) {
      if (c->active) {
        auto& p = c->peer;
        bool ok = false;
        // The member we dialed, in our view, proving the nonce it joined with: otherwise
        // something else answers at its address.
        const bool expected = c->hello.node == p->addr.id && c->hello.epoch == p->epoch &&
                              (p->addr.nonce == 0 || c->hello.nonce == p->addr.nonce);
        const std::string why = expected ? mismatch(c->hello) : std::string();
        if (expected && !why.empty()) {
          raise(p, SuspicionReason::mismatch, why);
          close(c);
          return false;
        }
        {
          std::lock_guard pl(p->mu);
          if (expected && !p->suspected) {
            for (auto& reg : c->hello.regions)
              p->remote[reg.id] = reg;
            p->established = true;
            ok = true;
          }
        }
        if (ok && p->background) push_event(p.get(), PeerConnected{p->addr.id});
        if (!ok) {
          raise(p, SuspicionReason::malformed_frame,
                "HELLO from " + std::to_string(c->hello.node) + " epoch " +
                    std::to_string(c->hello.epoch) + " where node " + std::to_string(p->addr.id) +
                    " epoch " + std::to_string(p->epoch) +
                    (p->addr.nonce != 0 && c->hello.nonce != p->addr.nonce
                         ? " with the nonce it joined with was expected"
                         : " was expected"));
          close(c);
          return false;
        }
        cv_.notify_all();
      } else {
        std::lock_guard lock(mu_);
        bind_passive(c);
      }
    }
    if (c->goodbye && c->peer) {
      raise(c->peer, SuspicionReason::peer_left,
            "node " + std::to_string(c->peer->addr.id) + " disconnected");
      close(c);
      return false;
    }
    if (r.state == tcp_frames::DecodeState::paused) {
      c->paused = true;  // post_receive() resumes
      return false;
    }
    return true;
  }

  // A HELLO claiming `node` (one that would dial us) was refused for `why`: the member of
  // the current view it names, if any. Remembered either way, so that a connect() that has
  // not started yet names it instead of a timeout.
  std::shared_ptr<Peer> refused_member(std::optional<NodeId> node, const std::string& why) {
    if (!node || *node <= cfg_.self.id) return nullptr;
    std::lock_guard lock(mu_);
    remember_refusal_locked(*node, why);
    auto it = peers_.find(*node);
    return connected_ && it != peers_.end() ? it->second : nullptr;
  }

  // Why a stream claiming `node` was refused, for connect() to name instead of a timeout
  // (mu_ held). At most kMaxRefusedHellos are kept.
  void remember_refusal_locked(NodeId node, std::string why) {
    if (refused_hellos_.size() >= kMaxRefusedHellos) refused_hellos_.clear();
    refused_hellos_[node] = std::move(why);
  }

  // Holds a HELLO for a view we have not connected yet (mu_ held). At most kMaxParked of
  // them, the oldest going first, each for parked_for_ at most (arm_sweep): what strangers
  // can make us hold stays bounded (a HELLO is at most 69 KiB).
  void park(const std::shared_ptr<Conn>& c) {
    std::erase_if(parked_, [](const std::shared_ptr<Conn>& p) { return p->closed.load(); });
    if (parked_.size() >= kMaxParked) {
      ++strangers_refused_;
      close(parked_.front());
      parked_.erase(parked_.begin());
    }
    c->parked_at = Clock::now();
    parked_.push_back(c);
  }

  // Garbage on a stream whose HELLO never bound it to a member: nobody to suspect; the
  // stream is closed. Counted so tests can see it happened.
  void report_stranger(const std::shared_ptr<Conn>&, SuspicionReason, const std::string&) {
    ++strangers_refused_;
  }

  void arm_heartbeat() {
    // Off: the layer above detects silence (the SST's heartbeats); a lost stream is still
    // reported at once.
    if (cfg_.heartbeat_interval.count() <= 0) return;
    heartbeat_.expires_after(cfg_.heartbeat_interval);
    const auto due = Clock::now() + cfg_.heartbeat_interval;
    heartbeat_.async_wait([this, due](const boost::system::error_code& ec) {
      if (ec) return;
      // If this timer ran late by half the suspicion timeout, our process was starved
      // (two cores, many processes): silence we measured is ours, not the peers'. Restart
      // their clocks instead of suspecting them.
      const bool we_stalled = Clock::now() - due > cfg_.suspicion_timeout / 2;
      std::vector<std::shared_ptr<Peer>> peers;
      {
        std::lock_guard lock(mu_);
        if (!connected_) return;
        for (auto& [id, p] : peers_)
          peers.push_back(p);
      }
      const auto now = Clock::now();
      for (auto& p : peers) {
        std::shared_ptr<Conn> c;
        {
          std::lock_guard pl(p->mu);
          if (!p->established || p->suspected) continue;
          c = p->conn.lock();
          if (!p->writing && p->queued() == 0) {
            tcp_frames::encode_header(p->pending, {tcp_frames::FrameType::heartbeat, 0, 0, 0});
            start_locked(p);
          }
        }
        std::unique_lock rl(rx_mu_);  // last_rx: whoever reads the stream sets it
        if (c && we_stalled) c->last_rx = now;
        const bool silent = c && !c->paused && now - c->last_rx > cfg_.suspicion_timeout;
        rl.unlock();
        if (silent) {
          raise(p, SuspicionReason::heartbeat_timeout,
                "nothing from node " + std::to_string(p->addr.id) + " for " +
                    std::to_string(cfg_.suspicion_timeout.count()) + " ms");
        }
      }
      arm_heartbeat();
    });
  }

  TcpConfig cfg_;
  asio::io_context io_;
  tcp::acceptor acceptor_;
  asio::executor_work_guard<asio::io_context::executor_type> work_;
  asio::steady_timer heartbeat_;
  asio::steady_timer accept_pause_;  // accepting waits on it while descriptors run out
  asio::steady_timer sweep_;         // closes streams that never said HELLO
  static constexpr auto kAcceptPause = std::chrono::milliseconds(50);
  std::thread thread_;
  std::uint16_t port_ = 0;

  DoorbellData bell_;
  Doorbell doorbell_;

  // Regions: changed only while not connected; read lock-free by everyone else.
  std::map<RegionId, AlignedBuffer> regions_;
  WriteGrants grants_;  // as regions_: changed only while disconnected
  std::vector<std::shared_ptr<asio::steady_timer>> lingers_;  // I/O thread only
  std::mutex desc_mu_;
  std::vector<RegionDescriptor> descriptors_;

  mutable std::mutex mu_;  // view: epoch_, peers_ (writes), connected_, parked_, refused_hellos_
  std::condition_variable cv_;
  std::uint64_t epoch_ = 0;
  bool connected_ = false;
  std::map<NodeId, std::shared_ptr<Peer>> peers_;
  std::vector<std::shared_ptr<Conn>> parked_;
  static constexpr std::size_t kMaxParked = 64;
  static constexpr Clock::duration kParkedFor = std::chrono::seconds(10);
  Clock::duration parked_for_ = kParkedFor;   // the longer of it and the last connect timeout
  std::atomic<std::uint64_t> self_nonce_{0};  // our join nonce (connect(): our entry's)
  // Why the last HELLO claiming a node was refused before it could bind (another version).
  std::map<NodeId, std::string> refused_hellos_;
  static constexpr std::size_t kMaxRefusedHellos = 64;

  std::set<std::shared_ptr<Conn>> conns_;  // I/O thread only
  std::uint64_t strangers_refused_ = 0;
  std::uint64_t accept_pauses_ = 0;   // I/O thread only
  std::uint64_t hello_timeouts_ = 0;  // I/O thread only
  bool stopping_ = false;             // I/O thread only: the destructor began

  EventQueue events_;

  // Streams read in place (see the top of this file). rx_mu_ serves rx_ep_: a poller holds
  // it while it reads, the I/O thread while it reads, changes a stream's watch or closes it;
  // recursive, as the I/O thread's read path may close a stream.
  static constexpr std::chrono::nanoseconds kWatchdog = std::chrono::milliseconds(20);
  std::recursive_mutex rx_mu_;
  int rx_ep_ = -1;
  std::set<std::shared_ptr<Conn>> rx_conns_;  // under rx_mu_: those in rx_ep_
  std::atomic<int> rx_count_{0};              // streams read in place
  std::atomic<Clock::rep> last_poll_{0};      // when a poller last served rx_ep_
  std::atomic<bool> rx_in_io_{false};         // rx_ep_ is in io_ep_ (written under rx_mu_)
  bool rx_io_failed_ = false;                 // under rx_mu_: its last ADD to io_ep_ failed
  asio::posix::stream_descriptor rx_desc_;    // io_ep_, in the I/O thread's reactor
  asio::steady_timer rx_timer_;               // the watchdog (arm_watchdog())
  bool rx_watchdog_ = false;                  // I/O thread: the watchdog runs
  boost::system::error_code ignored_;         // I/O thread
  // A poller that finds data at kBusyStreak looks in a row leaves the streams to the I/O
  // thread until busy_until_ (receive()).
  static constexpr int kBusyStreak = 16;
  static constexpr std::chrono::nanoseconds kBusyHandOff = std::chrono::milliseconds(1);
  int busy_streak_ = 0;  // under rx_mu_
  std::atomic<Clock::rep> busy_until_{0};
};

template class Forwarding<tcp_detail::Impl>;

TcpTransport::TcpTransport(TcpConfig config)
    : Forwarding(std::make_unique<tcp_detail::Impl>(std::move(config))) {}
TcpTransport::~TcpTransport() = default;
std::uint16_t TcpTransport::port() const noexcept {
  return impl().port_;
}
LocalRegion TcpTransport::adopt_region(RegionId id, std::span<std::byte> memory) {
  return impl().adopt_region(id, memory);
}

}  // namespace spindle::transport
