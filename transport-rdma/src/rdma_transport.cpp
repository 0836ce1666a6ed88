// RDMA transport implementation (model and threading: <spindle/transport/rdma.hpp>).
//
// Connection set-up uses librdmacm: the member with the higher id resolves and connects
// two queue pairs (DATA, BLOCK) to each lower member, carrying ConnectInfo as private
// data; the lower member accepts requests that name a member of its current view and
// epoch, one per queue pair. An attempt that fails before it is established (refused: the
// lower member has not called connect() for this view yet, as a joiner that starts late)
// is made again every kRedialPause until the peer's deadline (connect()'s timeout, or a
// joiner's connect_within: joiners connect in the background, see rdma.hpp). Once DATA is
// established each side sends its region table on it:
//
//   region table message (DATA queue pair, one SEND, <= 4096 entries), made for each peer:
//   +----------+----------+-------------------+-------------------+
//   | id u32   | rkey u32 | size u64          | addr u64          |  x count
//   +----------+----------+-------------------+-------------------+
//
// Rows belong to their owners (transport.hpp). A region nobody restricted is one memory
// region with remote write and its rkey goes to every peer. A restricted region's own
// memory region allows local access only (rkey 0 in the table); each peer gets one memory
// region per range it may write, registered over exactly those bytes, and its table lists
// them after the region's entry as entries of the same id: { id | rkey | length | addr of
// the range }. The peer's writes carry the rkey of the range they fall in, so a write
// anywhere else is refused by the NIC (a remote access error, the writer's completion).
//
// Work request ids: kind (8 bits) << 56 | peer (32 bits) << 16 | slot (16 bits).
#include <arpa/inet.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <netdb.h>
#include <poll.h>
#include <rdma/rdma_cma.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

#include <spindle/transport/forwarding_impl.hpp>
#include <spindle/transport/rdma.hpp>

#include "transport/aligned_buffer.hpp"
#include "transport/event_queue.hpp"
#include "transport/write_grants.hpp"

namespace spindle::transport {

using Clock = std::chrono::steady_clock;

bool rdma_device_available(std::string& why) {
  int n = 0;
  errno = 0;
  ibv_device** list = ibv_get_device_list(&n);
  if (list == nullptr) {
    const int e = errno;
    why = "ibv_get_device_list: " + std::string(std::strerror(e)) + " (errno " + std::to_string(e) +
          "): no RDMA device or driver on this machine";
    return false;
  }
  ibv_free_device_list(list);
  if (n == 0) {
    why = "ibv_get_device_list found no RDMA devices";
    return false;
  }
  return true;
}

namespace {

constexpr std::uint32_t kConnectMagic = 0x53504452;  // "SPDR"
constexpr std::uint32_t kMaxTable = 4096;
constexpr std::uint32_t kDataRecvs = 64;  // zero-byte receives absorbing write immediates
// After a connection attempt failed before it was established, the next one (try_again()).
constexpr std::chrono::milliseconds kRedialPause{20};

enum class Role : std::uint32_t { data = 0, block = 1 };
enum class WrKind : std::uint64_t {
  wake = 1,
  table_recv = 2,
  block_recv = 3,
  write = 4,
  block_send = 5,
  table_send = 6
};

struct ConnectInfo {
  std::uint32_t magic;
  std::uint32_t node;
  std::uint64_t epoch;
  std::uint32_t role;
  std::uint32_t pad;
};

struct WireDescriptor {
  std::uint32_t id;
  std::uint32_t rkey;
  std::uint64_t size;
  std::uint64_t addr;
};

std::uint64_t wr_id(WrKind k, NodeId peer, std::uint32_t slot) {
  return (static_cast<std::uint64_t>(k) << 56) | (std::uint64_t{peer} << 16) | (slot & 0xffff);
}
WrKind wr_kind(std::uint64_t id) {
  return static_cast<WrKind>(id >> 56);
}
NodeId wr_peer(std::uint64_t id) {
  return static_cast<NodeId>((id >> 16) & 0xffffffffu);
}

std::string err(const char* what) {
  return std::string(what) + ": " + std::strerror(errno);
}

void set_nonblocking(int fd) {
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
}

// An IPv4 address, or a host name (localhost) resolved to its first IPv4 address.
sockaddr_in ipv4(const std::string& host, std::uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  if (::inet_pton(AF_INET, host.empty() ? "0.0.0.0" : host.c_str(), &a.sin_addr) == 1) return a;
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  const int rc = ::getaddrinfo(host.c_str(), nullptr, &hints, &res);
  if (rc != 0 || res == nullptr) {
    throw std::invalid_argument("rdma: cannot resolve host '" + host +
                                "' to an IPv4 address: " + ::gai_strerror(rc));
  }
  a.sin_addr = reinterpret_cast<const sockaddr_in*>(res->ai_addr)->sin_addr;
  ::freeaddrinfo(res);
  return a;
}

}  // namespace

class rdma_detail::Impl {
 public:
  // A range one peer may write, registered for it alone.
  struct Window {
    std::uint64_t offset = 0;
    std::uint64_t length = 0;
    ibv_mr* mr = nullptr;  // ours: the peer's rkey
    std::uint32_t rkey = 0;
  };
  struct Region {
    AlignedBuffer mem;
    ibv_mr* mr = nullptr;
    bool restricted = false;
    std::map<NodeId, std::vector<Window>> windows;  // restricted: per writer
  };
  struct Posted {
    RegionId region;
    std::uint64_t offset;
  };
  struct Peer {
    NodeAddress addr;
    rdma_cm_id* ids[2] = {nullptr, nullptr};
    // Set by the thread that handles connection events and completions; read by any (a
    // joiner connects in the background). `remote` and `remote_windows` are written before
    // got_table is set and never after, so a reader that saw ready() reads them safely.
    std::atomic<bool> established[2] = {false, false};
    std::atomic<bool> got_table{false};
    std::atomic<bool> suspected{false};
    bool background = false;       // joining: connect() does not wait for it (connecting())
    Clock::time_point deadline{};  // connect() or the background gives up on it then
    std::atomic<bool> said_connected{false};  // PeerConnected pushed
    // A connection attempt that failed before it was established is made again (the peer
    // had not called connect() for this view yet) until `deadline`: when, per queue pair.
    std::optional<Clock::time_point> redial_at[2];
    std::mutex mu;  // posting to the queue pairs
    std::map<RegionId, RegionDescriptor> remote;
    std::map<RegionId, std::vector<Window>> remote_windows;  // its ranges of ours, rkey each
    std::mutex q_mu;  // posted, sent_imms: shared by posting and completion handling
    std::deque<Posted> posted;
    std::deque<std::uint32_t> sent_imms;
    std::atomic<std::uint32_t> outstanding{0};  // signaled sends not yet completed
    std::vector<WireDescriptor> table_rx = std::vector<WireDescriptor>(kMaxTable);
    ibv_mr* table_rx_mr = nullptr;
    std::vector<WireDescriptor> table_tx;  // what we tell this peer (its own rkeys)
    ibv_mr* table_tx_mr = nullptr;
  };

