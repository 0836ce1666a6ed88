// Generated from avionics.idl by idlc 0.1.0 (Spindle DDS) — do not edit.
#pragma once

#include <spindle/cdr/codec.hpp>
#include <spindle/reflect.hpp>
#include <spindle/topic_traits.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <iosfwd>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace Avionics {

inline constexpr int32_t MAX_CALLSIGN = static_cast<int32_t>(8LL);

inline constexpr int32_t MAX_WAYPOINTS = static_cast<int32_t>(64LL);

inline constexpr double FEET_PER_METER = 3.28084;

using Callsign = std::string;

enum class FlightPhase : uint32_t {
  PREFLIGHT = 0,
  TAXI = 1,
  TAKEOFF = 2,
  CLIMB = 3,
  CRUISE = 4,
  DESCENT = 5,
  APPROACH = 6,
  LANDING = 7,
};
std::ostream& operator<<(std::ostream& os, FlightPhase v);

enum class SystemStatus : uint8_t {
  AUTOPILOT_ENGAGED = uint8_t{1} << 0U,
  AUTOTHROTTLE_ENGAGED = uint8_t{1} << 1U,
  GEAR_DOWN = uint8_t{1} << 2U,
  FLAPS_EXTENDED = uint8_t{1} << 3U,
};
constexpr SystemStatus operator|(SystemStatus a, SystemStatus b) {
  return static_cast<SystemStatus>(static_cast<uint8_t>(a) | static_cast<uint8_t>(b));
}
constexpr SystemStatus operator&(SystemStatus a, SystemStatus b) {
  return static_cast<SystemStatus>(static_cast<uint8_t>(a) & static_cast<uint8_t>(b));
}
constexpr SystemStatus operator^(SystemStatus a, SystemStatus b) {
  return static_cast<SystemStatus>(static_cast<uint8_t>(a) ^ static_cast<uint8_t>(b));
}
constexpr SystemStatus operator~(SystemStatus a) { return static_cast<SystemStatus>(static_cast<uint8_t>(~static_cast<uint8_t>(a))); }
constexpr bool has(SystemStatus set, SystemStatus bit) { return (static_cast<uint8_t>(set) & static_cast<uint8_t>(bit)) != 0; }
std::ostream& operator<<(std::ostream& os, SystemStatus v);

class Position {
 public:
  Position() = default;
  Position(double latitude_deg, double longitude_deg, float altitude_m)
      : latitude_deg_(std::move(latitude_deg)),
        longitude_deg_(std::move(longitude_deg)),
        altitude_m_(std::move(altitude_m)) {}

  double latitude_deg() const { return latitude_deg_; }
  double& latitude_deg() { return latitude_deg_; }
  void latitude_deg(double value) { latitude_deg_ = value; }
  double longitude_deg() const { return longitude_deg_; }
  double& longitude_deg() { return longitude_deg_; }
  void longitude_deg(double value) { longitude_deg_ = value; }
  float altitude_m() const { return altitude_m_; }
  float& altitude_m() { return altitude_m_; }
  void altitude_m(float value) { altitude_m_ = value; }

  bool operator==(const Position&) const = default;

 private:
  double latitude_deg_{};
  double longitude_deg_{};
  float altitude_m_{};
};
std::ostream& operator<<(std::ostream& os, const Position& v);

class FlightState {
 public:
  FlightState() = default;
  FlightState(uint32_t aircraft_id, ::Avionics::Callsign callsign, uint64_t timestamp_ns, ::Avionics::Position position, float heading_deg, float ground_speed_mps, float vertical_speed_mps, ::Avionics::FlightPhase phase, ::Avionics::SystemStatus status)
      : aircraft_id_(std::move(aircraft_id)),
        callsign_(std::move(callsign)),
        timestamp_ns_(std::move(timestamp_ns)),
        position_(std::move(position)),
        heading_deg_(std::move(heading_deg)),
        ground_speed_mps_(std::move(ground_speed_mps)),
        vertical_speed_mps_(std::move(vertical_speed_mps)),
        phase_(std::move(phase)),
        status_(std::move(status)) {}

