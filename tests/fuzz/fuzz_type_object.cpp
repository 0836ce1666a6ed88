// libFuzzer target: untrusted TypeInformation and TypeMapping bytes into load_type_info. The
// input is a 2-byte little-endian length n, n bytes of TypeInformation, then the TypeMapping
// (seeded with Cyclone DDS idlc's bytes, interop/typeinfo/cyclone). What loads must write
// back (make_type_info) to bytes that load again and write the same: a fixed point; and it
// prints as IDL (to_idl, what `spindle typeof` shows) or is refused as having none.
#include <spindle/types/to_idl.hpp>
#include <spindle/types/type_object.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <stdexcept>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const size_t n = data[0] | (size_t{data[1]} << 8);
  if (n > size - 2) return 0;
  const auto* bytes = reinterpret_cast<const std::byte*>(data + 2);
  const std::span<const std::byte> info(bytes, n);
  const std::span<const std::byte> map(bytes + n, size - 2 - n);
  spindle::types::TypeLibrary lib;
  const spindle::types::Type* root = nullptr;
  try {
    root = spindle::types::load_type_info(lib, info, map);
  } catch (const spindle::types::TypeObjectError&) {
    return 0;
  }
  const auto once = spindle::types::make_type_info(*root);
  spindle::types::TypeLibrary again;
  const auto* back = spindle::types::load_type_info(again, once.information, once.mapping);
  const auto twice = spindle::types::make_type_info(*back);
  if (twice.information != once.information || twice.mapping != once.mapping) std::abort();
  try {
    (void)spindle::types::to_idl(*root);
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
