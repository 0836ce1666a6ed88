// Generated from avionics.idl by idlc 0.1.0 (Spindle DDS) — do not edit.
#include "avionics.hpp"

#include <spindle/print.hpp>

#include <ostream>

namespace Avionics {

std::ostream& operator<<(std::ostream& os, ::Avionics::FlightPhase v) {
  switch (v) {
    case ::Avionics::FlightPhase::PREFLIGHT:
      return os << "PREFLIGHT";
    case ::Avionics::FlightPhase::TAXI:
      return os << "TAXI";
    case ::Avionics::FlightPhase::TAKEOFF:
      return os << "TAKEOFF";
    case ::Avionics::FlightPhase::CLIMB:
      return os << "CLIMB";
    case ::Avionics::FlightPhase::CRUISE:
      return os << "CRUISE";
    case ::Avionics::FlightPhase::DESCENT:
      return os << "DESCENT";
    case ::Avionics::FlightPhase::APPROACH:
      return os << "APPROACH";
    case ::Avionics::FlightPhase::LANDING:
      return os << "LANDING";
  }
  return os << "FlightPhase(" << static_cast<uint32_t>(v) << ')';
}

}  // namespace Avionics

namespace Avionics {

std::ostream& operator<<(std::ostream& os, ::Avionics::SystemStatus v) {
  const char* sep = "";
  os << '{';
  if (has(v, ::Avionics::SystemStatus::AUTOPILOT_ENGAGED)) {
    os << sep << "AUTOPILOT_ENGAGED";
    sep = "|";
  }
  if (has(v, ::Avionics::SystemStatus::AUTOTHROTTLE_ENGAGED)) {
    os << sep << "AUTOTHROTTLE_ENGAGED";
    sep = "|";
  }
  if (has(v, ::Avionics::SystemStatus::GEAR_DOWN)) {
    os << sep << "GEAR_DOWN";
    sep = "|";
  }
  if (has(v, ::Avionics::SystemStatus::FLAPS_EXTENDED)) {
    os << sep << "FLAPS_EXTENDED";
    sep = "|";
  }
  return os << '}';
}

}  // namespace Avionics

namespace Avionics {

std::ostream& operator<<(std::ostream& os, const ::Avionics::Position& v) {
  os << "Avionics::Position{";
  spindle::print_member(os, "latitude_deg", v.latitude_deg(), true);
  spindle::print_member(os, "longitude_deg", v.longitude_deg());
  spindle::print_member(os, "altitude_m", v.altitude_m());
  return os << '}';
}

}  // namespace Avionics

namespace Avionics {

std::ostream& operator<<(std::ostream& os, const ::Avionics::FlightState& v) {
  os << "Avionics::FlightState{";
  spindle::print_member(os, "aircraft_id", v.aircraft_id(), true);
  spindle::print_member(os, "callsign", v.callsign());
  spindle::print_member(os, "timestamp_ns", v.timestamp_ns());
  spindle::print_member(os, "position", v.position());
  spindle::print_member(os, "heading_deg", v.heading_deg());
  spindle::print_member(os, "ground_speed_mps", v.ground_speed_mps());
  spindle::print_member(os, "vertical_speed_mps", v.vertical_speed_mps());
  spindle::print_member(os, "phase", v.phase());
  spindle::print_member(os, "status", v.status());
  return os << '}';
}

}  // namespace Avionics

namespace Avionics {

std::ostream& operator<<(std::ostream& os, const ::Avionics::AirData& v) {
  os << "Avionics::AirData{";
  spindle::print_member(os, "aircraft_id", v.aircraft_id(), true);
  spindle::print_member(os, "timestamp_ns", v.timestamp_ns());
  spindle::print_member(os, "indicated_airspeed_mps", v.indicated_airspeed_mps());
  spindle::print_member(os, "true_airspeed_mps", v.true_airspeed_mps());
  spindle::print_member(os, "mach", v.mach());
  spindle::print_member(os, "static_pressure_pa", v.static_pressure_pa());
  spindle::print_member(os, "total_air_temperature_k", v.total_air_temperature_k());
  spindle::print_member(os, "angle_of_attack_deg", v.angle_of_attack_deg());
  spindle::print_member(os, "sideslip_deg", v.sideslip_deg());
  return os << '}';
}

}  // namespace Avionics

