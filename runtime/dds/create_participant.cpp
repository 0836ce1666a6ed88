// spindle::detail::create_participant: the one place that turns a domain file into a
// transport and a participant (see spindle/detail/dcps.hpp). It lives in the Spindle::dds
// library, which links the transports; the runtime library itself knows only the contract.
#include <memory>
#include <string>
#include <vector>

#include <dds/core/Exception.hpp>
#include <spindle/detail/dcps.hpp>
#include <spindle/transport/tcp.hpp>
#if SPINDLE_HAVE_SHM
#include <spindle/transport/shm.hpp>
#endif
#if SPINDLE_HAVE_RDMA
#include <spindle/transport/rdma.hpp>
#endif

#include "config/domain_config.hpp"
#include "dcps/entities.hpp"
#include "dcps/wire.hpp"
#include "group/engine.hpp"
#include "group/thread_runtime.hpp"
#include "qos/checks.hpp"

namespace spindle::detail {

namespace {

using config::DomainConfig;
using config::TransportKind;

std::chrono::milliseconds ms(std::chrono::nanoseconds d) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(d);
}

// What every member of the domain must share, exchanged in the transport's handshake: a
// peer whose values differ is refused with both named. "protocol" is the version of what
// the layers above the transport put on the wire (SST rows, SMC slots, discovery records).
std::vector<transport::AgreedSetting> must_agree(const DomainConfig& c) {
  return {{"protocol", "1"},
          {"transport", std::string(config::to_string(c.transport))},
          {"engine.slot_size", std::to_string(c.engine.slot_size)},
          {"engine.window_size", std::to_string(c.engine.window_size)}};
}

std::unique_ptr<transport::Transport> make_transport(const DomainConfig& c) {
  const auto suspicion = ms(c.engine.suspicion_timeout);
  switch (c.transport) {
    case TransportKind::tcp: {
      transport::TcpConfig t;
      t.self = transport::NodeAddress{c.node_id, c.node.host, c.node.port};
      t.suspicion_timeout = suspicion;
      t.heartbeat_interval = std::max(std::chrono::milliseconds(10), suspicion / 5);
      t.domain_id = c.domain_id;
      t.must_agree = must_agree(c);
      return std::make_unique<transport::TcpTransport>(t);
    }
    case TransportKind::shm: {
#if SPINDLE_HAVE_SHM
      transport::ShmConfig t;
      t.self = c.node_id;
      t.name_prefix = c.shm_namespace + ".d" + std::to_string(c.domain_id);
      t.suspicion_timeout = suspicion;
      t.heartbeat_interval = std::max(std::chrono::milliseconds(10), suspicion / 5);
      t.domain_id = c.domain_id;
      t.must_agree = must_agree(c);
      return std::make_unique<transport::ShmTransport>(t);
#else
      throw dds::core::UnsupportedError("transport shm is not built into this Spindle DDS");
#endif
    }
    case TransportKind::rdma: {
#if SPINDLE_HAVE_RDMA
      std::string why;
      if (!transport::rdma_device_available(why)) {
        throw dds::core::Error("transport rdma: no RDMA device here (" + why +
                               "); choose tcp or shm in the domain file");
      }
      transport::RdmaConfig t;
      t.self = transport::NodeAddress{c.node_id, c.node.host, c.node.port};
      t.suspicion_timeout = suspicion;
      return std::make_unique<transport::RdmaTransport>(t);
#else
      throw dds::core::UnsupportedError("transport rdma is not built into this Spindle DDS");
#endif
    }
  }
  throw dds::core::Error("unknown transport");
}

}  // namespace

std::shared_ptr<ParticipantCore> create_participant(
    std::uint32_t domain_id, const dds::domain::qos::DomainParticipantQos& q) {
  qos::check_consistent(q);
  const std::optional<std::uint32_t> wanted =
      domain_id == kDefaultDomain ? std::nullopt : std::optional<std::uint32_t>(domain_id);
  const auto found = config::find_domain_config(wanted);
  const DomainConfig& c = found.config;
  std::unique_ptr<transport::Transport> t;
  try {
    t = make_transport(c);
  } catch (const dds::core::Exception&) {
    throw;
  } catch (const std::exception& e) {
    throw dds::core::Error("domain " + std::to_string(c.domain_id) + ", node " +
                           std::to_string(c.node_id) + " (config: " + found.source +
                           "): cannot start the " + std::string(config::to_string(c.transport)) +
                           " transport: " + e.what());
  }
  group::LayoutSettings layout;
  layout.window_size = c.engine.window_size;
  layout.slot_size = c.engine.slot_size;
  layout.header_size = static_cast<std::uint32_t>(sizeof(dcps::SampleHeader));
  layout.knobs = c.knobs();
  auto engine = std::make_unique<group::Engine>(
      group::first_view(c.initial_members(), layout), std::move(t),
      std::make_unique<group::ThreadRuntime>(), ms(c.engine.connect_timeout), c.domain_id);
  return std::make_shared<dcps::Participant>(c.domain_id, q, std::move(engine));
}

}  // namespace spindle::detail
