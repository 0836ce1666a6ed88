// libFuzzer target for the beacon's datagram parser (group/beacon.hpp): any bytes give a
// message or an error naming what is wrong, never a crash or an exception. An accepted
// datagram encodes back to the same bytes.
//
// Threading: single-threaded (libFuzzer's).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "group/beacon.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span bytes(reinterpret_cast<const std::byte*>(data), size);
  std::string error;
  const auto m = spindle::group::parse_beacon(bytes, error);
  if (!m) {
    if (error.empty()) __builtin_trap();
    return 0;
  }
  const auto again = spindle::group::encode(*m);
  if (again.size() != size || !std::equal(again.begin(), again.end(), bytes.begin()))
    __builtin_trap();
  return 0;
}