namespace Avionics {

std::ostream& operator<<(std::ostream& os, ::Avionics::NavSource v) {
  switch (v) {
    case ::Avionics::NavSource::GPS:
      return os << "GPS";
    case ::Avionics::NavSource::INERTIAL:
      return os << "INERTIAL";
    case ::Avionics::NavSource::VOR_DME:
      return os << "VOR_DME";
    case ::Avionics::NavSource::ILS:
      return os << "ILS";
  }
  return os << "NavSource(" << static_cast<uint32_t>(v) << ')';
}

}  // namespace Avionics

namespace Avionics {

std::ostream& operator<<(std::ostream& os, const ::Avionics::Waypoint& v) {
  os << "Avionics::Waypoint{";
  spindle::print_member(os, "ident", v.ident(), true);
  spindle::print_member(os, "position", v.position());
  return os << '}';
}

}  // namespace Avionics

namespace Avionics {

std::ostream& operator<<(std::ostream& os, const ::Avionics::NavFix& v) {
  os << "Avionics::NavFix{_d: ";
  spindle::print_value(os, v._d());
  switch (::Avionics::NavFix::_case_of(v._d())) {
    case 0:
      spindle::print_member(os, "position", v.position());
      break;
    case 1:
      spindle::print_member(os, "bearing_and_distance", v.bearing_and_distance());
      break;
    case 2:
      spindle::print_member(os, "deviation_dots", v.deviation_dots());
      break;
    default:
      break;
  }
  return os << '}';
}

}  // namespace Avionics

namespace Avionics {

std::ostream& operator<<(std::ostream& os, const ::Avionics::Navigation& v) {
  os << "Avionics::Navigation{";
  spindle::print_member(os, "aircraft_id", v.aircraft_id(), true);
  spindle::print_member(os, "source", v.source());
  spindle::print_member(os, "timestamp_ns", v.timestamp_ns());
  spindle::print_member(os, "fix", v.fix());
  spindle::print_member(os, "route", v.route());
  spindle::print_member(os, "active_leg", v.active_leg());
  return os << '}';
}

}  // namespace Avionics

const spindle::reflect::StructInfo& spindle::reflect::Reflect<::Avionics::Position>::info() {
  static const Member members[] = {
      {"latitude_deg", Kind::floating, [](const void* p) { return value_of(static_cast<const ::Avionics::Position*>(p)->latitude_deg()); }, nullptr, nullptr, {}},
      {"longitude_deg", Kind::floating, [](const void* p) { return value_of(static_cast<const ::Avionics::Position*>(p)->longitude_deg()); }, nullptr, nullptr, {}},
      {"altitude_m", Kind::floating, [](const void* p) { return value_of(static_cast<const ::Avionics::Position*>(p)->altitude_m()); }, nullptr, nullptr, {}},
  };
  static const StructInfo info{"Avionics::Position", members};
  return info;
}

const spindle::reflect::StructInfo& spindle::reflect::Reflect<::Avionics::FlightState>::info() {
  static constexpr Enumerator e7[] = {{"PREFLIGHT", 0}, {"TAXI", 1}, {"TAKEOFF", 2}, {"CLIMB", 3}, {"CRUISE", 4}, {"DESCENT", 5}, {"APPROACH", 6}, {"LANDING", 7}};
  static const Member members[] = {
      {"aircraft_id", Kind::unsigned_int, [](const void* p) { return value_of(static_cast<const ::Avionics::FlightState*>(p)->aircraft_id()); }, nullptr, nullptr, {}},
      {"callsign", Kind::string, [](const void* p) { return value_of(static_cast<const ::Avionics::FlightState*>(p)->callsign()); }, nullptr, nullptr, {}},
      {"timestamp_ns", Kind::unsigned_int, [](const void* p) { return value_of(static_cast<const ::Avionics::FlightState*>(p)->timestamp_ns()); }, nullptr, nullptr, {}},
      {"position", Kind::structure, nullptr, &Reflect<::Avionics::Position>::info, [](const void* p) { return object_of(static_cast<const ::Avionics::FlightState*>(p)->position()); }, {}},
      {"heading_deg", Kind::floating, [](const void* p) { return value_of(static_cast<const ::Avionics::FlightState*>(p)->heading_deg()); }, nullptr, nullptr, {}},
      {"ground_speed_mps", Kind::floating, [](const void* p) { return value_of(static_cast<const ::Avionics::FlightState*>(p)->ground_speed_mps()); }, nullptr, nullptr, {}},
      {"vertical_speed_mps", Kind::floating, [](const void* p) { return value_of(static_cast<const ::Avionics::FlightState*>(p)->vertical_speed_mps()); }, nullptr, nullptr, {}},
      {"phase", Kind::enumeration, [](const void* p) { return value_of(static_cast<const ::Avionics::FlightState*>(p)->phase()); }, nullptr, nullptr, e7},
      {"status", Kind::other, nullptr, nullptr, nullptr, {}},
  };
  static const StructInfo info{"Avionics::FlightState", members};
  return info;
}

