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

