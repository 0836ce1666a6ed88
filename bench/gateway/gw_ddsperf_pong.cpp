// gw_ddsperf_pong: what `ddsperf pong` does for a ping, as a Spindle DDS application through
// the standard DCPS API with ddsperf's own types (ddsperf_types.idl, Spindle's idlc), for
// `ddsperf ping` on the RTPS side of spindle-gateway (docs/dev/interop-bench.md, "ddsperf";
// ddsperf_pong.sh runs it). It reads DDSPerf<R|U>Ping<T> and writes each sample back on
// DDSPerf<R|U>Pong<T> with the ping's source timestamp, its lowest bit set: ddsperf's ping
// takes (now - source timestamp) / 2 as the latency and the bit as "answer to a ping".
//
//   gw_ddsperf_pong [-T KS|K32|K256|OU|UK16|UK1024|S16|S256|S4k|S32k] [-u] [DOMAIN]
//
// KEEP_LAST 1 as ddsperf's ping and pong endpoints; reliable unless -u. Prints "ready" once
// its reader and writer exist and "pongs N" when SIGTERM or SIGINT stops it.
//
// Threading: one application thread (a WaitSet); Spindle's own threads beside it.
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

#include <dds/dds.hpp>

#include "ddsperf_types.hpp"

namespace {

volatile std::sig_atomic_t g_stop = 0;

void on_signal(int) {
  g_stop = 1;
}

template <class T>
int pong(uint32_t domain, bool reliable, const std::string& suffix) {
  const std::string kind = reliable ? "R" : "U";
  dds::domain::DomainParticipant dp(domain);
  dds::topic::Topic<T> t_ping(dp, "DDSPerf" + kind + "Ping" + suffix);
  dds::topic::Topic<T> t_pong(dp, "DDSPerf" + kind + "Pong" + suffix);
  dds::pub::Publisher pub(dp);
  dds::sub::Subscriber sub(dp);
  const auto rel =
      reliable ? dds::core::policy::Reliability::Reliable(dds::core::Duration::from_secs(10))
               : dds::core::policy::Reliability::BestEffort();
  dds::pub::qos::DataWriterQos wq = pub.default_datawriter_qos();
  wq << rel << dds::core::policy::History::KeepLast(1);
  dds::sub::qos::DataReaderQos rq = sub.default_datareader_qos();
  rq << rel << dds::core::policy::History::KeepLast(1);
  dds::pub::DataWriter<T> w(pub, t_pong, wq);
  dds::sub::DataReader<T> r(sub, t_ping, rq);
  dds::core::cond::WaitSet ws;
  dds::sub::cond::ReadCondition rc(r, dds::sub::status::DataState::any());
  ws += rc;
  std::cout << "ready" << std::endl;
  uint64_t pongs = 0;
  while (g_stop == 0) {
    try {
      ws.wait(dds::core::Duration::from_millisecs(200));
    } catch (const dds::core::TimeoutError&) {
      continue;
    }
    for (const auto& s : r.take()) {
      if (!s.info().valid()) continue;
      // ddsperf's pong: dds_write_ts (wr_pong, sample, source_timestamp | 1).
      const auto& ts = s.info().timestamp();
      const int64_t ns = (ts.sec() * 1000000000 + ts.nanosec()) | 1;
      w.write(s.data(), dds::core::Time(ns / 1000000000, static_cast<uint32_t>(ns % 1000000000)));
      ++pongs;
    }
  }
  std::cout << "pongs " << pongs << std::endl;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string topic = "KS";
  bool reliable = true;
  uint32_t domain = 0;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "-T") == 0 && i + 1 < argc) {
      topic = argv[++i];
    } else if (std::strcmp(argv[i], "-u") == 0) {
      reliable = false;
    } else if (argv[i][0] >= '0' && argv[i][0] <= '9') {
      domain = static_cast<uint32_t>(std::atoi(argv[i]));
    } else {
      std::cerr << "usage: gw_ddsperf_pong [-T KS|K32|K256|OU|UK16|UK1024|S16|S256|S4k|S32k] [-u] "
                   "[DOMAIN]\n";
      return 2;
    }
  }
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  try {
    if (topic == "KS") return pong<KeyedSeq>(domain, reliable, topic);
    if (topic == "K32") return pong<Keyed32>(domain, reliable, topic);
    if (topic == "K256") return pong<Keyed256>(domain, reliable, topic);
    if (topic == "OU") return pong<OneULong>(domain, reliable, topic);
    if (topic == "UK16") return pong<Unkeyed16>(domain, reliable, topic);
    if (topic == "UK1024") return pong<Unkeyed1024>(domain, reliable, topic);
    if (topic == "S16") return pong<Struct16>(domain, reliable, topic);
    if (topic == "S256") return pong<Struct256>(domain, reliable, topic);
    if (topic == "S4k") return pong<Struct4k>(domain, reliable, topic);
    if (topic == "S32k") return pong<Struct32k>(domain, reliable, topic);
    std::cerr << "gw_ddsperf_pong: -T " << topic << ": unknown topic\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "gw_ddsperf_pong: " << e.what() << std::endl;
    return 1;
  }
}