  explicit Impl(RdmaConfig cfg) : cfg_(std::move(cfg)) {
    std::string why;
    if (!rdma_device_available(why)) throw std::runtime_error("rdma: " + why);
    ch_ = rdma_create_event_channel();
    if (ch_ == nullptr) throw std::runtime_error(err("rdma_create_event_channel"));
    set_nonblocking(ch_->fd);
    if (rdma_create_id(ch_, &listen_, nullptr, RDMA_PS_TCP) != 0) {
      throw std::runtime_error(err("rdma_create_id"));
    }
    const std::string& host = cfg_.bind.empty() ? cfg_.self.host : cfg_.bind;
    sockaddr_in a = ipv4(host, cfg_.self.port);
    if (rdma_bind_addr(listen_, reinterpret_cast<sockaddr*>(&a)) != 0) {
      throw std::runtime_error(err(("rdma_bind_addr " + host).c_str()));
    }
    if (rdma_listen(listen_, 64) != 0) throw std::runtime_error(err("rdma_listen"));
    port_ = ntohs(rdma_get_src_port(listen_));
    ctx_ = listen_->verbs;
    if (ctx_ == nullptr) {
      int n = 0;
      ibv_device** list = ibv_get_device_list(&n);
      if (list != nullptr && n > 0) ctx_ = owned_ctx_ = ibv_open_device(list[0]);
      if (list != nullptr) ibv_free_device_list(list);
      if (ctx_ == nullptr) throw std::runtime_error("rdma: cannot open a device");
    }
    pd_ = ibv_alloc_pd(ctx_);
    cc_ = ibv_create_comp_channel(ctx_);
    if (pd_ == nullptr || cc_ == nullptr) throw std::runtime_error(err("rdma: pd/channel"));
    set_nonblocking(cc_->fd);
    wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (wake_fd_ < 0) throw std::runtime_error(err("rdma: eventfd"));
    cq_ = ibv_create_cq(ctx_, static_cast<int>(cfg_.queue_depth * 16), nullptr, cc_, 0);
    if (cq_ == nullptr) throw std::runtime_error(err("ibv_create_cq"));
  }

  ~Impl() {
    disconnect();
    for (auto& [id, r] : regions_)
      deregister(r);
    if (cq_ != nullptr) ibv_destroy_cq(cq_);
    if (cc_ != nullptr) ibv_destroy_comp_channel(cc_);
    if (pd_ != nullptr) ibv_dealloc_pd(pd_);
    if (owned_ctx_ != nullptr) ibv_close_device(owned_ctx_);
    if (listen_ != nullptr) rdma_destroy_id(listen_);
    if (ch_ != nullptr) rdma_destroy_event_channel(ch_);
    if (wake_fd_ >= 0) ::close(wake_fd_);
  }

