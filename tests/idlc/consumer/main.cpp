#include <spindle/cdr/serialize.hpp>

#include <cstdio>

#include "telemetry.hpp"

int main() {
  Telemetry::Reading r("pitot-1", 231.5, {1.0F, 2.0F});
  std::vector<std::byte> bytes;
  Telemetry::Reading back;
  const bool ok = spindle::cdr::serialize(r, bytes).ok() &&
                  spindle::cdr::deserialize(std::span<const std::byte>(bytes), back).ok() &&
                  back == r;
  std::printf("%s %s\n", spindle::topic_traits<Telemetry::Reading>::type_name.data(),
              ok ? "round trip ok" : "ROUND TRIP FAILED");
  return ok ? 0 : 1;
}