  uint32_t aircraft_id() const { return aircraft_id_; }
  uint32_t& aircraft_id() { return aircraft_id_; }
  void aircraft_id(uint32_t value) { aircraft_id_ = value; }
  const ::Avionics::Callsign& callsign() const { return callsign_; }
  ::Avionics::Callsign& callsign() { return callsign_; }
  void callsign(const ::Avionics::Callsign& value) { callsign_ = value; }
  void callsign(::Avionics::Callsign&& value) { callsign_ = std::move(value); }
  uint64_t timestamp_ns() const { return timestamp_ns_; }
  uint64_t& timestamp_ns() { return timestamp_ns_; }
  void timestamp_ns(uint64_t value) { timestamp_ns_ = value; }
  const ::Avionics::Position& position() const { return position_; }
  ::Avionics::Position& position() { return position_; }
  void position(const ::Avionics::Position& value) { position_ = value; }
  void position(::Avionics::Position&& value) { position_ = std::move(value); }
  float heading_deg() const { return heading_deg_; }
  float& heading_deg() { return heading_deg_; }
  void heading_deg(float value) { heading_deg_ = value; }
  float ground_speed_mps() const { return ground_speed_mps_; }
  float& ground_speed_mps() { return ground_speed_mps_; }
  void ground_speed_mps(float value) { ground_speed_mps_ = value; }
  float vertical_speed_mps() const { return vertical_speed_mps_; }
  float& vertical_speed_mps() { return vertical_speed_mps_; }
  void vertical_speed_mps(float value) { vertical_speed_mps_ = value; }
  ::Avionics::FlightPhase phase() const { return phase_; }
  ::Avionics::FlightPhase& phase() { return phase_; }
  void phase(::Avionics::FlightPhase value) { phase_ = value; }
  ::Avionics::SystemStatus status() const { return status_; }
  ::Avionics::SystemStatus& status() { return status_; }
  void status(::Avionics::SystemStatus value) { status_ = value; }

  bool operator==(const FlightState&) const = default;

 private:
  uint32_t aircraft_id_{};
  ::Avionics::Callsign callsign_{};
  uint64_t timestamp_ns_{};
  ::Avionics::Position position_{};
  float heading_deg_{};
  float ground_speed_mps_{};
  float vertical_speed_mps_{};
  ::Avionics::FlightPhase phase_{::Avionics::FlightPhase::PREFLIGHT};
  ::Avionics::SystemStatus status_{};
};
std::ostream& operator<<(std::ostream& os, const FlightState& v);

class AirData {
 public:
  AirData() = default;
  AirData(uint32_t aircraft_id, uint64_t timestamp_ns, float indicated_airspeed_mps, float true_airspeed_mps, float mach, float static_pressure_pa, float total_air_temperature_k, float angle_of_attack_deg, std::optional<float> sideslip_deg)
      : aircraft_id_(std::move(aircraft_id)),
        timestamp_ns_(std::move(timestamp_ns)),
        indicated_airspeed_mps_(std::move(indicated_airspeed_mps)),
        true_airspeed_mps_(std::move(true_airspeed_mps)),
        mach_(std::move(mach)),
        static_pressure_pa_(std::move(static_pressure_pa)),
        total_air_temperature_k_(std::move(total_air_temperature_k)),
        angle_of_attack_deg_(std::move(angle_of_attack_deg)),
        sideslip_deg_(std::move(sideslip_deg)) {}

  uint32_t aircraft_id() const { return aircraft_id_; }
  uint32_t& aircraft_id() { return aircraft_id_; }
  void aircraft_id(uint32_t value) { aircraft_id_ = value; }
  uint64_t timestamp_ns() const { return timestamp_ns_; }
  uint64_t& timestamp_ns() { return timestamp_ns_; }
  void timestamp_ns(uint64_t value) { timestamp_ns_ = value; }
  float indicated_airspeed_mps() const { return indicated_airspeed_mps_; }
  float& indicated_airspeed_mps() { return indicated_airspeed_mps_; }
  void indicated_airspeed_mps(float value) { indicated_airspeed_mps_ = value; }
  float true_airspeed_mps() const { return true_airspeed_mps_; }
  float& true_airspeed_mps() { return true_airspeed_mps_; }
  void true_airspeed_mps(float value) { true_airspeed_mps_ = value; }
  float mach() const { return mach_; }
  float& mach() { return mach_; }
  void mach(float value) { mach_ = value; }
  float static_pressure_pa() const { return static_pressure_pa_; }
  float& static_pressure_pa() { return static_pressure_pa_; }
  void static_pressure_pa(float value) { static_pressure_pa_ = value; }
  float total_air_temperature_k() const { return total_air_temperature_k_; }
  float& total_air_temperature_k() { return total_air_temperature_k_; }
  void total_air_temperature_k(float value) { total_air_temperature_k_ = value; }
  float angle_of_attack_deg() const { return angle_of_attack_deg_; }
  float& angle_of_attack_deg() { return angle_of_attack_deg_; }
  void angle_of_attack_deg(float value) { angle_of_attack_deg_ = value; }
  const std::optional<float>& sideslip_deg() const { return sideslip_deg_; }
  std::optional<float>& sideslip_deg() { return sideslip_deg_; }
  void sideslip_deg(const std::optional<float>& value) { sideslip_deg_ = value; }
  void sideslip_deg(std::optional<float>&& value) { sideslip_deg_ = std::move(value); }

