// Spindle DDS demo. Until the DCPS runtime lands this shows the first thing a user touches:
// the avionics types of idl/ compiled by idlc, each sample serialized into a
// pre-allocated slot as the runtime will do, decoded back and compared, in both byte
// orders, with its DDS key hash.
#include <spindle/cdr/serialize.hpp>
#include <spindle/topic_traits.hpp>

#include <array>
#include <cstdio>
#include <iostream>
#include <span>

#include "Sequence.hpp"
#include "ShapeType.hpp"
#include "avionics.hpp"

namespace {

std::string hex(std::span<const uint8_t> bytes) {
  std::string out;
  char buf[4];
  for (auto b : bytes) {
    std::snprintf(buf, sizeof buf, "%02x", b);
    out += buf;
  }
  return out;
}

template <class T>
bool round_trip(const T& sample) {
  using traits = spindle::topic_traits<T>;
  std::cout << "\n"
            << traits::type_name << (traits::is_keyed ? " (keyed)" : "") << "\n  " << sample
            << "\n";
  std::cout << "  max serialized size: ";
  if (traits::is_bounded) {
    std::cout << traits::max_serialized_size << " bytes\n";
  } else {
    std::cout << "unbounded\n";
  }
  bool ok = true;
  for (auto e : {spindle::cdr::Endianness::Big, spindle::cdr::Endianness::Little}) {
    std::array<std::byte, 4096> slot{};  // stands in for an SMC ring slot
    const auto w = spindle::cdr::serialize(sample, std::span<std::byte>(slot), e);
    T back;
    const auto r = spindle::cdr::deserialize(std::span<const std::byte>(slot.data(), w.size), back);
    const bool same = w.ok() && r.ok() && back == sample;
    std::cout << "  " << (e == spindle::cdr::Endianness::Big ? "CDR_BE" : "CDR_LE") << ": "
              << w.size << " bytes, decoded " << (same ? "identical" : "DIFFERENT") << "\n";
    ok = ok && same;
  }
  if (traits::is_keyed) {
    const auto kh = spindle::cdr::key_hash(sample);
    std::cout << "  key hash: " << hex(kh) << (traits::key_hash_is_md5 ? " (md5)" : "") << "\n";
  }
  return ok;
}

}  // namespace

int main() {
  std::cout << "Spindle DDS: idlc-generated avionics types, CDR round trip\n";
  Avionics::FlightState fs;
  fs.aircraft_id(42);
  fs.callsign("SPN042");
  fs.timestamp_ns(1'700'000'000'000'000'000ULL);
  fs.position(Avionics::Position(48.3538, 11.7861, 10668.0F));
  fs.heading_deg(271.5F);
  fs.ground_speed_mps(231.0F);
  fs.vertical_speed_mps(-1.5F);
  fs.phase(Avionics::FlightPhase::CRUISE);
  fs.status(Avionics::SystemStatus::AUTOPILOT_ENGAGED |
            Avionics::SystemStatus::AUTOTHROTTLE_ENGAGED);

  Avionics::AirData ad;
  ad.aircraft_id(42);
  ad.timestamp_ns(fs.timestamp_ns());
  ad.indicated_airspeed_mps(140.2F);
  ad.true_airspeed_mps(231.7F);
  ad.mach(0.78F);
  ad.static_pressure_pa(23842.0F);
  ad.total_air_temperature_k(244.1F);
  ad.angle_of_attack_deg(2.1F);
  ad.sideslip_deg(0.2F);

  Avionics::Navigation nav;
  nav.aircraft_id(42);
  nav.source(Avionics::NavSource::GPS);
  nav.timestamp_ns(fs.timestamp_ns());
  nav.fix().position(fs.position());
  nav.route({Avionics::Waypoint("MUN", Avionics::Position(48.35, 11.79, 453)),
             Avionics::Waypoint("KPT", Avionics::Position(47.95, 10.37, 0)),
             Avionics::Waypoint("ZRH", Avionics::Position(47.46, 8.55, 432))});
  nav.active_leg(1);

  ShapeType shape("BLUE", 10, 20, 30);

  const bool ok = round_trip(fs) && round_trip(ad) && round_trip(nav) && round_trip(shape);
  std::cout << "\n" << (ok ? "all samples round-tripped identically" : "ROUND TRIP FAILED") << "\n";
  return ok ? 0 : 1;
}