const spindle::reflect::StructInfo& spindle::reflect::Reflect<::Avionics::AirData>::info() {
  static const Member members[] = {
      {"aircraft_id", Kind::unsigned_int, [](const void* p) { return value_of(static_cast<const ::Avionics::AirData*>(p)->aircraft_id()); }, nullptr, nullptr, {}},
      {"timestamp_ns", Kind::unsigned_int, [](const void* p) { return value_of(static_cast<const ::Avionics::AirData*>(p)->timestamp_ns()); }, nullptr, nullptr, {}},
      {"indicated_airspeed_mps", Kind::floating, [](const void* p) { return value_of(static_cast<const ::Avionics::AirData*>(p)->indicated_airspeed_mps()); }, nullptr, nullptr, {}},
      {"true_airspeed_mps", Kind::floating, [](const void* p) { return value_of(static_cast<const ::Avionics::AirData*>(p)->true_airspeed_mps()); }, nullptr, nullptr, {}},
      {"mach", Kind::floating, [](const void* p) { return value_of(static_cast<const ::Avionics::AirData*>(p)->mach()); }, nullptr, nullptr, {}},
      {"static_pressure_pa", Kind::floating, [](const void* p) { return value_of(static_cast<const ::Avionics::AirData*>(p)->static_pressure_pa()); }, nullptr, nullptr, {}},
      {"total_air_temperature_k", Kind::floating, [](const void* p) { return value_of(static_cast<const ::Avionics::AirData*>(p)->total_air_temperature_k()); }, nullptr, nullptr, {}},
      {"angle_of_attack_deg", Kind::floating, [](const void* p) { return value_of(static_cast<const ::Avionics::AirData*>(p)->angle_of_attack_deg()); }, nullptr, nullptr, {}},
      {"sideslip_deg", Kind::floating, [](const void* p) { return value_of(static_cast<const ::Avionics::AirData*>(p)->sideslip_deg()); }, nullptr, nullptr, {}},
  };
  static const StructInfo info{"Avionics::AirData", members};
  return info;
}

const spindle::reflect::StructInfo& spindle::reflect::Reflect<::Avionics::Waypoint>::info() {
  static const Member members[] = {
      {"ident", Kind::string, [](const void* p) { return value_of(static_cast<const ::Avionics::Waypoint*>(p)->ident()); }, nullptr, nullptr, {}},
      {"position", Kind::structure, nullptr, &Reflect<::Avionics::Position>::info, [](const void* p) { return object_of(static_cast<const ::Avionics::Waypoint*>(p)->position()); }, {}},
  };
  static const StructInfo info{"Avionics::Waypoint", members};
  return info;
}

const spindle::reflect::StructInfo& spindle::reflect::Reflect<::Avionics::Navigation>::info() {
  static constexpr Enumerator e1[] = {{"GPS", 0}, {"INERTIAL", 1}, {"VOR_DME", 2}, {"ILS", 3}};
  static const Member members[] = {
      {"aircraft_id", Kind::unsigned_int, [](const void* p) { return value_of(static_cast<const ::Avionics::Navigation*>(p)->aircraft_id()); }, nullptr, nullptr, {}},
      {"source", Kind::enumeration, [](const void* p) { return value_of(static_cast<const ::Avionics::Navigation*>(p)->source()); }, nullptr, nullptr, e1},
      {"timestamp_ns", Kind::unsigned_int, [](const void* p) { return value_of(static_cast<const ::Avionics::Navigation*>(p)->timestamp_ns()); }, nullptr, nullptr, {}},
      {"fix", Kind::other, nullptr, nullptr, nullptr, {}},
      {"route", Kind::other, nullptr, nullptr, nullptr, {}},
      {"active_leg", Kind::signed_int, [](const void* p) { return value_of(static_cast<const ::Avionics::Navigation*>(p)->active_leg()); }, nullptr, nullptr, {}},
  };
  static const StructInfo info{"Avionics::Navigation", members};
  return info;
}