  bool operator==(const AirData&) const = default;

 private:
  uint32_t aircraft_id_{};
  uint64_t timestamp_ns_{};
  float indicated_airspeed_mps_{};
  float true_airspeed_mps_{};
  float mach_{};
  float static_pressure_pa_{};
  float total_air_temperature_k_{};
  float angle_of_attack_deg_{};
  std::optional<float> sideslip_deg_{};
};
std::ostream& operator<<(std::ostream& os, const AirData& v);

enum class NavSource : uint32_t {
  GPS = 0,
  INERTIAL = 1,
  VOR_DME = 2,
  ILS = 3,
};
std::ostream& operator<<(std::ostream& os, NavSource v);

class Waypoint {
 public:
  Waypoint() = default;
  Waypoint(std::string ident, ::Avionics::Position position)
      : ident_(std::move(ident)),
        position_(std::move(position)) {}

  const std::string& ident() const { return ident_; }
  std::string& ident() { return ident_; }
  void ident(const std::string& value) { ident_ = value; }
  void ident(std::string&& value) { ident_ = std::move(value); }
  const ::Avionics::Position& position() const { return position_; }
  ::Avionics::Position& position() { return position_; }
  void position(const ::Avionics::Position& value) { position_ = value; }
  void position(::Avionics::Position&& value) { position_ = std::move(value); }

  bool operator==(const Waypoint&) const = default;

 private:
  std::string ident_{};
  ::Avionics::Position position_{};
};
std::ostream& operator<<(std::ostream& os, const Waypoint& v);

class NavFix {
  using _storage_t = std::variant<std::monostate, ::Avionics::Position, std::array<double, 2>, std::array<float, 2>>;

 public:
  NavFix() : _d_(::Avionics::NavSource::GPS), value_(std::in_place_index<1>) {}

  ::Avionics::NavSource _d() const { return _d_; }
  // Changing the discriminator may not change the selected member (BAD_PARAM).
  void _d(::Avionics::NavSource d) {
    if (_case_of(d) != _case_of(_d_)) {
      throw std::invalid_argument("Avionics::NavFix::_d: value selects another member");
    }
    _d_ = d;
  }

  const ::Avionics::Position& position() const { return _get<1>("position"); }
  ::Avionics::Position& position() { return _get<1>("position"); }
  void position(::Avionics::Position value, ::Avionics::NavSource d = ::Avionics::NavSource::GPS) {
    if (_case_of(d) != 0) throw std::invalid_argument("Avionics::NavFix::position: discriminator selects another member");
    _d_ = d;
    value_.template emplace<1>(std::move(value));
  }
  const std::array<double, 2>& bearing_and_distance() const { return _get<2>("bearing_and_distance"); }
  std::array<double, 2>& bearing_and_distance() { return _get<2>("bearing_and_distance"); }
  void bearing_and_distance(std::array<double, 2> value, ::Avionics::NavSource d = ::Avionics::NavSource::VOR_DME) {
    if (_case_of(d) != 1) throw std::invalid_argument("Avionics::NavFix::bearing_and_distance: discriminator selects another member");
    _d_ = d;
    value_.template emplace<2>(std::move(value));
  }
  const std::array<float, 2>& deviation_dots() const { return _get<3>("deviation_dots"); }
  std::array<float, 2>& deviation_dots() { return _get<3>("deviation_dots"); }
  void deviation_dots(std::array<float, 2> value, ::Avionics::NavSource d = ::Avionics::NavSource::ILS) {
    if (_case_of(d) != 2) throw std::invalid_argument("Avionics::NavFix::deviation_dots: discriminator selects another member");
    _d_ = d;
    value_.template emplace<3>(std::move(value));
  }

  bool operator==(const NavFix&) const = default;

