// libFuzzer target: untrusted bytes into every generated deserializer, in XCDR1 and XCDR2
// (the encapsulation header says which). The first byte picks the type: below 0xE0 modulo
// 17, from 0xE0 the types of interop/cdr/cyclone (seeded with Cyclone DDS's XCDR2 vectors).
// Whatever decodes must re-encode in the same encoding, and that must be a fixed point.
#include <spindle/cdr/serialize.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "Vectors.hpp"
#include "all_constructs.hpp"
#include "avionics.hpp"
#include "gaps.hpp"

namespace {

template <class T>
void check(std::span<const std::byte> in) {
  T sample;
  if (!spindle::cdr::deserialize(in, sample).ok()) return;
  const auto enc = static_cast<uint8_t>(in[1]) >= 6 ? spindle::cdr::Encoding::Xcdr2
                                                    : spindle::cdr::Encoding::Xcdr1;
  const auto order = spindle::cdr::kNativeEndianness;
  std::vector<std::byte> once;
  std::vector<std::byte> twice;
  // Decoded values may still be unencodable (e.g. out of @range is checked on both sides,
  // so this must succeed); a failure here is a codec asymmetry.
  if (!spindle::cdr::serialize(sample, once, order, enc).ok()) std::abort();
  T back;
  if (!spindle::cdr::deserialize(std::span<const std::byte>(once), back).ok()) std::abort();
  if (!spindle::cdr::serialize(back, twice, order, enc).ok()) std::abort();
  if (once != twice) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const std::span<const std::byte> in(reinterpret_cast<const std::byte*>(data + 1), size - 1);
  if (data[0] >= 0xE0) {
    switch (data[0] % 6) {
      case 0:
        check<Xv::MutMix>(in);
        break;
      case 1:
        check<Xv::Seqs>(in);
        break;
      case 2:
        check<Xv::FinalOpt>(in);
        break;
      case 3:
        check<Xv::WithAU>(in);
        break;
      case 4:
        check<Xv::MutOpt>(in);
        break;
      default:
        check<Xv::Outer>(in);
        break;
    }
    return 0;
  }
  switch (data[0] % 17) {
    case 0:
      check<Test::Primitives>(in);
      break;
    case 1:
      check<Test::Strings>(in);
      break;
    case 2:
      check<Test::Collections>(in);
      break;
    case 3:
      check<Test::Derived>(in);
      break;
    case 4:
      check<Test::Annotated>(in);
      break;
    case 5:
      check<Test::Extensible>(in);
      break;
    case 6:
      check<Test::Outer>(in);
      break;
    case 7:
      check<Test::TreeNode>(in);
      break;
    case 8:
      check<Avionics::FlightState>(in);
      break;
    case 9:
      check<Avionics::Navigation>(in);
      break;
    case 10:
      check<Avionics::AirData>(in);
      break;
    case 11:
      check<Test::Reopened>(in);
      break;
    case 12:
      check<Gaps::Maps>(in);
      break;
    case 13:
      check<Gaps::BoundedMap>(in);
      break;
    case 14:
      check<Gaps::Bits>(in);
      break;
    case 15:
      check<Gaps::SeqKey>(in);
      break;
    default:
      check<Gaps::UnionKey>(in);
      break;
  }
  return 0;
}
