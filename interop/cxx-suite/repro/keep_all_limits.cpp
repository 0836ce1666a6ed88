// A RELIABLE KEEP_ALL writer and a RELIABLE KEEP_ALL reader whose ResourceLimits allow 10
// samples: the writer writes 30 while the reader takes nothing, then the reader takes all it
// has. DDS 1.4 (2.2.3.14 RELIABILITY, 2.2.3.18 HISTORY) wants every sample delivered: the
// writer waits (up to max_blocking_time, then TimeoutError) until the reader has room. Spindle
// DDS (at the commit docs/dev/cxx-suite.md names) rejects samples 11 to 30 at the reader and the
// writer never blocks: "took 10 ... rejected 20". Found by the throughput example's polling
// subscriber (run.sh, scenario throughput-polling).
//
//   keep_all_limits both                     one process
//   keep_all_limits reader & keep_all_limits writer     two processes
#include <dds/dds.hpp>

#include <chrono>
#include <iostream>
#include <string>
#include <thread>

#include "Repro.hpp"

using namespace dds::core::policy;

int main(int argc, char** argv) {
  const std::string role = argc > 1 ? argv[1] : "both";
  dds::domain::DomainParticipant dp(dds::domain::default_id());
  dds::topic::Topic<Repro::Msg> topic(dp, "keep_all_limits");
  dds::pub::Publisher pub(dp);
  dds::sub::Subscriber sub(dp);
  dds::sub::DataReader<Repro::Msg> reader(dds::core::null);
  if (role != "writer") {
    reader = dds::sub::DataReader<Repro::Msg>(sub, topic,
                                              sub.default_datareader_qos()
                                                  << Reliability::Reliable() << History::KeepAll()
                                                  << ResourceLimits(10));
  }
  if (role != "reader") {
    dds::pub::DataWriter<Repro::Msg> writer(
        pub, topic,
        pub.default_datawriter_qos()
            << Reliability::Reliable(dds::core::Duration::from_millisecs(500))
            << History::KeepAll());
    while (writer.publication_matched_status().current_count() == 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    int i = 0;
    try {
      for (; i < 30; ++i)
        writer.write(Repro::Msg(i, "x"));
      std::cout << "writer: wrote 30 without blocking\n";
    } catch (const dds::core::TimeoutError& e) {
      std::cout << "writer: write " << i << " timed out (as DDS wants): " << e.what() << '\n';
    }
    if (role == "writer") std::this_thread::sleep_for(std::chrono::seconds(4));
  }
  if (role != "writer") {
    if (role == "reader") std::this_thread::sleep_for(std::chrono::seconds(3));
    int taken = 0;
    for (int round = 0; round < 10; ++round) {
      for (const auto& s : reader.take())
        if (s.info().valid()) ++taken;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    std::cout << "reader: took " << taken << " of the samples written, rejected "
              << reader.sample_rejected_status().total_count() << ", lost "
              << reader.sample_lost_status().total_count() << '\n';
  }
}