  static constexpr int _case_of(::Avionics::NavSource d) {
    switch (d) {
      case ::Avionics::NavSource::GPS:
      case ::Avionics::NavSource::INERTIAL:
        return 0;
      case ::Avionics::NavSource::VOR_DME:
        return 1;
      case ::Avionics::NavSource::ILS:
        return 2;
      default:
        return -1;
    }
  }

 private:
  template <class> friend struct ::spindle::cdr::Codec;
  template <size_t I>
  const std::variant_alternative_t<I, _storage_t>& _get(const char* member) const {
    if (value_.index() != I) {
      throw std::logic_error(std::string("Avionics::NavFix::") + member + " is not the selected member");
    }
    return std::get<I>(value_);
  }
  template <size_t I>
  std::variant_alternative_t<I, _storage_t>& _get(const char* member) {
    std::as_const(*this).template _get<I>(member);
    return std::get<I>(value_);
  }

  ::Avionics::NavSource _d_{};
  _storage_t value_;
};
std::ostream& operator<<(std::ostream& os, const NavFix& v);

class Navigation {
 public:
  Navigation() = default;
  Navigation(uint32_t aircraft_id, ::Avionics::NavSource source, uint64_t timestamp_ns, ::Avionics::NavFix fix, std::vector<::Avionics::Waypoint> route, int16_t active_leg)
      : aircraft_id_(std::move(aircraft_id)),
        source_(std::move(source)),
        timestamp_ns_(std::move(timestamp_ns)),
        fix_(std::move(fix)),
        route_(std::move(route)),
        active_leg_(std::move(active_leg)) {}

  uint32_t aircraft_id() const { return aircraft_id_; }
  uint32_t& aircraft_id() { return aircraft_id_; }
  void aircraft_id(uint32_t value) { aircraft_id_ = value; }
  ::Avionics::NavSource source() const { return source_; }
  ::Avionics::NavSource& source() { return source_; }
  void source(::Avionics::NavSource value) { source_ = value; }
  uint64_t timestamp_ns() const { return timestamp_ns_; }
  uint64_t& timestamp_ns() { return timestamp_ns_; }
  void timestamp_ns(uint64_t value) { timestamp_ns_ = value; }
  const ::Avionics::NavFix& fix() const { return fix_; }
  ::Avionics::NavFix& fix() { return fix_; }
  void fix(const ::Avionics::NavFix& value) { fix_ = value; }
  void fix(::Avionics::NavFix&& value) { fix_ = std::move(value); }
  const std::vector<::Avionics::Waypoint>& route() const { return route_; }
  std::vector<::Avionics::Waypoint>& route() { return route_; }
  void route(const std::vector<::Avionics::Waypoint>& value) { route_ = value; }
  void route(std::vector<::Avionics::Waypoint>&& value) { route_ = std::move(value); }
  int16_t active_leg() const { return active_leg_; }
  int16_t& active_leg() { return active_leg_; }
  void active_leg(int16_t value) { active_leg_ = value; }

  bool operator==(const Navigation&) const = default;

 private:
  uint32_t aircraft_id_{};
  ::Avionics::NavSource source_{::Avionics::NavSource::GPS};
  uint64_t timestamp_ns_{};
  ::Avionics::NavFix fix_{};
  std::vector<::Avionics::Waypoint> route_{};
  int16_t active_leg_{static_cast<int16_t>(0LL)};
};
std::ostream& operator<<(std::ostream& os, const Navigation& v);

}  // namespace Avionics

