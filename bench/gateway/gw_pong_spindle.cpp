// gw_pong_spindle: the far side of the gateway benchmark's measured path
// (docs/dev/interop-bench.md): a Spindle DDS application through the standard DCPS API with
// GatewayBench::Sample from Spindle's idlc. It reads GatewayBenchPing and answers on
// GatewayBenchPong as the sample's `reply` says (1: echo it whole, 2: acknowledge it with an
// empty payload, 0: nothing), exactly as gw_pong.c does in an RTPS domain; spindle-gateway
// carries both topics between the domains.
//
//   gw_pong_spindle [DOMAIN]
//
// Prints "ready" once its reader and writer exist; runs until SIGTERM or SIGINT.
// Reliable, KEEP_ALL both ways, the domain's default consistency (that of the gateway's
// topics, which name none).
//
// Threading: one application thread (a WaitSet); Spindle's own threads beside it.
#include <csignal>
#include <cstdlib>
#include <iostream>

#include <dds/dds.hpp>

#include "GatewayBench.hpp"

namespace {

volatile std::sig_atomic_t g_stop = 0;

void on_signal(int) {
  g_stop = 1;
}

}  // namespace

int main(int argc, char** argv) {
  using Sample = GatewayBench::Sample;
  const uint32_t domain = argc > 1 ? static_cast<uint32_t>(std::atoi(argv[1])) : 0;
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  try {
    dds::domain::DomainParticipant dp(domain);
    dds::topic::Topic<Sample> t_ping(dp, "GatewayBenchPing"), t_pong(dp, "GatewayBenchPong");
    dds::pub::Publisher pub(dp);
    dds::sub::Subscriber sub(dp);
    dds::pub::qos::DataWriterQos wq = pub.default_datawriter_qos();
    wq << dds::core::policy::Reliability::Reliable(dds::core::Duration::from_secs(10))
       << dds::core::policy::History::KeepAll();
    dds::sub::qos::DataReaderQos rq = sub.default_datareader_qos();
    rq << dds::core::policy::Reliability::Reliable() << dds::core::policy::History::KeepAll();
    dds::pub::DataWriter<Sample> w(pub, t_pong, wq);
    dds::sub::DataReader<Sample> r(sub, t_ping, rq);
    dds::core::cond::WaitSet ws;
    dds::sub::cond::ReadCondition rc(r, dds::sub::status::DataState::any());
    ws += rc;
    std::cout << "ready" << std::endl;
    Sample ack;
    ack.reply(2);
    while (g_stop == 0) {
      try {
        ws.wait(dds::core::Duration::from_millisecs(200));
      } catch (const dds::core::TimeoutError&) {
        continue;
      }
      for (;;) {
        auto samples = r.select().max_samples(256).take();
        for (const auto& s : samples) {
          if (!s.info().valid()) continue;
          if (s.data().reply() == 1) {
            w.write(s.data());
          } else if (s.data().reply() == 2) {
            ack.seq(s.data().seq());
            w.write(ack);
          }
        }
        if (samples.length() < 256) break;
      }
    }
  } catch (const std::exception& e) {
    std::cerr << "gw_pong_spindle: " << e.what() << std::endl;
    return 1;
  }
  return 0;
}
