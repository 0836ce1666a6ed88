// libFuzzer target: untrusted bytes into the dynamic decoder (types loaded from IDL at run
// time), checked against the generated decoder of the same type. The first byte picks the
// type as in cdr_deserialize (so its corpus seeds this one). Whatever either decoder accepts,
// the other must accept too, and both must write the same bytes back (but for NaN payloads);
// read as a serialized key (decode_key), the bytes are refused or give a key that writes back
// to itself; nothing may crash.
#include <spindle/cdr/serialize.hpp>
#include <spindle/types/dynamic_data.hpp>
#include <spindle/types/from_idl.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "Vectors.hpp"
#include "all_constructs.hpp"
#include "avionics.hpp"
#include "gaps.hpp"

namespace {

using namespace spindle;

const types::Type& type_named(const std::string& idl, const std::string& name) {
  static std::map<std::string, std::unique_ptr<types::TypeLibrary>> libs;
  auto& lib = libs[idl];
  if (!lib) {
    lib = std::make_unique<types::TypeLibrary>();
    const std::string path = std::string(SPINDLE_SOURCE_DIR) + "/" + idl;
    types::load_idl_file(*lib, path, {{path.substr(0, path.rfind('/'))}, {}});
  }
  const types::Type* t = lib->find(name);
  if (t == nullptr) std::abort();
  return *t;
}

// The same value with objects compared regardless of key order; strings keep their bytes
// (a decoded string need not be UTF-8, so no round trip through JSON text).
nlohmann::json unordered(const types::Json& v) {
  if (v.is_object()) {
    nlohmann::json o = nlohmann::json::object();
    for (const auto& item : v.items())
      o[item.key()] = unordered(item.value());
    return o;
  }
  if (v.is_array()) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& e : v)
      a.push_back(unordered(e));
    return a;
  }
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_number_float()) return v.get<double>();
  return nullptr;
}

template <class T>
void check(std::span<const std::byte> in, const std::string& idl, const std::string& name) {
  const types::Type& type = type_named(idl, name);
  T sample;
  const bool generated_ok = cdr::deserialize(in, sample).ok();
  types::Json json;
  bool dynamic_ok = true;
  try {
    json = types::decode(type, in);
  } catch (const types::DataError&) {
    dynamic_ok = false;
  }
  if (generated_ok != dynamic_ok) std::abort();
  // The same bytes as a serialized key (what an RTPS dispose carries, as the gateway reads
  // it): refused, or read into a key that writes back to the same key.
  const bool keyed = !types::key_paths(types::resolve(type)).empty();
  if (keyed) {
    try {
      const types::Json key = types::decode_key(type, in);
      const auto e = static_cast<uint8_t>(in[1]) > 3 ? cdr::Encoding::Xcdr2 : cdr::Encoding::Xcdr1;
      const types::Json again = types::decode_key(type, types::encode_key(type, key, e));
      if (types::key_hash(type, again) != types::key_hash(type, key)) std::abort();
    } catch (const types::DataError&) {
    }
  }
  // Read for its key alone (decode_key_of): whatever decode() accepts it accepts, with the
  // same key.
  if (dynamic_ok) {
    const types::Json key = types::decode_key_of(type, in);
    if (keyed && types::key_hash(type, key) != types::key_hash(type, json)) std::abort();
  }
  if (!generated_ok) return;
  const auto enc = static_cast<uint8_t>(in[1]) >= 6 ? cdr::Encoding::Xcdr2 : cdr::Encoding::Xcdr1;
  if (keyed) {
    const types::Json key = types::decode_key(type, types::encode_key(type, json, enc));
    if (types::key_hash(type, key) != types::key_hash(type, json)) std::abort();
  }
  std::vector<std::byte> generated;
  if (!cdr::serialize(sample, generated, cdr::kNativeEndianness, enc).ok()) std::abort();
  std::vector<std::byte> dynamic = types::encode(type, json, enc, cdr::kNativeEndianness);
  // Bytes may differ only where JSON cannot carry the bits (NaN payloads, long doubles that
  // are no canonical x87 value: all "NaN"), and in the order of map entries, which both
  // writers sort while the input need not be sorted.
  if (dynamic != generated && unordered(types::decode(type, dynamic)) != unordered(json)) {
    if (std::getenv("SPINDLE_FUZZ_DEBUG") != nullptr) {
      std::fprintf(stderr, "json: %s\n",
                   json.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
      for (const std::vector<std::byte>* bytes : {&generated, &dynamic}) {
        for (const std::byte b : *bytes)
          std::fprintf(stderr, "%02x", static_cast<unsigned>(b));
        std::fprintf(stderr, "\n");
      }
    }
    std::abort();
  }
}

const std::string kAll = "tests/idlc/idl/all_constructs.idl";
const std::string kGaps = "tests/idlc/idl/gaps.idl";
const std::string kAvionics = "idl/avionics.idl";
const std::string kVectors = "interop/cdr/cyclone/Vectors.idl";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const std::span<const std::byte> in(reinterpret_cast<const std::byte*>(data + 1), size - 1);
  if (data[0] >= 0xE0) {
    switch (data[0] % 6) {
      case 0:
        check<Xv::MutMix>(in, kVectors, "Xv::MutMix");
        break;
      case 1:
        check<Xv::Seqs>(in, kVectors, "Xv::Seqs");
        break;
      case 2:
        check<Xv::FinalOpt>(in, kVectors, "Xv::FinalOpt");
        break;
      case 3:
        check<Xv::WithAU>(in, kVectors, "Xv::WithAU");
        break;
      case 4:
        check<Xv::MutOpt>(in, kVectors, "Xv::MutOpt");
        break;
      default:
        check<Xv::Outer>(in, kVectors, "Xv::Outer");
        break;
    }
    return 0;
  }
  switch (data[0] % 17) {
    case 0:
      check<Test::Primitives>(in, kAll, "Test::Primitives");
      break;
    case 1:
      check<Test::Strings>(in, kAll, "Test::Strings");
      break;
    case 2:
      check<Test::Collections>(in, kAll, "Test::Collections");
      break;
    case 3:
      check<Test::Derived>(in, kAll, "Test::Derived");
      break;
    case 4:
      check<Test::Annotated>(in, kAll, "Test::Annotated");
      break;
    case 5:
      check<Test::Extensible>(in, kAll, "Test::Extensible");
      break;
    case 6:
      check<Test::Outer>(in, kAll, "Test::Outer");
      break;
    case 7:
      check<Test::TreeNode>(in, kAll, "Test::TreeNode");
      break;
    case 8:
      check<Avionics::FlightState>(in, kAvionics, "Avionics::FlightState");
      break;
    case 9:
      check<Avionics::Navigation>(in, kAvionics, "Avionics::Navigation");
      break;
    case 10:
      check<Avionics::AirData>(in, kAvionics, "Avionics::AirData");
      break;
    case 11:
      check<Test::Reopened>(in, kAll, "Test::Reopened");
      break;
    case 12:
      check<Gaps::Maps>(in, kGaps, "Gaps::Maps");
      break;
    case 13:
      check<Gaps::BoundedMap>(in, kGaps, "Gaps::BoundedMap");
      break;
    case 14:
      check<Gaps::Bits>(in, kGaps, "Gaps::Bits");
      break;
    case 15:
      check<Gaps::SeqKey>(in, kGaps, "Gaps::SeqKey");
      break;
    default:
      check<Gaps::UnionKey>(in, kGaps, "Gaps::UnionKey");
      break;
  }
  return 0;
}