namespace spindle::cdr {

template <>
struct Codec<::Avionics::FlightPhase> {
  static constexpr Extensibility kExtensibility = Extensibility::Final;
  static constexpr size_t kMinSize = sizeof(uint32_t);
  template <class W>
  static void write(W& w, ::Avionics::FlightPhase v) { w.prim(static_cast<uint32_t>(v)); }
  template <class W>
  static void write_key(W& w, ::Avionics::FlightPhase v) { write(w, v); }
  template <class R>
  static void read(R& r, ::Avionics::FlightPhase& v) {
    uint32_t raw = 0;
    r.get(raw);
    if (raw >= 8U) throw CodecError(Status::BadEnumerator, "Avionics::FlightPhase");
    v = static_cast<::Avionics::FlightPhase>(raw);
  }
  template <Encoding E = Encoding::Xcdr1>
  static constexpr size_t max_size(size_t off) { return max_size_at<Plain, uint32_t, E>(off); }
  static constexpr size_t key_max_size(size_t off) { return max_size(off); }
};

template <>
struct Codec<::Avionics::SystemStatus> {
  static constexpr Extensibility kExtensibility = Extensibility::Final;
  static constexpr size_t kMinSize = sizeof(uint8_t);
  template <class W>
  static void write(W& w, ::Avionics::SystemStatus v) { w.prim(static_cast<uint8_t>(v)); }
  template <class W>
  static void write_key(W& w, ::Avionics::SystemStatus v) { write(w, v); }
  template <class R>
  static void read(R& r, ::Avionics::SystemStatus& v) { v = read_bits<::Avionics::SystemStatus, uint8_t>(r, 8); }
  template <Encoding E = Encoding::Xcdr1>
  static constexpr size_t max_size(size_t off) { return max_size_at<Plain, uint8_t, E>(off); }
  static constexpr size_t key_max_size(size_t off) { return max_size(off); }
};

template <>
struct Codec<::Avionics::Position> {
  static constexpr Extensibility kExtensibility = Extensibility::Appendable;
  static constexpr uint8_t kRepresentations = 3;
  static constexpr Encoding kEncoding = Encoding::Xcdr1;
  static constexpr size_t kMinSize = 20;
  template <class W>
  static void write(W& w, const ::Avionics::Position& v);
  template <class R>
  static void read(R& r, ::Avionics::Position& v);
  template <Encoding E = Encoding::Xcdr1>
  static constexpr size_t max_size(size_t off);
  template <class W>
  static void write_key(W& w, const ::Avionics::Position& v);
  static constexpr size_t key_max_size(size_t off);
};

template <>
struct Codec<::Avionics::FlightState> {
  static constexpr Extensibility kExtensibility = Extensibility::Appendable;
  static constexpr uint8_t kRepresentations = 3;
  static constexpr Encoding kEncoding = Encoding::Xcdr1;
  static constexpr size_t kMinSize = 53;
  template <class W>
  static void write(W& w, const ::Avionics::FlightState& v);
  template <class R>
  static void read(R& r, ::Avionics::FlightState& v);
  template <Encoding E = Encoding::Xcdr1>
  static constexpr size_t max_size(size_t off);
  template <class W>
  static void write_key(W& w, const ::Avionics::FlightState& v);
  static constexpr size_t key_max_size(size_t off);
};

template <>
struct Codec<::Avionics::AirData> {
  static constexpr Extensibility kExtensibility = Extensibility::Appendable;
  static constexpr uint8_t kRepresentations = 3;
  static constexpr Encoding kEncoding = Encoding::Xcdr2;
  static constexpr size_t kMinSize = 40;
  template <class W>
  static void write(W& w, const ::Avionics::AirData& v);
  template <class R>
  static void read(R& r, ::Avionics::AirData& v);
  template <Encoding E = Encoding::Xcdr1>
  static constexpr size_t max_size(size_t off);
  template <class W>
  static void write_key(W& w, const ::Avionics::AirData& v);
  static constexpr size_t key_max_size(size_t off);
};

template <>
struct Codec<::Avionics::NavSource> {
  static constexpr Extensibility kExtensibility = Extensibility::Final;
  static constexpr size_t kMinSize = sizeof(uint32_t);
  template <class W>
  static void write(W& w, ::Avionics::NavSource v) { w.prim(static_cast<uint32_t>(v)); }
  template <class W>
  static void write_key(W& w, ::Avionics::NavSource v) { write(w, v); }
  template <class R>
  static void read(R& r, ::Avionics::NavSource& v) {
    uint32_t raw = 0;
    r.get(raw);
    if (raw >= 4U) throw CodecError(Status::BadEnumerator, "Avionics::NavSource");
    v = static_cast<::Avionics::NavSource>(raw);
  }
  template <Encoding E = Encoding::Xcdr1>
  static constexpr size_t max_size(size_t off) { return max_size_at<Plain, uint32_t, E>(off); }
  static constexpr size_t key_max_size(size_t off) { return max_size(off); }
};

template <>
struct Codec<::Avionics::Waypoint> {
  static constexpr Extensibility kExtensibility = Extensibility::Appendable;
  static constexpr uint8_t kRepresentations = 3;
  static constexpr Encoding kEncoding = Encoding::Xcdr1;
  static constexpr size_t kMinSize = 24;
  template <class W>
  static void write(W& w, const ::Avionics::Waypoint& v);
  template <class R>
  static void read(R& r, ::Avionics::Waypoint& v);
  template <Encoding E = Encoding::Xcdr1>
  static constexpr size_t max_size(size_t off);
  template <class W>
  static void write_key(W& w, const ::Avionics::Waypoint& v);
  static constexpr size_t key_max_size(size_t off);
};

template <>
struct Codec<::Avionics::NavFix> {
  static constexpr Extensibility kExtensibility = Extensibility::Appendable;
  static constexpr uint8_t kRepresentations = 3;
  static constexpr Encoding kEncoding = Encoding::Xcdr1;
  static constexpr size_t kMinSize = 4;
  template <class W>
  static void write(W& w, const ::Avionics::NavFix& v);
  template <class R>
  static void read(R& r, ::Avionics::NavFix& v);
  template <Encoding E = Encoding::Xcdr1>
  static constexpr size_t max_size(size_t off);
  template <class W>
  static void write_key(W&, const ::Avionics::NavFix&) {}
  static constexpr size_t key_max_size(size_t off) { return off; }
};

template <>
struct Codec<::Avionics::Navigation> {
  static constexpr Extensibility kExtensibility = Extensibility::Appendable;
  static constexpr uint8_t kRepresentations = 3;
  static constexpr Encoding kEncoding = Encoding::Xcdr1;
  static constexpr size_t kMinSize = 26;
  template <class W>
  static void write(W& w, const ::Avionics::Navigation& v);
  template <class R>
  static void read(R& r, ::Avionics::Navigation& v);
  template <Encoding E = Encoding::Xcdr1>
  static constexpr size_t max_size(size_t off);
  template <class W>
  static void write_key(W& w, const ::Avionics::Navigation& v);
  static constexpr size_t key_max_size(size_t off);
};

template <class W>
void Codec<::Avionics::Position>::write(W& w, const ::Avionics::Position& v) {
  w.put(v.latitude_deg());
  w.put(v.longitude_deg());
  w.put(v.altitude_m());
}

template <class R>
void Codec<::Avionics::Position>::read(R& r, ::Avionics::Position& v) {
  r.get(v.latitude_deg());
  r.get(v.longitude_deg());
  r.get(v.altitude_m());
}

template <Encoding E>
constexpr size_t Codec<::Avionics::Position>::max_size(size_t off) {
  off = max_size_at<Plain, double, E>(off);
  off = max_size_at<Plain, double, E>(off);
  off = max_size_at<Plain, float, E>(off);
  return off;
}

template <class W>
void Codec<::Avionics::Position>::write_key(W& w, const ::Avionics::Position& v) {
  (void)w;
  (void)v;
}

constexpr size_t Codec<::Avionics::Position>::key_max_size(size_t off) {
  return off;
}

template <class W>
void Codec<::Avionics::FlightState>::write(W& w, const ::Avionics::FlightState& v) {
  w.put(v.aircraft_id());
  w.template put<Str<8>>(v.callsign(), "Avionics::FlightState.callsign");
  w.put(v.timestamp_ns());
  w.put(v.position());
  w.template check_range<float>(v.heading_deg(), 0.0F, 360.0F, "Avionics::FlightState.heading_deg");
  w.put(v.heading_deg());
  w.put(v.ground_speed_mps());
  w.put(v.vertical_speed_mps());
  w.put(v.phase());
  w.put(v.status());
}

template <class R>
void Codec<::Avionics::FlightState>::read(R& r, ::Avionics::FlightState& v) {
  r.get(v.aircraft_id());
  r.template get<Str<8>>(v.callsign());
  r.get(v.timestamp_ns());
  r.get(v.position());
  r.get(v.heading_deg());
  r.template check_range<float>(v.heading_deg(), 0.0F, 360.0F, "Avionics::FlightState.heading_deg");
  r.get(v.ground_speed_mps());
  r.get(v.vertical_speed_mps());
  r.get(v.phase());
  r.get(v.status());
}

template <Encoding E>
constexpr size_t Codec<::Avionics::FlightState>::max_size(size_t off) {
  off = max_size_at<Plain, uint32_t, E>(off);
  off = max_size_at<Str<8>, ::Avionics::Callsign, E>(off);
  off = max_size_at<Plain, uint64_t, E>(off);
  off = max_size_at<Plain, ::Avionics::Position, E>(off);
  off = max_size_at<Plain, float, E>(off);
  off = max_size_at<Plain, float, E>(off);
  off = max_size_at<Plain, float, E>(off);
  off = max_size_at<Plain, ::Avionics::FlightPhase, E>(off);
  off = max_size_at<Plain, ::Avionics::SystemStatus, E>(off);
  return off;
}

template <class W>
void Codec<::Avionics::FlightState>::write_key(W& w, const ::Avionics::FlightState& v) {
  w.put(v.aircraft_id());
}

constexpr size_t Codec<::Avionics::FlightState>::key_max_size(size_t off) {
  off = max_size_at<Plain, uint32_t>(off);
  return off;
}

template <class W>
void Codec<::Avionics::AirData>::write(W& w, const ::Avionics::AirData& v) {
  w.put(v.aircraft_id());
  w.put(v.timestamp_ns());
  w.put(v.indicated_airspeed_mps());
  w.put(v.true_airspeed_mps());
  w.put(v.mach());
  w.put(v.static_pressure_pa());
  w.put(v.total_air_temperature_k());
  w.template check_range<float>(v.angle_of_attack_deg(), -90.0F, 90.0F, "Avionics::AirData.angle_of_attack_deg");
  w.put(v.angle_of_attack_deg());
  w.template put_optional<Plain>(MemberId{8, false, false}, v.sideslip_deg());
}

template <class R>
void Codec<::Avionics::AirData>::read(R& r, ::Avionics::AirData& v) {
  r.get(v.aircraft_id());
  r.get(v.timestamp_ns());
  r.get(v.indicated_airspeed_mps());
  r.get(v.true_airspeed_mps());
  r.get(v.mach());
  r.get(v.static_pressure_pa());
  r.get(v.total_air_temperature_k());
  r.get(v.angle_of_attack_deg());
  r.template check_range<float>(v.angle_of_attack_deg(), -90.0F, 90.0F, "Avionics::AirData.angle_of_attack_deg");
  r.template get_optional<Plain>(8, v.sideslip_deg());
}

template <Encoding E>
constexpr size_t Codec<::Avionics::AirData>::max_size(size_t off) {
  off = max_size_at<Plain, uint32_t, E>(off);
  off = max_size_at<Plain, uint64_t, E>(off);
  off = max_size_at<Plain, float, E>(off);
  off = max_size_at<Plain, float, E>(off);
  off = max_size_at<Plain, float, E>(off);
  off = max_size_at<Plain, float, E>(off);
  off = max_size_at<Plain, float, E>(off);
  off = max_size_at<Plain, float, E>(off);
  off = max_optional_size_at<Plain, float, E>(off);
  return off;
}

template <class W>
void Codec<::Avionics::AirData>::write_key(W& w, const ::Avionics::AirData& v) {
  w.put(v.aircraft_id());
}

constexpr size_t Codec<::Avionics::AirData>::key_max_size(size_t off) {
  off = max_size_at<Plain, uint32_t>(off);
  return off;
}

template <class W>
void Codec<::Avionics::Waypoint>::write(W& w, const ::Avionics::Waypoint& v) {
  w.template put<Str<8>>(v.ident(), "Avionics::Waypoint.ident");
  w.put(v.position());
}

template <class R>
void Codec<::Avionics::Waypoint>::read(R& r, ::Avionics::Waypoint& v) {
  r.template get<Str<8>>(v.ident());
  r.get(v.position());
}

template <Encoding E>
constexpr size_t Codec<::Avionics::Waypoint>::max_size(size_t off) {
  off = max_size_at<Str<8>, std::string, E>(off);
  off = max_size_at<Plain, ::Avionics::Position, E>(off);
  return off;
}

template <class W>
void Codec<::Avionics::Waypoint>::write_key(W& w, const ::Avionics::Waypoint& v) {
  (void)w;
  (void)v;
}

constexpr size_t Codec<::Avionics::Waypoint>::key_max_size(size_t off) {
  return off;
}

template <class W>
void Codec<::Avionics::NavFix>::write(W& w, const ::Avionics::NavFix& v) {
  w.put(v._d_);
  switch (v.value_.index()) {
    case 1:
      w.put(std::get<1>(v.value_));
      break;
    case 2:
      w.template put<Arr<>>(std::get<2>(v.value_));
      break;
    case 3:
      w.template put<Arr<>>(std::get<3>(v.value_));
      break;
    default:
      break;
  }
}

template <class R>
void Codec<::Avionics::NavFix>::read(R& r, ::Avionics::NavFix& v) {
  r.get(v._d_);
  switch (::Avionics::NavFix::_case_of(v._d_)) {
    case 0:
      r.get(v.value_.template emplace<1>());
      break;
    case 1:
      r.template get<Arr<>>(v.value_.template emplace<2>());
      break;
    case 2:
      r.template get<Arr<>>(v.value_.template emplace<3>());
      break;
    default:
      v.value_.template emplace<0>();
  }
}

template <Encoding E>
constexpr size_t Codec<::Avionics::NavFix>::max_size(size_t off) {
  off = max_size_at<Plain, ::Avionics::NavSource, E>(off);
  size_t end = off;
  end = std::max(end, max_size_at<Plain, ::Avionics::Position, E>(off));
  end = std::max(end, max_size_at<Arr<>, std::array<double, 2>, E>(off));
  end = std::max(end, max_size_at<Arr<>, std::array<float, 2>, E>(off));
  return end;
}

template <class W>
void Codec<::Avionics::Navigation>::write(W& w, const ::Avionics::Navigation& v) {
  w.put(v.aircraft_id());
  w.put(v.source());
  w.put(v.timestamp_ns());
  w.put(v.fix());
  w.template put<Seq<64>>(v.route(), "Avionics::Navigation.route");
  w.put(v.active_leg());
}

template <class R>
void Codec<::Avionics::Navigation>::read(R& r, ::Avionics::Navigation& v) {
  r.get(v.aircraft_id());
  r.get(v.source());
  r.get(v.timestamp_ns());
  r.get(v.fix());
  r.template get<Seq<64>>(v.route());
  r.get(v.active_leg());
}

template <Encoding E>
constexpr size_t Codec<::Avionics::Navigation>::max_size(size_t off) {
  off = max_size_at<Plain, uint32_t, E>(off);
  off = max_size_at<Plain, ::Avionics::NavSource, E>(off);
  off = max_size_at<Plain, uint64_t, E>(off);
  off = max_size_at<Plain, ::Avionics::NavFix, E>(off);
  off = max_size_at<Seq<64>, std::vector<::Avionics::Waypoint>, E>(off);
  off = max_size_at<Plain, int16_t, E>(off);
  return off;
}

template <class W>
void Codec<::Avionics::Navigation>::write_key(W& w, const ::Avionics::Navigation& v) {
  w.put(v.aircraft_id());
  w.put(v.source());
}

constexpr size_t Codec<::Avionics::Navigation>::key_max_size(size_t off) {
  off = max_size_at<Plain, uint32_t>(off);
  off = max_size_at<Plain, ::Avionics::NavSource>(off);
  return off;
}

}  // namespace spindle::cdr

