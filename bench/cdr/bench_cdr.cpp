// Serialize/deserialize throughput of idlc-generated code against hand-written Fast-CDR
// calls for the same values, measured in one run. Prints Google Benchmark's table, then one
// ratio line per case: generated time / hand time (1.00 = as fast as hand code; the target
// is <= 1.10).
//
//   bench_cdr [--smoke] [google benchmark flags]
#include <benchmark/benchmark.h>

#include <spindle/cdr/serialize.hpp>

#include <fastcdr/Cdr.h>
#include <fastcdr/FastBuffer.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "Sequence.hpp"
#include "avionics.hpp"

namespace {

using eprosima::fastcdr::Cdr;
using eprosima::fastcdr::FastBuffer;

Bench::Sequence make_sequence() {
  Bench::Sequence s;
  s.writer_id(3);
  s.seq(123456);
  s.send_time_ns(987654321);
  s.payload(std::vector<uint8_t>(10 * 1024 - 24, 0x5A));  // 10 KB on the wire
  return s;
}

Avionics::FlightState make_flight_state() {
  Avionics::FlightState fs;
  fs.aircraft_id(42);
  fs.callsign("SPN042");
  fs.timestamp_ns(123456789);
  fs.position(Avionics::Position(48.35, 11.78, 10668.0F));
  fs.heading_deg(271.5F);
  fs.ground_speed_mps(231.0F);
  fs.vertical_speed_mps(-1.5F);
  fs.phase(Avionics::FlightPhase::CRUISE);
  fs.status(Avionics::SystemStatus::AUTOPILOT_ENGAGED);
  return fs;
}

// ---- hand-written references: the same Fast-CDR calls a careful engineer writes by hand,
// with the checks the IDL asks for (callsign bound, @range on heading, enum values), so that
// both sides do the same job.
void check_flight_state(const Avionics::FlightState& f, uint32_t phase) {
  if (f.callsign().size() > 8) throw std::length_error("callsign longer than 8");
  if (f.heading_deg() < 0.0F || f.heading_deg() > 360.0F) throw std::out_of_range("heading");
  if (phase > 7) throw std::out_of_range("phase");
}

size_t hand_write(const Bench::Sequence& s, char* buf, size_t cap) {
  FastBuffer fb(buf, cap);
  Cdr cdr(fb, Cdr::DEFAULT_ENDIAN, Cdr::DDS_CDR);
  cdr.serialize_encapsulation();
  cdr << s.writer_id() << s.seq() << s.send_time_ns() << s.payload();
  return cdr.getSerializedDataLength();
}
void hand_read(Bench::Sequence& s, char* buf, size_t len) {
  FastBuffer fb(buf, len);
  Cdr cdr(fb, Cdr::DEFAULT_ENDIAN, Cdr::DDS_CDR);
  cdr.read_encapsulation();
  cdr >> s.writer_id() >> s.seq() >> s.send_time_ns() >> s.payload();
}
size_t hand_write(const Avionics::FlightState& f, char* buf, size_t cap) {
  check_flight_state(f, static_cast<uint32_t>(f.phase()));
  FastBuffer fb(buf, cap);
  Cdr cdr(fb, Cdr::DEFAULT_ENDIAN, Cdr::DDS_CDR);
  cdr.serialize_encapsulation();
  cdr << f.aircraft_id() << f.callsign() << f.timestamp_ns() << f.position().latitude_deg()
      << f.position().longitude_deg() << f.position().altitude_m() << f.heading_deg()
      << f.ground_speed_mps() << f.vertical_speed_mps() << static_cast<uint32_t>(f.phase())
      << static_cast<uint8_t>(f.status());
  return cdr.getSerializedDataLength();
}
void hand_read(Avionics::FlightState& f, char* buf, size_t len) {
  FastBuffer fb(buf, len);
  Cdr cdr(fb, Cdr::DEFAULT_ENDIAN, Cdr::DDS_CDR);
  cdr.read_encapsulation();
  uint32_t phase = 0;
  uint8_t status = 0;
  cdr >> f.aircraft_id() >> f.callsign() >> f.timestamp_ns() >> f.position().latitude_deg() >>
      f.position().longitude_deg() >> f.position().altitude_m() >> f.heading_deg() >>
      f.ground_speed_mps() >> f.vertical_speed_mps() >> phase >> status;
  check_flight_state(f, phase);
  f.phase(static_cast<Avionics::FlightPhase>(phase));
  f.status(static_cast<Avionics::SystemStatus>(status));
}

template <class T>
void BM_hand_serialize(benchmark::State& state, T sample) {
  std::vector<char> slot(64 * 1024);
  for (auto _ : state) {
    benchmark::DoNotOptimize(hand_write(sample, slot.data(), slot.size()));
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(spindle::cdr::serialized_size(sample)));
}
template <class T>
void BM_generated_serialize(benchmark::State& state, T sample) {
  std::vector<std::byte> slot(64 * 1024);
  for (auto _ : state) {
    auto r = spindle::cdr::serialize(sample, std::span<std::byte>(slot));
    benchmark::DoNotOptimize(r.size);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(spindle::cdr::serialized_size(sample)));
}
template <class T>
void BM_hand_deserialize(benchmark::State& state, T sample) {
  std::vector<char> slot(64 * 1024);
  const size_t len = hand_write(sample, slot.data(), slot.size());
  T out;
  for (auto _ : state) {
    hand_read(out, slot.data(), len);
    benchmark::DoNotOptimize(out);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(len));
}
template <class T>
void BM_generated_deserialize(benchmark::State& state, T sample) {
  std::vector<std::byte> bytes;
  if (!spindle::cdr::serialize(sample, bytes).ok()) state.SkipWithError("serialize failed");
  T out;
  for (auto _ : state) {
    auto r = spindle::cdr::deserialize(std::span<const std::byte>(bytes), out);
    benchmark::DoNotOptimize(r.size);
    benchmark::DoNotOptimize(out);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(bytes.size()));
}

// Records each run's time so that ratios can be printed after the table.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const auto& r : runs) {
      // One figure per case: the median when repetitions are aggregated, else the run.
      if (r.run_type == Run::RT_Iteration && r.repetitions <= 1) {
        times_[r.run_name.str()] = r.GetAdjustedCPUTime();
      } else if (r.run_type == Run::RT_Aggregate && r.aggregate_name == "median") {
        times_[r.run_name.str()] = r.GetAdjustedCPUTime();
      }
    }
  }
  [[nodiscard]] const std::map<std::string, double>& times() const { return times_; }

 private:
  std::map<std::string, double> times_;
};

}  // namespace