  LocalRegion create_region(RegionId id, std::size_t size) {
    if (connected_) throw std::logic_error("rdma: create_region while connected");
    if (regions_.contains(id)) throw std::invalid_argument("rdma: region exists");
    Region r;
    r.mem = AlignedBuffer(size);
    r.mr = ibv_reg_mr(pd_, r.mem.data(), size, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    if (r.mr == nullptr) {
      throw std::runtime_error(
          err(("rdma: registering " + std::to_string(size) + " bytes").c_str()) +
          " (raise the memlock limit: ulimit -l)");
    }
    auto span = r.mem.span();
    regions_.emplace(id, std::move(r));
    return LocalRegion{id, span};
  }

  void release_region(RegionId id) {
    if (connected_) throw std::logic_error("rdma: release_region while connected");
    const auto it = regions_.find(id);
    if (it == regions_.end()) return;
    deregister(it->second);
    regions_.erase(it);
    grants_.release(id);
  }

  void deregister(Region& r) {
    drop_windows(r);
    if (r.mr != nullptr) ibv_dereg_mr(r.mr);
    r.mr = nullptr;
  }

  void drop_windows(Region& r) {
    for (auto& [writer, v] : r.windows)
      for (auto& w : v)
        if (w.mr != nullptr) ibv_dereg_mr(w.mr);
    r.windows.clear();
  }

  ibv_mr* register_mr(void* at, std::size_t size, unsigned access) {
    ibv_mr* mr = ibv_reg_mr(pd_, at, size, access);
    if (mr == nullptr) {
      throw std::runtime_error(
          err(("rdma: registering " + std::to_string(size) + " bytes").c_str()) +
          " (raise the memlock limit: ulimit -l)");
    }
    return mr;
  }

  // The region's memory region loses remote write; each writer gets one per range of its
  // grant (merged), which is all its rkeys reach.
  void restrict_writes(RegionId id, std::span<const WriteGrant> grants) {
    if (connected_) throw std::logic_error("rdma: restrict_writes while connected");
    const auto it = regions_.find(id);
    if (it == regions_.end())
      throw std::invalid_argument("rdma: restrict_writes: no region " + std::to_string(id));
    Region& r = it->second;
    WriteGrants& table = grants_;
    table.restrict(id, r.mem.size(), grants);  // validates and merges
    std::size_t windows = 0;
    for (const auto& g : grants)
      if (g.writer != cfg_.self.id) windows = std::max(windows, table.ranges(g.writer, id).size());
    if (windows + regions_.size() > kMaxTable) {
      throw std::invalid_argument("rdma: restrict_writes: region " + std::to_string(id) +
                                  " needs " + std::to_string(windows) +
                                  " ranges for one peer; the region " + "table holds " +
                                  std::to_string(kMaxTable) + " entries");
    }
    drop_windows(r);
    if (!r.restricted) {
      ibv_mr* local = register_mr(r.mem.data(), r.mem.size(), IBV_ACCESS_LOCAL_WRITE);
      ibv_dereg_mr(r.mr);
      r.mr = local;
      r.restricted = true;
    }
    for (const auto& g : grants) {
      if (g.writer == cfg_.self.id || r.windows.contains(g.writer)) continue;
      auto& v = r.windows[g.writer];
      for (const auto& range : table.ranges(g.writer, id)) {
        Window w{range.offset, range.length, nullptr, 0};
        w.mr = register_mr(r.mem.data() + range.offset, range.length,
                           IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
        w.rkey = w.mr->rkey;
        v.push_back(w);
      }
    }
  }

  // ------------------------------------------------------------------ connection set-up
  void create_qp(Peer& p, rdma_cm_id* id, Role role) {
    ibv_qp_init_attr attr{};
    attr.send_cq = cq_;
    attr.recv_cq = cq_;
    attr.qp_type = IBV_QPT_RC;
    attr.cap.max_send_wr = cfg_.queue_depth;
    attr.cap.max_recv_wr = cfg_.queue_depth;
    attr.cap.max_send_sge = 1;
    attr.cap.max_recv_sge = 1;
    attr.cap.max_inline_data = cfg_.max_inline;
    if (rdma_create_qp(id, pd_, &attr) != 0) throw std::runtime_error(err("rdma_create_qp"));
    id->context = &p;
    p.ids[static_cast<int>(role)] = id;
    if (role == Role::data) {
      if (p.table_rx_mr != nullptr) ibv_dereg_mr(p.table_rx_mr);  // an attempt that failed
      // As an int: verbs.h's ibv_reg_mr macro masks it with another enum's constant.
      p.table_rx_mr = ibv_reg_mr(pd_, p.table_rx.data(), sizeof(WireDescriptor) * kMaxTable,
                                 static_cast<int>(IBV_ACCESS_LOCAL_WRITE));
      ibv_sge sge{reinterpret_cast<std::uintptr_t>(p.table_rx.data()),
                  static_cast<std::uint32_t>(sizeof(WireDescriptor) * kMaxTable),
                  p.table_rx_mr->lkey};
      ibv_recv_wr wr{};
      wr.wr_id = wr_id(WrKind::table_recv, p.addr.id, 0);
      wr.sg_list = &sge;
      wr.num_sge = 1;
      ibv_recv_wr* bad = nullptr;
      (void)ibv_post_recv(id->qp, &wr, &bad);
      for (std::uint32_t i = 0; i < kDataRecvs; ++i)
        post_wake_recv(p);
    }
  }

  void post_wake_recv(Peer& p) {
    ibv_recv_wr wr{};
    wr.wr_id = wr_id(WrKind::wake, p.addr.id, 0);
    ibv_recv_wr* bad = nullptr;
    (void)ibv_post_recv(p.ids[0]->qp, &wr, &bad);
  }

  // The table this peer gets: every region, and for a restricted one the peer's own ranges.
  void send_table(Peer& p) {
    auto& t = p.table_tx;
    t.clear();
    for (auto& [id, r] : regions_) {
      const auto base = reinterpret_cast<std::uintptr_t>(r.mem.data());
      t.push_back(WireDescriptor{id, r.restricted ? 0 : r.mr->rkey, r.mem.size(), base});
      const auto w = r.windows.find(p.addr.id);
      if (w == r.windows.end()) continue;
      for (const auto& win : w->second)
        t.push_back(WireDescriptor{id, win.rkey, win.length, base + win.offset});
    }
    if (t.size() > kMaxTable) {
      suspect(p, SuspicionReason::completion_error,
              "region table for node " + std::to_string(p.addr.id) + " has " +
                  std::to_string(t.size()) + " entries, over " + std::to_string(kMaxTable));
      return;
    }
    const std::size_t entries = t.size();
    if (t.empty()) t.resize(1);  // memory to register even for a table of no entries
    if (p.table_tx_mr != nullptr) ibv_dereg_mr(p.table_tx_mr);
    p.table_tx_mr = ibv_reg_mr(pd_, t.data(), sizeof(WireDescriptor) * t.size(), 0);
    if (p.table_tx_mr == nullptr) {
      suspect(p, SuspicionReason::completion_error, err("registering the region table"));
      return;
    }
    ibv_sge sge{reinterpret_cast<std::uintptr_t>(t.data()),
                static_cast<std::uint32_t>(sizeof(WireDescriptor) * entries), p.table_tx_mr->lkey};
    ibv_send_wr wr{};
    wr.wr_id = wr_id(WrKind::table_send, p.addr.id, 0);
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED;
    ibv_send_wr* bad = nullptr;
    if (ibv_post_send(p.ids[0]->qp, &wr, &bad) != 0) {
      suspect(p, SuspicionReason::completion_error, err("posting the region table"));
      return;
    }
    ++p.outstanding;  // its completion (table_send) counts it off as any signaled send
  }

  Status connect(std::span<const NodeAddress> members, std::uint64_t epoch,
                 std::chrono::milliseconds timeout) {
    if (connected_) disconnect();
    epoch_ = epoch;
    const auto start = Clock::now();
    bool background = false;
    for (const auto& m : members) {
      if (m.id == cfg_.self.id) continue;
      auto p = std::make_unique<Peer>();
      p->addr = m;
      p->background = m.connect_within.count() > 0;
      p->deadline = give_up_on(m, start, start + timeout);
      background = background || p->background;
      peers_.emplace(m.id, std::move(p));
    }
    background_pending_ = background;
    connected_ = true;
    for (auto& [id, p] : peers_) {
      if (id > cfg_.self.id) continue;  // they dial us
      for (Role role : {Role::data, Role::block})
        dial(*p, role);
    }
    const auto deadline = start + timeout;
    while (Clock::now() < deadline && !all_ready()) {
      pollfd fds[2] = {{ch_->fd, POLLIN, 0}, {cc_->fd, POLLIN, 0}};
      (void)::poll(fds, 2, 10);
      handle_cm_events();
      redial_due();
      reap();
    }
    Status result = Status::ok;
    for (auto& [id, p] : peers_) {
      if (ready(*p)) continue;
      // A joiner connects in the background (PeerConnected once it did, poll() gives up on
      // it at its deadline); the SST suspects it too if its heartbeat never starts.
      if (p->background && !p->suspected) continue;
      result = Status::peer_suspected;
      suspect(*p, SuspicionReason::connect_timeout,
              "no RDMA connection to node " + std::to_string(id) + " at " + p->addr.host + ":" +
                  std::to_string(p->addr.port) + " within the connect timeout");
    }
    return result;
  }

  // Dials `p` (a lower id) on one queue pair: resolves its address, and the connection
  // events take it on (handle_cm_events).
  void dial(Peer& p, Role role) {
    const int r = static_cast<int>(role);
    p.redial_at[r].reset();
    rdma_cm_id* cid = nullptr;
    if (rdma_create_id(ch_, &cid, &p, RDMA_PS_TCP) != 0) {
      suspect(p, SuspicionReason::connect_timeout, err("rdma_create_id"));
      return;
    }
    p.ids[r] = cid;
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(p.deadline - Clock::now()).count();
    const int resolve_ms = static_cast<int>(std::clamp<std::int64_t>(left, 10, 5000));
    sockaddr_in dst = ipv4(p.addr.host, p.addr.port);
    if (rdma_resolve_addr(cid, nullptr, reinterpret_cast<sockaddr*>(&dst), resolve_ms) != 0)
      suspect(p, SuspicionReason::connect_timeout, err("rdma_resolve_addr"));
  }

  // A connection attempt of `p`'s queue pair `role` failed before it was established: while
  // its deadline allows, its id goes (after the event is acknowledged) and, where we dial,
  // it is dialed again shortly. A peer that installs the view a moment after us, or a joiner
  // that has not called connect() yet, refuses the first request. False: give up on it.
  bool try_again(Peer& p, rdma_cm_id* id, int role) {
    const auto now = Clock::now();
    if (p.suspected || p.established[role] || p.ids[role] != id || now + kRedialPause >= p.deadline)
      return false;
    p.ids[role] = nullptr;
    retired_.push_back(id);
    if (p.addr.id < cfg_.self.id) {
      p.redial_at[role] = now + kRedialPause;
      redial_pending_ = true;
    }
    return true;
  }

  // Ids retired by try_again(), destroyed once their events are acknowledged (cm_mu held).
  void destroy_retired() {
    for (auto* id : retired_) {
      if (id->qp != nullptr) rdma_destroy_qp(id);
      rdma_destroy_id(id);
    }
    retired_.clear();
  }

  // Dials again the queue pairs whose pause after a failed attempt is over (poll(), connect()).
  void redial_due() {
    if (!redial_pending_) return;
    std::lock_guard cm(cm_mu_);
    const auto now = Clock::now();
    bool pending = false;
    for (auto& [id, p] : peers_) {
      for (Role role : {Role::data, Role::block}) {
        auto& at = p->redial_at[static_cast<int>(role)];
        if (!at) continue;
        if (p->suspected) {
          at.reset();
        } else if (now >= *at) {
          dial(*p, role);
        } else {
          pending = true;
        }
      }
    }
    redial_pending_ = pending;
  }

  static bool ready(const Peer& p) { return p.established[0] && p.established[1] && p.got_table; }
  bool all_ready() const {
    for (auto& [id, p] : peers_) {
      if (!ready(*p) && !p->suspected && !p->background) return false;
    }
    return true;
  }

  // A joiner that connect() left to the background is connected now: said once.
  void maybe_connected(Peer& p) {
    if (p.background && ready(p) && !p.suspected && !p.said_connected.exchange(true))
      push_event(PeerConnected{p.addr.id});
  }

  // What a write, block or receive for `p` gets while it is not connected: a joiner still
  // connecting is asked to retry; anyone else is suspected.
  static Status not_ready(const Peer& p) {
    return p.background && !p.suspected ? Status::retry : Status::peer_suspected;
  }

  bool connecting(NodeId peer) const {
    const Peer* p = find(peer);
    return p != nullptr && p->background && !ready(*p) && !p->suspected;
  }

  // Joiners past their deadline, still not connected, are suspected (poll()).
  void give_up_on_late_joiners() {
    if (!background_pending_) return;
    const auto now = Clock::now();
    bool pending = false;
    for (auto& [id, p] : peers_) {
      if (!p->background || ready(*p) || p->suspected) continue;
      if (now < p->deadline) {
        pending = true;
        continue;
      }
      suspect(*p, SuspicionReason::connect_timeout,
              "node " + std::to_string(id) + " joining at " + p->addr.host + ":" +
                  std::to_string(p->addr.port) + " made no RDMA connection within its " +
                  std::to_string(p->addr.connect_within.count()) + " ms");
    }
    background_pending_ = pending;
  }

  void handle_cm_events() {
    std::lock_guard cm(cm_mu_);
    rdma_cm_event* ev = nullptr;
    while (rdma_get_cm_event(ch_, &ev) == 0) {
      rdma_cm_id* id = ev->id;
      auto* p = static_cast<Peer*>(id->context);
      const int role_of = (p != nullptr && p->ids[1] == id) ? 1 : 0;
      switch (ev->event) {
        case RDMA_CM_EVENT_ADDR_RESOLVED:
          if (rdma_resolve_route(id, 2000) != 0 && p) {
            suspect(*p, SuspicionReason::connect_timeout, err("rdma_resolve_route"));
          }
          break;
        case RDMA_CM_EVENT_ROUTE_RESOLVED: {
          if (p == nullptr) break;
          try {
            create_qp(*p, id, static_cast<Role>(role_of));
          } catch (const std::exception& e) {
            suspect(*p, SuspicionReason::connect_timeout, e.what());
            break;
          }
          ConnectInfo info{kConnectMagic, cfg_.self.id, epoch_, static_cast<std::uint32_t>(role_of),
                           0};
          rdma_conn_param param{};
          param.private_data = &info;
          param.private_data_len = sizeof info;
          param.retry_count = 7;
          param.rnr_retry_count = 7;  // a block waits for its receive
          if (rdma_connect(id, &param) != 0) {
            suspect(*p, SuspicionReason::connect_timeout, err("rdma_connect"));
          }
          break;
        }
        case RDMA_CM_EVENT_CONNECT_REQUEST:
          accept(id, ev->param.conn);
          break;
        case RDMA_CM_EVENT_ESTABLISHED:
          if (p != nullptr) {
            // The table goes out before the peer counts as ready, so that no write is posted
            // to it ahead of (or beside) the table's send.
            if (role_of == 0) send_table(*p);
            p->established[role_of] = true;
            maybe_connected(*p);
          }
          break;
        case RDMA_CM_EVENT_DISCONNECTED:
          if (p != nullptr) {
            suspect(*p, SuspicionReason::connection_lost,
                    "node " + std::to_string(p->addr.id) + " disconnected");
          }
          break;
        case RDMA_CM_EVENT_ADDR_ERROR:
        case RDMA_CM_EVENT_ROUTE_ERROR:
        case RDMA_CM_EVENT_CONNECT_ERROR:
        case RDMA_CM_EVENT_UNREACHABLE:
        case RDMA_CM_EVENT_REJECTED:
          if (p != nullptr && !try_again(*p, id, role_of)) {
            suspect(*p, SuspicionReason::connect_timeout,
                    std::string("connection set-up failed: ") + rdma_event_str(ev->event));
          }
          break;
        default:
          break;
      }
      rdma_ack_cm_event(ev);
    }
    destroy_retired();
  }

  void accept(rdma_cm_id* id, const rdma_conn_param& req) {
    ConnectInfo info{};
    if (req.private_data == nullptr || req.private_data_len < sizeof info) {
      rdma_reject(id, nullptr, 0);
      return;
    }
    std::memcpy(&info, req.private_data, sizeof info);
    auto it = peers_.find(info.node);
    if (info.magic != kConnectMagic || info.epoch != epoch_ || it == peers_.end() ||
        info.node <= cfg_.self.id || info.role > 1) {
      rdma_reject(id, nullptr, 0);
      return;
    }
    Peer& p = *it->second;
    // This queue pair has a connection, or an attempt whose end we have not seen yet: the
    // peer asks again (try_again()) once that one is over.
    if (p.ids[info.role] != nullptr) {
      rdma_reject(id, nullptr, 0);
      return;
    }
    try {
      create_qp(p, id, static_cast<Role>(info.role));
    } catch (const std::exception&) {
      rdma_reject(id, nullptr, 0);
      return;
    }
    rdma_conn_param param{};
    param.retry_count = 7;
    param.rnr_retry_count = 7;
    if (rdma_accept(id, &param) != 0) {
      suspect(p, SuspicionReason::connect_timeout, err("rdma_accept"));
    }
  }

  void disconnect() {
    if (!connected_) return;
    for (auto& [id, p] : peers_) {
      for (auto*& cid : p->ids) {
        if (cid == nullptr) continue;
        rdma_disconnect(cid);
        if (cid->qp != nullptr) rdma_destroy_qp(cid);
        rdma_destroy_id(cid);
        cid = nullptr;
      }
      if (p->table_rx_mr != nullptr) ibv_dereg_mr(p->table_rx_mr);
      if (p->table_tx_mr != nullptr) ibv_dereg_mr(p->table_tx_mr);
    }
    reap();  // flush completions that still name these peers
    peers_.clear();
    connected_ = false;
    events_.clear();
  }

  // ------------------------------------------------------------------ data plane
  Peer* find(NodeId id) const {
    auto it = peers_.find(id);
    return it == peers_.end() ? nullptr : it->second.get();
  }

  Status post(Peer& p, Role role, ibv_send_wr& wr) {
    if (p.outstanding + 1 >= cfg_.queue_depth) {
      reap();
      if (p.outstanding + 1 >= cfg_.queue_depth) return Status::retry;
    }
    ibv_send_wr* bad = nullptr;
    const int rc = ibv_post_send(p.ids[static_cast<int>(role)]->qp, &wr, &bad);
    if (rc == ENOMEM) return Status::retry;
    if (rc != 0) {
      suspect(p, SuspicionReason::completion_error,
              "ibv_post_send: " + std::string(std::strerror(rc)));
      return Status::peer_suspected;
    }
    ++p.outstanding;
    return Status::ok;
  }

  Status write(NodeId peer, RegionId local, std::uint64_t loff, RegionId remote, std::uint64_t roff,
               std::size_t len) {
    auto src = regions_.find(local);
    if (src == regions_.end() || !in_bounds(loff, len, src->second.mem.size()) ||
        len > UINT32_MAX) {
      return Status::invalid;
    }
    Peer* p = find(peer);
    if (p == nullptr || p->suspected) return Status::peer_suspected;
    if (!ready(*p)) return not_ready(*p);
    std::lock_guard lock(p->mu);
    auto r = p->remote.find(remote);
    if (r == p->remote.end() || !in_bounds(roff, len, r->second.size)) return Status::invalid;
    // Outside what the view lets us write there: our caller's bug (as on shm).
    if (!grants_.allows(cfg_.self.id, remote, roff, len)) return Status::invalid;
    std::uint32_t rkey = r->second.rkey;
    if (rkey == 0) {
      // Restricted by the peer: the rkey of its range this write lies in. A range of ours it
      // gave no key for is the peer's fault (a table that does not match the view).
      const auto w = p->remote_windows.find(remote);
      const Window* hit = nullptr;
      if (w != p->remote_windows.end()) {
        for (const auto& win : w->second) {
          if (roff >= win.offset && roff - win.offset <= win.length &&
              len <= win.length - (roff - win.offset)) {
            hit = &win;
            break;
          }
        }
      }
      if (hit == nullptr) {
        suspect(*p, SuspicionReason::unknown_region,
                "node " + std::to_string(peer) + " gave no key for [" + std::to_string(roff) +
                    ", +" + std::to_string(len) + ") of its region " + std::to_string(remote) +
                    ", which this node may write");
        return Status::peer_suspected;
      }
      rkey = hit->rkey;
    }
    ibv_sge sge{reinterpret_cast<std::uintptr_t>(src->second.mem.data() + loff),
                static_cast<std::uint32_t>(len), src->second.mr->lkey};
    ibv_send_wr wr{};
    wr.wr_id = wr_id(WrKind::write, peer, 0);
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
    wr.imm_data = htonl(0);
    wr.send_flags = IBV_SEND_SIGNALED;
    if (len <= cfg_.max_inline) wr.send_flags |= IBV_SEND_INLINE;
    wr.wr.rdma.remote_addr = r->second.remote_addr + roff;
    wr.wr.rdma.rkey = rkey;
    return post(*p, Role::data, wr);
  }

  Status send_block(NodeId peer, RegionId local, std::uint64_t offset, std::uint32_t length,
                    std::uint32_t immediate) {
    auto src = regions_.find(local);
    if (src == regions_.end() || !in_bounds(offset, length, src->second.mem.size())) {
      return Status::invalid;
    }
    Peer* p = find(peer);
    if (p == nullptr || p->suspected) return Status::peer_suspected;
    if (!ready(*p)) return not_ready(*p);
    std::lock_guard lock(p->mu);
    ibv_sge sge{reinterpret_cast<std::uintptr_t>(src->second.mem.data() + offset), length,
                src->second.mr->lkey};
    ibv_send_wr wr{};
    wr.wr_id = wr_id(WrKind::block_send, peer, 0);
    {
      std::lock_guard q(p->q_mu);
      p->sent_imms.push_back(immediate);
    }
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND_WITH_IMM;
    wr.imm_data = htonl(immediate);
    wr.send_flags = IBV_SEND_SIGNALED;
    const Status s = post(*p, Role::block, wr);
    if (s != Status::ok) {
      std::lock_guard q(p->q_mu);
      p->sent_imms.pop_back();
    }
    return s;
  }

  Status post_receive(NodeId peer, RegionId local, std::uint64_t offset, std::uint32_t capacity) {
    auto dst = regions_.find(local);
    if (dst == regions_.end() || !in_bounds(offset, capacity, dst->second.mem.size())) {
      return Status::invalid;
    }
    Peer* p = find(peer);
    if (p == nullptr || p->suspected) return Status::peer_suspected;
    if (!ready(*p)) return not_ready(*p);
    std::lock_guard lock(p->mu);
    ibv_sge sge{reinterpret_cast<std::uintptr_t>(dst->second.mem.data() + offset), capacity,
                dst->second.mr->lkey};
    ibv_recv_wr wr{};
    wr.wr_id = wr_id(WrKind::block_recv, peer, 0);
    wr.sg_list = &sge;
    wr.num_sge = 1;
    ibv_recv_wr* bad = nullptr;
    const int rc = ibv_post_recv(p->ids[1]->qp, &wr, &bad);
    if (rc == ENOMEM) return Status::retry;
    if (rc != 0) return Status::invalid;
    std::lock_guard q(p->q_mu);
    p->posted.push_back(Posted{local, offset});
    return Status::ok;
  }

  // Reaps completions: block events, wake-ups, errors (-> suspicions).
  void reap() {
    std::lock_guard lock(cq_mu_);
    ibv_wc wc[32];
    int n = 0;
    while ((n = ibv_poll_cq(cq_, 32, wc)) > 0) {
      activity_.fetch_add(1);
      for (int i = 0; i < n; ++i)
        complete(wc[i]);
    }
  }

  void complete(const ibv_wc& wc) {
    Peer* p = find(wr_peer(wc.wr_id));
    if (p == nullptr) return;  // from a view already torn down
    const WrKind kind = wr_kind(wc.wr_id);
    if (wc.status != IBV_WC_SUCCESS) {
      // Flushed: the peer is suspected already, or a connection attempt that failed before
      // it was established was torn down (its connection events decide, try_again()).
      if (wc.status == IBV_WC_WR_FLUSH_ERR && (p->suspected || !ready(*p))) return;
      suspect(*p,
              wc.status == IBV_WC_LOC_LEN_ERR ? SuspicionReason::block_overflow
                                              : SuspicionReason::completion_error,
              std::string("work completion from node ") + std::to_string(p->addr.id) + ": " +
                  ibv_wc_status_str(wc.status));
      return;
    }
    switch (kind) {
      case WrKind::wake:
        post_wake_recv(*p);
        break;
      case WrKind::table_recv: {
        const std::uint32_t count = wc.byte_len / sizeof(WireDescriptor);
        for (std::uint32_t i = 0; i < count && i < kMaxTable; ++i) {
          const auto& d = p->table_rx[i];
          const auto known = p->remote.find(d.id);
          if (known == p->remote.end()) {
            p->remote[d.id] = RegionDescriptor{d.id, d.size, d.addr, d.rkey};
          } else if (d.addr >= known->second.remote_addr) {
            // A range of a restricted region that this node may write.
            p->remote_windows[d.id].push_back(
                Window{d.addr - known->second.remote_addr, d.size, nullptr, d.rkey});
          }
        }
        p->got_table = true;
        maybe_connected(*p);
        break;
      }
      case WrKind::block_recv: {
        Posted dst{};
        {
          std::lock_guard pl(p->q_mu);
          if (p->posted.empty()) return;
          dst = p->posted.front();
          p->posted.pop_front();
        }
        push_event(
            BlockReceived{p->addr.id, dst.region, dst.offset, wc.byte_len, ntohl(wc.imm_data)});
        break;
      }
      case WrKind::block_send: {
        std::uint32_t imm = 0;
        p->outstanding.fetch_sub(1);
        {
          std::lock_guard pl(p->q_mu);
          if (p->sent_imms.empty()) return;
          imm = p->sent_imms.front();
          p->sent_imms.pop_front();
        }
        push_event(BlockSent{p->addr.id, imm});
        break;
      }
      case WrKind::write:
      case WrKind::table_send:
        p->outstanding.fetch_sub(1);
        break;
    }
  }

  void suspect(Peer& p, SuspicionReason reason, std::string detail) {
    if (p.suspected.exchange(true)) return;
    push_event(Suspicion{p.addr.id, reason, std::move(detail)});
  }

  void push_event(Event e) {
    events_.push(std::move(e));
    activity_.fetch_add(1);
  }

  std::size_t poll(std::vector<Event>& out) {
    handle_cm_events();
    redial_due();
    reap();
    give_up_on_late_joiners();
    return events_.drain(out);
  }

  // A local wake-up: the eventfd is written only while some thread sleeps in wait()
  // (`sleepers_` is published before the ticket is re-checked, so none is lost).
  [[nodiscard]] NodeId self() const noexcept { return cfg_.self.id; }
  [[nodiscard]] std::uint64_t activity() const noexcept { return activity_.load(); }
  std::optional<RegionDescriptor> remote_region(NodeId peer, RegionId id) const {
    auto* p = find(peer);
    if (p == nullptr || !ready(*p)) return std::nullopt;  // a joiner not connected yet
    std::lock_guard lock(p->mu);
    auto it = p->remote.find(id);
    if (it == p->remote.end()) return std::nullopt;
    return it->second;
  }
  std::optional<LocalRegion> local_region(RegionId id) const {
    auto it = regions_.find(id);
    if (it == regions_.end()) return std::nullopt;
    return LocalRegion{id, it->second.mem.span()};
  }

  void notify() noexcept {
    activity_.fetch_add(1);
    if (sleepers_.load() > 0) {
      const std::uint64_t one = 1;
      (void)!::write(wake_fd_, &one, sizeof one);
    }
  }

  void wait(std::uint64_t ticket, std::chrono::nanoseconds timeout) {
    if (activity_.load() != ticket) return;
    (void)ibv_req_notify_cq(cq_, 0);
    reap();  // a completion that raced the arming
    sleepers_.fetch_add(1);
    struct Leave {
      std::atomic<int>& n;
      ~Leave() { n.fetch_sub(1); }
    } leave{sleepers_};
    if (activity_.load() != ticket) return;
    pollfd fds[3] = {{cc_->fd, POLLIN, 0}, {ch_->fd, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    const auto ms = std::chrono::ceil<std::chrono::milliseconds>(timeout).count();
    if (::poll(fds, 3, static_cast<int>(std::min<std::int64_t>(ms, INT32_MAX))) > 0 &&
        (fds[2].revents & POLLIN) != 0) {
      std::uint64_t drained = 0;
      (void)!::read(wake_fd_, &drained, sizeof drained);
    }
    if ((fds[0].revents & POLLIN) != 0) {
      ibv_cq* cq = nullptr;
      void* ctx = nullptr;
      if (ibv_get_cq_event(cc_, &cq, &ctx) == 0) ibv_ack_cq_events(cq, 1);
      reap();
    }
    if ((fds[1].revents & POLLIN) != 0) handle_cm_events();
  }

  RdmaConfig cfg_;
  rdma_event_channel* ch_ = nullptr;
  rdma_cm_id* listen_ = nullptr;
  ibv_context* ctx_ = nullptr;
  ibv_context* owned_ctx_ = nullptr;
  ibv_pd* pd_ = nullptr;
  ibv_comp_channel* cc_ = nullptr;
  ibv_cq* cq_ = nullptr;
  std::uint16_t port_ = 0;
  std::map<RegionId, Region> regions_;
  WriteGrants grants_;  // as regions_: changed only while disconnected
  std::map<NodeId, std::unique_ptr<Peer>> peers_;
  std::uint64_t epoch_ = 0;
  bool connected_ = false;
  std::atomic<bool> background_pending_{false};  // a joiner connect() left to the background
  std::atomic<bool> redial_pending_{false};      // a Peer::redial_at is set
  std::vector<rdma_cm_id*> retired_;             // try_again(); under cm_mu_
  std::mutex cm_mu_;
  std::mutex cq_mu_;
  std::atomic<std::uint64_t> activity_{0};
  int wake_fd_ = -1;  // notify() -> wait()
  std::atomic<int> sleepers_{0};
  EventQueue events_;
};

template class Forwarding<rdma_detail::Impl>;

RdmaTransport::RdmaTransport(RdmaConfig config)
    : Forwarding(std::make_unique<rdma_detail::Impl>(std::move(config))) {}
RdmaTransport::~RdmaTransport() = default;
std::uint16_t RdmaTransport::port() const noexcept {
  return impl().port_;
}

}  // namespace spindle::transport