namespace spindle {

template <>
struct topic_traits<::Avionics::Position> : topic_traits_base<::Avionics::Position> {
  static constexpr std::string_view type_name = "Avionics::Position";
  static constexpr bool is_keyed = false;
  static constexpr size_t key_count = 0;
};

template <>
struct topic_traits<::Avionics::FlightState> : topic_traits_base<::Avionics::FlightState> {
  static constexpr std::string_view type_name = "Avionics::FlightState";
  static constexpr bool is_keyed = true;
  static constexpr size_t key_count = 1;
};

template <>
struct topic_traits<::Avionics::AirData> : topic_traits_base<::Avionics::AirData> {
  static constexpr std::string_view type_name = "Avionics::AirData";
  static constexpr bool is_keyed = true;
  static constexpr size_t key_count = 1;
};

template <>
struct topic_traits<::Avionics::Waypoint> : topic_traits_base<::Avionics::Waypoint> {
  static constexpr std::string_view type_name = "Avionics::Waypoint";
  static constexpr bool is_keyed = false;
  static constexpr size_t key_count = 0;
};

template <>
struct topic_traits<::Avionics::NavFix> : topic_traits_base<::Avionics::NavFix> {
  static constexpr std::string_view type_name = "Avionics::NavFix";
  static constexpr bool is_keyed = false;
  static constexpr size_t key_count = 0;
};

template <>
struct topic_traits<::Avionics::Navigation> : topic_traits_base<::Avionics::Navigation> {
  static constexpr std::string_view type_name = "Avionics::Navigation";
  static constexpr bool is_keyed = true;
  static constexpr size_t key_count = 2;
};

}  // namespace spindle

namespace spindle::reflect {

template <>
struct Reflect<::Avionics::Position> {
  static const StructInfo& info();
};

template <>
struct Reflect<::Avionics::FlightState> {
  static const StructInfo& info();
};

template <>
struct Reflect<::Avionics::AirData> {
  static const StructInfo& info();
};

template <>
struct Reflect<::Avionics::Waypoint> {
  static const StructInfo& info();
};

template <>
struct Reflect<::Avionics::Navigation> {
  static const StructInfo& info();
};

}  // namespace spindle::reflect