int main(int argc, char** argv) {
  bool smoke = false;
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--smoke") == 0) {
      smoke = true;
    } else {
      args.push_back(argv[i]);
    }
  }
  const auto seq = make_sequence();
  const auto fs = make_flight_state();
  benchmark::RegisterBenchmark("serialize/Sequence10KB/hand", BM_hand_serialize<Bench::Sequence>,
                               seq);
  benchmark::RegisterBenchmark("serialize/Sequence10KB/generated",
                               BM_generated_serialize<Bench::Sequence>, seq);
  benchmark::RegisterBenchmark("deserialize/Sequence10KB/hand",
                               BM_hand_deserialize<Bench::Sequence>, seq);
  benchmark::RegisterBenchmark("deserialize/Sequence10KB/generated",
                               BM_generated_deserialize<Bench::Sequence>, seq);
  benchmark::RegisterBenchmark("serialize/FlightState/hand",
                               BM_hand_serialize<Avionics::FlightState>, fs);
  benchmark::RegisterBenchmark("serialize/FlightState/generated",
                               BM_generated_serialize<Avionics::FlightState>, fs);
  benchmark::RegisterBenchmark("deserialize/FlightState/hand",
                               BM_hand_deserialize<Avionics::FlightState>, fs);
  benchmark::RegisterBenchmark("deserialize/FlightState/generated",
                               BM_generated_deserialize<Avionics::FlightState>, fs);

  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  for (const auto& [name, t] : reporter.times()) {
    const auto pos = name.rfind("/generated");
    if (pos == std::string::npos) continue;
    const std::string base = name.substr(0, pos);
    const auto hand = reporter.times().find(base + "/hand");
    if (hand == reporter.times().end() || hand->second <= 0) continue;
    const double ratio = t / hand->second;
    std::printf("ratio %-28s generated/hand = %.3f%s\n", base.c_str(), ratio,
                ratio <= 1.10 ? "" : "  (above the 1.10 target)");
  }
  benchmark::Shutdown();
  (void)smoke;  // a smoke run only proves the tool works; ratios are not judged there
  return 0;
}
