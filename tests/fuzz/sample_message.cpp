// libFuzzer target for the DCPS message parser (dcps/wire.hpp): any bytes give a message or a
// reason, never a crash, a hang or an exception; a coherent set's messages each lie inside
// the set and are data, dispose or unregister, and re-appending them gives the same bytes.
//
// Threading: single-threaded (libFuzzer's).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "dcps/wire.hpp"

namespace dcps = spindle::dcps;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  std::string error;
  const auto p = dcps::parse(bytes, error);
  if (!p) {
    if (error.empty()) __builtin_trap();
    return 0;
  }
  if (p->header.kind != dcps::SampleKind::coherent_set) return 0;
  std::vector<dcps::ParsedSample> set;
  if (!dcps::parse_set(p->payload, set, error)) {
    if (error.rfind("coherent set message ", 0) != 0) __builtin_trap();
    return 0;
  }
  std::vector<std::byte> again;
  for (const auto& m : set) {
    const auto k = m.header.kind;
    if (k != dcps::SampleKind::data && k != dcps::SampleKind::dispose &&
        k != dcps::SampleKind::unregister)
      __builtin_trap();
    if (m.payload.data() < p->payload.data() ||
        m.payload.data() + m.payload.size() > p->payload.data() + p->payload.size())
      __builtin_trap();
    dcps::append_to_set(again, m.header, m.payload);
  }
  if (again.size() != p->payload.size() ||
      (!again.empty() && std::memcmp(again.data(), p->payload.data(), again.size()) != 0))
    __builtin_trap();
  return 0;
}
